"""Shell commands parsed into the files they read, write and upload and the hosts they reach.

:func:`parse_shell_command` walks a command as bash would run it (``_lex``, ``_syntax``, ``_walk``) and reads
each program's command line by its entry in one flat registry (``_registry``), which puts together the programs
each family module declares: built-ins, wrappers and interpreters (``_exec``), local file programs
(``_local``), network programs (``_network``), git (``_git``), service CLIs (``_services``) and package
managers (``_packages``). See docs/evidence.md, "Shell commands".
"""

from monitor.evidence._shell._walk import UNEXAMINED, ShellEffects, parse_shell_command

__all__ = ["ShellEffects", "UNEXAMINED", "parse_shell_command"]
