"""``python -m monitor``: the ``trifecta`` command line."""

from monitor.cli import main

if __name__ == "__main__":
    main()
