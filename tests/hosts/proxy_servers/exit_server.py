"""A "server" that exits at once with the code it is given (``python exit_server.py CODE``)."""

import sys

sys.exit(int(sys.argv[1]))
