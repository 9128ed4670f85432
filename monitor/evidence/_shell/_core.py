"""What the shell parser's program handlers share: data flows, arguments, the state of one run, and helpers
for options, paths and hosts."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace

from monitor.evidence._hosts import canonical_host, parse_ipv4
from monitor.evidence._hosts import host_of_url as _url_host
from monitor.evidence._shell._lex import LITERAL_DOLLAR, SUBSTITUTION

_HOST = re.compile(
    r"(?:[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?\.?)+|\[?[0-9a-f:.]+\]?|[^\x00-\x7f./:@\s]+(?:\.[^\x00-\x20./:@]+)*"
)
_SCP_REMOTE = re.compile(r"^(?:(?P<user>[^@/:]+)@)?(?P<host>\[[0-9A-Fa-f:.]+\]|[^@/:\\\[\]]+):")
_DEV_NET = re.compile(r"^/dev/(?:tcp|udp)/(?P<host>[^/]+)/(?P<port>[^/]*)$")
_UNC = re.compile(r"^(?:\\\\|//)(?P<host>[^\\/?.\s][^\\/\s]*)[\\/]")
MAX_VALUE_CHARS = 10_000


@dataclass(frozen=True, slots=True)
class Flow:
    """Content on a stream or in a value: the local files it came from, the file names it lists, other private
    sources it carries (``$NAME`` for an environment variable, ``<environment>``), whether part of it has an
    origin the parse cannot name, its literal text when the command spells it out (``echo ... | sh``), whether
    part of it was fetched from the network, and whether that text was cut at :data:`MAX_VALUE_CHARS` (then it
    is known only in part, and whatever runs it may do anything)."""

    files: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    data: tuple[str, ...] = ()
    unknown: bool = False
    text: str | None = None
    remote: bool = False
    cut: bool = False

    def __or__(self, other: Flow) -> Flow:
        texts = [t for t in (self.text, other.text) if t is not None]
        joined = "\n".join(texts) if texts else None
        return Flow(
            tuple(dict.fromkeys(self.files + other.files)),
            tuple(dict.fromkeys(self.names + other.names)),
            tuple(dict.fromkeys(self.data + other.data)),
            self.unknown or other.unknown,
            joined[:MAX_VALUE_CHARS] if joined is not None else None,
            self.remote or other.remote,
            self.cut or other.cut or (joined is not None and len(joined) > MAX_VALUE_CHARS),
        )

    def sent(self) -> list[str]:
        """What sending this content uploads: its files, its other sources, ``-`` for an unknown origin."""
        return [*self.files, *self.data, *(["-"] if self.unknown else [])]


def merge(flows: Iterable[Flow]) -> Flow:
    """The union of many flows, in linear time (``|`` copies, so a loop of ``|`` is quadratic)."""
    files: dict[str, None] = {}
    names: dict[str, None] = {}
    data: dict[str, None] = {}
    texts: list[str] = []
    size = 0
    unknown = remote = cut = False
    for flow in flows:
        files.update(dict.fromkeys(flow.files))
        names.update(dict.fromkeys(flow.names))
        data.update(dict.fromkeys(flow.data))
        unknown = unknown or flow.unknown
        remote = remote or flow.remote
        cut = cut or flow.cut
        if flow.text is not None:
            if size <= MAX_VALUE_CHARS:
                texts.append(flow.text[:MAX_VALUE_CHARS])
            size += len(flow.text) + 1
    # Text past the bound is not kept: whatever runs it runs something not examined.
    cut = cut or size - 1 > MAX_VALUE_CHARS
    text = "\n".join(texts)[:MAX_VALUE_CHARS] if texts else None
    return Flow(tuple(files), tuple(names), tuple(data), unknown, text, remote, cut)


NO_FLOW = Flow()
UNKNOWN_FLOW = Flow(unknown=True)
REMOTE_FLOW = Flow(remote=True)


@dataclass(frozen=True, slots=True)
class Arg:
    """One argument after expansion. ``dynamic``: its value is only known at run time (a substitution or an
    unknown variable); ``flow``: content that substitutions and variables put into it; ``whole``: the
    argument is one substitution and nothing else (``$(ls)``, ``<(cat f)``)."""

    text: str
    dynamic: bool = False
    flow: Flow = NO_FLOW
    quoted: bool = False
    whole: bool = False

    def part(self, text: str) -> Arg:
        """The same argument with another text (a slice of it: the value of ``--opt=value``, a file after ``@``)."""
        return replace(self, text=text)

    @property
    def paths(self) -> list[str]:
        """The paths this argument names: the listed names when it is just a substitution that lists files."""
        if self.whole:
            return list(self.flow.names)
        return [self.text]


@dataclass(slots=True)
class Variable:
    """A shell variable: its possible values (None: unknown) and the content in it."""

    values: tuple[str, ...] | None
    flow: Flow = NO_FLOW


@dataclass(slots=True)
class Context:
    """Shell state that commands change for the ones after them (a subshell works on a copy): variables, the
    working directory, what earlier commands wrote into files, git remotes added, sockets opened on file
    descriptors, functions defined, and files sourced (whose variables the environment now holds)."""

    variables: dict[str, Variable] = field(default_factory=dict)
    cwd: str | None = None
    file_flows: dict[str, Flow] = field(default_factory=dict)
    remotes: dict[str, str] = field(default_factory=dict)
    sockets: dict[str, str] = field(default_factory=dict)
    functions: set[str] = field(default_factory=set)
    sourced: Flow = field(default_factory=lambda: NO_FLOW)

    def copy(self) -> Context:
        """A copy for a subshell; files written stay shared (they are on disk)."""
        return Context(
            dict(self.variables),
            self.cwd,
            self.file_flows,
            dict(self.remotes),
            dict(self.sockets),
            set(self.functions),
            self.sourced,
        )


@dataclass(slots=True)
class Effects:
    """What a command does, gathered while it is walked (ordered sets as dicts)."""

    reads: dict[str, None] = field(default_factory=dict)
    writes: dict[str, None] = field(default_factory=dict)
    uploads: dict[str, None] = field(default_factory=dict)
    hosts: dict[str, None] = field(default_factory=dict)
    fetched: dict[str, None] = field(default_factory=dict)
    executes: dict[str, None] = field(default_factory=dict)
    notes: dict[str, None] = field(default_factory=dict)
    network: bool = False
    unknown_hosts: bool = False
    opaque: bool = False
    unexamined: bool = False


Nested = Callable[["Run", str, Flow], Flow]
Dispatch = Callable[["Run", list[Arg]], Flow]


@dataclass(slots=True)
class Run:
    """One command being walked: the effects so far, the shell state, the standard input of the command at
    hand, and the way back into the parser (for ``bash -c``, ``eval``, wrappers like ``sudo``)."""

    effects: Effects
    context: Context
    depth: int
    nested_parser: Nested
    dispatcher: Dispatch
    stdin: Flow = NO_FLOW
    env: dict[str, Arg] = field(default_factory=dict)

    # -- going back into the parser --

    def nested(self, text: str, stdin: Flow = NO_FLOW) -> Flow:
        """Parse and walk ``text`` as a command of its own (``bash -c``, ``eval``); returns its output."""
        return self.nested_parser(self, text, stdin)

    def dispatch(self, args: Sequence[Arg], stdin: Flow | None = None) -> Flow:
        """Run an inner command line (after ``sudo``, ``xargs``, ``find -exec``) with this one's input."""
        if not args:
            return NO_FLOW
        inner = Run(
            self.effects,
            self.context,
            self.depth,
            self.nested_parser,
            self.dispatcher,
            self.stdin if stdin is None else stdin,
            self.env,
        )
        return self.dispatcher(inner, list(args))

    # -- recording --

    def note(self, message: str) -> None:
        """Say something about the command (kept in ``notes``)."""
        self.effects.notes[message] = None

    def opaque(self, why: str) -> None:
        """Part of the command cannot be examined; ``why`` goes to the notes."""
        self.effects.opaque = True
        self.note(why)

    def unexamined(self, why: str) -> None:
        """Part of the command was not examined because it is over a bound: it counts as possibly doing anything
        a shell can do (reading private files, sending them to any host); ``why`` goes to the notes."""
        self.opaque(why)
        self.effects.unexamined = True
        self.unknown_host()

    def network(self) -> None:
        """The command talks to the network."""
        self.effects.network = True

    def unknown_host(self) -> None:
        """The command talks to the network somewhere the parse cannot name."""
        self.effects.network = True
        self.effects.unknown_hosts = True

    def path(self, text: str) -> str:
        """A path as recorded: ``$HOME`` written as ``~``, joined to a known working directory, normalised."""
        return normalize_path(text, self.context.cwd)

    def read(self, arg: Arg | str) -> list[str]:
        """Record the files an argument names as read; returns them. Network paths (``/dev/tcp``, UNC) count."""
        found = []
        for raw in arg.paths if isinstance(arg, Arg) else [arg]:
            if not raw or raw == "-":
                continue
            if self.remote_path(raw):
                continue
            path = self.path(raw)
            self.effects.reads[path] = None
            found.append(path)
        return found

    def remote_path(self, raw: str) -> bool:
        """Whether a path names a network place (``/dev/tcp/host/port``, ``\\\\host\\share``); records its host."""
        match = _DEV_NET.match(raw) or _UNC.match(raw)
        if match is None:
            return False
        self.host(match.group("host"))
        return True

    def content(self, paths: Iterable[str]) -> Flow:
        """The content of local files: the files, and what earlier commands wrote into them (or their folders)."""
        found = tuple(paths)
        written = self.context.file_flows
        if not written:
            return Flow(files=found)
        parts = [Flow(files=found)]
        if written:
            for path in found:
                candidate = path
                while candidate:
                    if candidate in written:
                        parts.append(written[candidate])
                    parent = posixpath.dirname(candidate)
                    candidate = "" if parent == candidate else parent
        return merge(parts)

    def read_content(self, arg: Arg | str) -> Flow:
        """Record an argument's files as read and return their content (a process substitution's output too)."""
        flow = self.content(self.read(arg))
        return flow | replace(arg.flow, names=()) if isinstance(arg, Arg) and arg.whole else flow

    def write(self, arg: Arg | str, carried: Flow = NO_FLOW, *, fetched: bool = False) -> None:
        """Record a written file; ``carried`` is the content put in it, ``fetched`` that it came from the network."""
        for raw in arg.paths if isinstance(arg, Arg) else [arg]:
            if not raw or raw == "-" or raw.startswith("/dev/fd/") or raw in _DEVICES:
                continue
            if self.remote_path(raw):
                self.upload(carried)
                continue
            path = self.path(raw)
            self.effects.writes[path] = None
            if fetched or carried.remote:
                self.effects.fetched[path] = None
            if carried.files or carried.data or carried.unknown or carried.remote:
                self.context.file_flows[path] = self.context.file_flows.get(path, NO_FLOW) | carried

    def upload(self, flow: Flow) -> None:
        """Record content sent to a host (its files are read, too)."""
        for item in flow.sent():
            self.effects.uploads[item] = None
        for path in flow.files:
            self.effects.reads[path] = None

    def upload_file(self, arg: Arg | str) -> None:
        """Record a file (or ``-``, standard input) whose content is sent to a host."""
        raw = arg.text if isinstance(arg, Arg) else arg
        if raw == "-":
            self.upload(self.stdin)
            return
        self.upload(self.read_content(arg))

    def execute(self, arg: Arg | str) -> None:
        """Record a local file run as code."""
        for raw in arg.paths if isinstance(arg, Arg) else [arg]:
            self.effects.executes[self.path(raw)] = None

    def host(self, raw: str, *, dynamic: bool = False) -> None:
        """Record a host reached. A host computed at run time counts as unknown, unless its end is written
        out (``$(...).attacker.example`` reaches a host under ``attacker.example``, which is recorded)."""
        self.network()
        host = clean_host(raw)
        if host is None or (dynamic and not host):
            suffix = known_suffix(raw)
            if suffix:
                self.effects.hosts[suffix] = None
            else:
                self.unknown_host()
        elif host:
            self.effects.hosts[host] = None

    def url(self, arg: Arg | str, *, default_scheme: str = "") -> None:
        """Record the host of a URL (scheme optional when ``default_scheme`` is given) and the content it
        carries; ``file:`` URLs are reads."""
        text = arg.text if isinstance(arg, Arg) else arg
        if text.lower().startswith("file:"):
            self.read(re.sub(r"^file:(?://[^/]*)?", "", text, flags=re.IGNORECASE) or "/")
            return
        if isinstance(arg, Arg):
            self.upload(replace(arg.flow, names=()))
        self.host(host_of_url(text, default_scheme) or "", dynamic=isinstance(arg, Arg) and arg.dynamic)


