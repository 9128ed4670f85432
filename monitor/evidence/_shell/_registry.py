"""The shell parser's one registry of programs: a flat table from a program's name to its :class:`Program`.

Each family module declares its own programs only; this module puts the families together, once, and refuses
a name two entries claim, so every program has exactly one handler and the table a family exports holds only
that family's programs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType

from monitor.evidence._shell._exec import EXEC_PROGRAMS
from monitor.evidence._shell._git import GIT_PROGRAMS
from monitor.evidence._shell._local import LOCAL_PROGRAMS
from monitor.evidence._shell._network import NETWORK_PROGRAMS
from monitor.evidence._shell._packages import PACKAGE_PROGRAMS
from monitor.evidence._shell._program import Program
from monitor.evidence._shell._services import SERVICE_PROGRAMS

FAMILIES: Mapping[str, tuple[Program, ...]] = MappingProxyType(
    {
        "exec": EXEC_PROGRAMS,
        "git": GIT_PROGRAMS,
        "local": LOCAL_PROGRAMS,
        "network": NETWORK_PROGRAMS,
        "packages": PACKAGE_PROGRAMS,
        "services": SERVICE_PROGRAMS,
    }
)
"""Each family of programs, by name, as its module declares it."""


def build_registry(programs: Iterable[Program]) -> Mapping[str, Program]:
    """The table from each name to its program; a name claimed twice raises ValueError."""
    table: dict[str, Program] = {}
    for program in programs:
        for name in program.names:
            if name in table:
                raise ValueError(f"the shell program {name} has two handlers")
            table[name] = program
    return MappingProxyType(table)


REGISTRY = build_registry(program for family in FAMILIES.values() for program in family)
"""Every program the shell parser knows, by name."""
