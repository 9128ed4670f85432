"""One entry of the shell parser's registry: the names a program goes by and how its command line is read.

Most of what a program does is said by data: which options take a value, which option values are files read,
written or uploaded, which are URLs or hosts, and what its operands are. :class:`Program` holds that data, and
:meth:`Program.handle` reads a command line by it. A program whose reading needs more than data (``curl``,
``tar``, ``git``) gives a :data:`Handler` instead, which then reads the whole command line.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from monitor.evidence._shell._core import NO_FLOW, REMOTE_FLOW, Arg, Flow, Handler, Run, merge, split_options

Operands = Literal["", "reads", "writes", "uploads", "urls"]
"""What a declared program's operands are: not recorded, files it prints, files it changes, files it sends to a
host, URLs (or hosts) it reaches."""


@dataclass(frozen=True, slots=True)
class Program:
    """A program the shell parser knows. ``names``: the names it goes by (as :func:`program_name` gives them).
    ``code``: a handler that reads the command line, for programs that need code. Without one, the data says it
    all: ``short`` (letters) and ``long`` (names without ``--``) are the options that take a value; ``reads``,
    ``output``, ``uploads`` and ``urls`` are options (as written: ``-f``, ``--file``) whose value is a file
    read, the file the output goes to instead of standard output, a file sent to a host, a URL or host
    reached; ``operands`` says what the positional arguments are, after the first ``skip`` of them (chmod's
    mode); ``prints`` is what the program prints when that is fixed."""

    names: tuple[str, ...]
    code: Handler | None = None
    short: str = ""
    long: frozenset[str] = frozenset()
    reads: frozenset[str] = frozenset()
    output: frozenset[str] = frozenset()
    uploads: frozenset[str] = frozenset()
    urls: frozenset[str] = frozenset()
    operands: Operands = ""
    skip: int = 0
    prints: Flow | None = None

    def handle(self, run: Run, name: str, args: list[Arg]) -> Flow:
        """Read one command line of this program (``name`` is the name it was called by)."""
        if self.code is not None:
            return self.code(run, name, args)
        return self._declared(run, args)

    def _declared(self, run: Run, args: list[Arg]) -> Flow:
        """The command line read by the data. Files named are recorded (read, written, sent); a program that
        sends files to no host it names reaches an unknown one. It prints ``prints`` when given, else nothing
        when its output goes to a file, else what it fetched when it reaches a URL, else the files it reads."""
        options, operands = split_options(args, self.short, self.long)
        operands = operands[self.skip :]
        for flag, value in options:
            if value is not None and flag in self.reads:
                run.read(value)
        content = read_files_or_stdin(run, operands) if self.operands == "reads" else NO_FLOW
        for arg in operands if self.operands == "writes" else []:
            run.write(arg)
        outputs = [value for flag, value in options if value is not None and flag in self.output]
        for target in outputs:
            run.write(target, content)
        uploads = [value for flag, value in options if value is not None and flag in self.uploads]
        uploads += operands if self.operands == "uploads" else []
        urls = [value for flag, value in options if value is not None and flag in self.urls]
        urls += operands if self.operands == "urls" else []
        for value in uploads:
            run.upload_file(value)
        for value in urls:
            run.url(value, default_scheme="http")
        if uploads and not urls:
            run.unknown_host()
        if self.prints is not None:
            return self.prints
        if outputs:
            return NO_FLOW
        return REMOTE_FLOW if urls else content


def read_files_or_stdin(run: Run, files: list[Arg]) -> Flow:
    """The content of files a program reads: standard input when there are none, or for ``-``."""
    if not files:
        return run.stdin
    return merge(run.stdin if arg.text == "-" else run.read_content(arg) for arg in files)


def declare(names: str | Iterable[str], handler: Handler) -> Program:
    """A program read by code: its ``names`` (a text of names separated by spaces, or the names), all read by
    ``handler``."""
    return Program(tuple(names.split() if isinstance(names, str) else names), handler)


@functools.lru_cache(maxsize=1024)
def program_name(text: str) -> str:
    """A program's name as the tables know it: no folder, no ``.exe``, versions dropped (``python3.12``)."""
    name = re.split(r"[\\/]", text)[-1]
    lower = name.lower()
    for ext in (".exe", ".cmd", ".bat"):
        if lower.endswith(ext):
            name = lower[: -len(ext)]
    for family in ("python", "pip", "pypy"):
        if re.fullmatch(family + r"[0-9.]*", name):
            return "python" if family == "pypy" else family
    return name