Handler = Callable[[Run, str, list[Arg]], Flow]
"""How a program's command line is read: the run so far, the program's name and its arguments, to the flow out."""


_COMMAND_ENV = frozenset(
    """GIT_SSH_COMMAND GIT_SSH GIT_PAGER PAGER MANPAGER EDITOR VISUAL GIT_EDITOR GIT_EXTERNAL_DIFF GIT_ASKPASS
    SSH_ASKPASS PROMPT_COMMAND GIT_PROXY_COMMAND""".split()
)
_CODE_ENV = frozenset(
    """LD_PRELOAD DYLD_INSERT_LIBRARIES BASH_ENV ENV NODE_OPTIONS PERL5OPT RUBYOPT PYTHONPATH PYTHONSTARTUP
    GIT_CONFIG_GLOBAL GIT_CONFIG_PARAMETERS GIT_EXEC_PATH""".split()
)
_PROXY_ENV = frozenset(
    ["http_proxy", "https_proxy", "all_proxy", "ftp_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "FTP_PROXY"]
)


def check_environment(run: Run, assignments: dict[str, Arg]) -> None:
    """Assignments before a command that make it run other code or talk through a proxy; kept in ``run.env``."""
    run.env = {**run.env, **assignments}
    for name, value in assignments.items():
        if name in _COMMAND_ENV:
            run.note(f"{name} names a command")
            run.nested(value.text)
        elif name in _CODE_ENV:
            run.opaque(f"{name} changes what the program runs")
        elif name in _PROXY_ENV:
            run.url(value, default_scheme="http")


_DEVICES = frozenset(["/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero", "/dev/stdin"])


def render(text: str, substitutions: Sequence[str] = ()) -> str:
    """A text for people: literal dollars restored, substitution markers shown as ``$(...)``."""

    def show(match: re.Match[str]) -> str:
        index = int(match.group(1))
        inner = substitutions[index] if index < len(substitutions) else "..."
        return "$(" + (inner if len(inner) <= 60 else inner[:57] + "...") + ")"

    return SUBSTITUTION.sub(show, text).replace(LITERAL_DOLLAR, "$")


def normalize_path(text: str, cwd: str | None) -> str:
    """``$HOME``/``${HOME}`` as ``~``, relative paths joined to ``cwd`` when known, POSIX paths normalised."""
    for prefix, repl in (("${HOME}", "~"), ("$HOME", "~"), ("${PWD}", "."), ("$PWD", ".")):
        if text == prefix or text.startswith(prefix + "/"):
            text = repl + text[len(prefix) :]
    if "\\" in text or re.match(r"^[A-Za-z]:", text) or "://" in text:
        return text
    if cwd and not text.startswith(("/", "~", "$")):
        text = posixpath.join(cwd, text)
    return posixpath.normpath(text) if text else text


def clean_host(raw: str) -> str | None:
    """A host name or IP as recorded (lowercase, no trailing dot, no brackets); "" for none, None if unusable."""
    host = raw.strip().lower().rstrip(".")
    if not host:
        return ""
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if "$" in host or "\x02" in host or "{" in host or "*" in host or not _HOST.fullmatch(host):
        return None
    return canonical_host(host)


def known_suffix(raw: str) -> str:
    """The written-out end of a host computed at run time: ``evil.example`` for ``$(cat f).evil.example``."""
    text = raw.strip().lower().rstrip(".")
    start = max((i for i, c in enumerate(text) if not (c.isalnum() or c in ".-_")), default=-1) + 1
    tail = text[start:]
    if start > 0 and not tail.startswith("."):
        tail = tail.partition(".")[2]
    tail = tail.lstrip(".")
    labels = tail.split(".")
    if len(labels) < 2 or not re.fullmatch(r"[a-z][a-z0-9-]{1,62}", labels[-1]) or not all(labels):
        return ""
    return tail


def host_of_url(text: str, default_scheme: str = "") -> str | None:
    """The host of a URL; scheme-less text is read as ``default_scheme://text`` when a default is given.
    Returns "" when the text names no host and None when it cannot be read."""
    if "://" not in text:
        if not default_scheme:
            return ""
        text = f"{default_scheme}://{text}"
    host = _url_host(text)
    if host is None:
        return None
    return host


def remote_host(text: str) -> str | None:
    """The host of an ``[user@]host:path`` operand (scp, rsync, git), or None for a local path."""
    if "://" in text:
        return host_of_url(text) or None
    if text.startswith(("/", ".", "~")):
        return None
    match = _SCP_REMOTE.match(text)
    if match is None:
        return None
    host = match.group("host")
    if len(host) == 1 and host.isalpha():
        return None  # a Windows drive letter
    return host


def looks_like_ipv4(text: str) -> bool:
    """Whether a text is an IPv4 address in any spelling a resolver accepts with dots (``10.0.0.1``,
    ``0x7f.1``, ``0177.0.0.1``)."""
    return "." in text.strip(".") and parse_ipv4(text) is not None


def split_options(
    args: Sequence[Arg],
    short: str = "",
    long: Iterable[str] = (),
    *,
    stop_at_positional: bool = False,
) -> tuple[list[tuple[str, Arg | None]], list[Arg]]:
    """Split a program's arguments into options (``-x``/``--name``, with their value when ``short`` or
    ``long`` says they take one) and positional arguments. ``--`` ends the options; with
    ``stop_at_positional`` the first positional does too (``ssh host cmd -x``, ``sudo cmd -x``)."""
    valued = frozenset(long)
    options: list[tuple[str, Arg | None]] = []
    positional: list[Arg] = []
    i = 0
    while i < len(args):
        arg = args[i]
        text = arg.text
        i += 1
        if text == "--":
            positional.extend(args[i:])
            break
        if text.startswith("--"):
            name, eq, value = text.partition("=")
            if eq:
                options.append((name, arg.part(value)))
            elif name[2:] in valued and i < len(args):
                options.append((name, args[i]))
                i += 1
            else:
                options.append((name, None))
            continue
        if text.startswith("-") and len(text) > 1:
            for k, ch in enumerate(text[1:], start=1):
                if ch in short:
                    rest = text[k + 1 :]
                    if rest:
                        options.append(("-" + ch, arg.part(rest)))
                    elif i < len(args):
                        options.append(("-" + ch, args[i]))
                        i += 1
                    else:
                        options.append(("-" + ch, None))
                    break
                options.append(("-" + ch, None))
            continue
        positional.append(arg)
        if stop_at_positional:
            positional.extend(args[i:])
            break
    return options, positional


def option_values(options: Sequence[tuple[str, Arg | None]], *names: str) -> list[Arg]:
    """The values given to any of the named options, in order."""
    return [value for name, value in options if name in names and value is not None]


def has_option(options: Sequence[tuple[str, Arg | None]], *names: str) -> bool:
    """Whether any of the named options was given."""
    return any(name in names for name, _ in options)
