"""Shell built-ins, wrappers and interpreters for the shell parser.

Wrappers (``sudo``, ``env``, ``nohup``, ``timeout``, ...) run the command after their own options, so the walk
goes on with it. Shells run a command string (``bash -c``), a script or their standard input: a string the
command spells out is parsed in turn, a script or code fetched from elsewhere is not examined (``opaque``).
Interpreters (``python``, ``node``, ``ruby``, ``perl``, ...) with inline code (``-c``/``-e``) may talk to the
network, which the parse cannot rule out. Built-ins change the shell's state (``cd``, variables, ``source``)
or print it (``env``, ``set``, ``history``).
"""

from __future__ import annotations

import re
from dataclasses import replace

from monitor.evidence._shell._core import (
    NO_FLOW,
    UNKNOWN_FLOW,
    Arg,
    Flow,
    Run,
    Variable,
    check_environment,
    has_option,
    merge,
    option_values,
    split_options,
)
from monitor.evidence._shell._program import Program, declare

_ASSIGNMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\+?=")
_URL = re.compile(r"\b[a-z][a-z0-9+.-]{1,15}://[^\s'\"<>`)]+", re.IGNORECASE)
_ENVIRONMENT = Flow(data=("<environment>",))
# Wrappers: the short and long options that take a value before the wrapped command.
_WRAPPERS: dict[str, tuple[str, frozenset[str]]] = {
    name: (short, frozenset(long.split()))
    for names, short, long in [
        ("sudo", "ugpCDrtTUR", "user group prompt close-from chdir role type other-user chroot"),
        ("doas", "uC", ""),
        ("nohup chronic unbuffer setsid command builtin nocorrect noglob", "", ""),
        ("time", "fo", "format output"),
        ("nice", "n", "adjustment"),
        ("ionice", "cnp", "class classdata pid"),
        ("timeout", "sk", "signal kill-after"),
        ("stdbuf", "ioe", "input output error"),
        ("exec", "a", ""),
        ("caffeinate", "wt", ""),
        ("chroot", "", "userspec groups"),
        ("strace ltrace", "oepsSuEIbP", "output"),
        ("flock", "wEc", "timeout conflict-exit-code command"),
        ("watch", "nd", "interval differences"),
        ("su runuser", "cgsu", "command group shell user"),
        ("script", "cE", "command echo"),
        ("firejail bwrap unshare", "", ""),
    ]
    for name in names.split()
}
_SHELLS = frozenset(["bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "fish", "busybox", "rbash"])
_REPL_PROGRAMS = frozenset(["python", "node", "nodejs", "ruby", "perl", "php", "lua", "irb", "powershell", "pwsh"])
# Interpreters: the options that carry inline code, a module to run, and the other options taking a value.
_INTERPRETERS: dict[str, tuple[frozenset[str], frozenset[str], str, frozenset[str]]] = {
    name: (frozenset(code.split()), frozenset(module.split()), short, frozenset(long.split()))
    for names, code, module, short, long in [
        ("python", "-c", "-m", "cmWXQ", ""),
        ("node nodejs", "-e --eval -p --print", "", "eprC", "eval print require import loader input-type"),
        ("ruby", "-e", "", "erICE", ""),
        ("perl", "-e -E", "", "eEIMmx", ""),
        ("php", "-r", "", "rcdfStz", ""),
        ("Rscript lua luajit osascript tclsh groovy", "-e", "", "el", ""),
        ("julia", "-e --eval -E --print", "", "eEL", "eval print load"),
    ]
    for name in names.split()
}
# Python modules that are programs the tables know under another name.
_PYTHON_PROGRAMS = {
    "pip": "pip", "pytest": "pytest", "mypy": "mypy", "black": "black", "ruff": "ruff", "isort": "isort",
    "flake8": "flake8", "pylint": "pylint", "twine": "twine", "coverage": "coverage", "unittest": "pytest",
    "json.tool": "cat", "base64": "base64", "gzip": "gzip", "uv": "uv", "poetry": "poetry", "pipx": "pipx",
}  # fmt: skip
_PYTHON_LOCAL = frozenset(
    "venv virtualenv ensurepip compileall py_compile site platform sysconfig tokenize ast dis this calendar"
    " pydoc doctest zipfile tarfile sqlite3 tabnanny pyclbr".split()
)
_PYTHON_SERVERS = frozenset(["http.server", "SimpleHTTPServer", "smtpd", "xmlrpc.server"])
# Files whose sourcing is routine: virtual environment activation, environment files, shell start-up files.
_ROUTINE_SOURCE = re.compile(
    r"(?:^|[\\/])(?:(?:bin|Scripts)[\\/]activate(?:\.\w+)?|\.env(?:\.[\w.-]+)?|[\w.-]+\.env|\.envrc"
    r"|\.(?:bashrc|zshrc|profile|bash_profile|zprofile)|nvm\.sh|env)$"
)


def inline_code(run: Run, name: str, code: str) -> None:
    """Code given to an interpreter on the command line: not examined; it may reach any host (those its URLs
    name are recorded)."""
    run.unknown_host()
    for match in _URL.finditer(code):
        run.url(match.group())
    run.opaque(f"inline {name} code is not examined")


def _stdin_code(run: Run, name: str, *, shell: bool) -> Flow:
    """A shell or interpreter that reads its program from standard input."""
    stdin = run.stdin
    if stdin.cut:
        run.unexamined(f"{name} runs a script longer than the part of it that was kept")
    if stdin.text is not None and not (stdin.files or stdin.unknown or stdin.remote or stdin.data):
        if shell:
            return run.nested(stdin.text)
        inline_code(run, name, stdin.text)
        return UNKNOWN_FLOW
    if not (stdin.files or stdin.unknown or stdin.remote or stdin.data):
        return NO_FLOW
    for path in stdin.files:
        run.execute(path)
    if stdin.remote:
        run.opaque(f"{name} runs code fetched from the network")
    else:
        run.opaque(f"{name} runs code from its standard input")
    return UNKNOWN_FLOW


def _wrapper(run: Run, name: str, args: list[Arg]) -> Flow:
    short, long = _WRAPPERS[name]
    options, rest = split_options(args, short, long, stop_at_positional=True)
    if name == "command" and has_option(options, "-v", "-V"):
        return NO_FLOW
    for value in option_values(options, "-o", "--output") if name in ("time", "strace", "ltrace") else []:
        run.write(value)
    for value in option_values(options, "-c", "--command") if name in ("flock", "su", "runuser", "script") else []:
        return run.nested(value.text, run.stdin)
    if name in ("timeout", "chroot", "flock") and rest:
        rest = rest[1:]
    if name == "watch":
        return run.nested(" ".join(a.text for a in rest))
    assignments: dict[str, Arg] = {}
    while name == "sudo" and rest and (match := _ASSIGNMENT.match(rest[0].text)):
        assignments[match.group(1)] = rest[0].part(rest[0].text[match.end() :])
        rest = rest[1:]
    check_environment(run, assignments)
    return run.dispatch(rest)


def _env(run: Run, name: str, args: list[Arg]) -> Flow:
    assignments: dict[str, Arg] = {}
    i = 0
    while i < len(args):
        text = args[i].text
        if text in ("-u", "--unset", "-C", "--chdir", "-P"):
            i += 2
        elif text in ("-S", "--split-string") or text.startswith("--split-string="):
            command = text.partition("=")[2] if "=" in text else (args[i + 1].text if i + 1 < len(args) else "")
            rest = args[i + (1 if "=" in text else 2) :]
            check_environment(run, assignments)
            return run.nested(" ".join([command] + [a.text for a in rest]), run.stdin)
        elif text.startswith("-"):
            i += 1
        elif match := _ASSIGNMENT.match(text):
            assignments[match.group(1)] = args[i].part(text[match.end() :])
            i += 1
        else:
            break
    if i >= len(args):
        return _ENVIRONMENT
    check_environment(run, assignments)
    return run.dispatch(args[i:])


def _shell(run: Run, name: str, args: list[Arg]) -> Flow:
    if name == "busybox":
        return run.dispatch(args)
    command_flag = reads_stdin = False
    i = 0
    while i < len(args):
        text = args[i].text
        if text in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file", "-C", "--init-command"):
            if text in ("--rcfile", "--init-file") and i + 1 < len(args):
                run.read(args[i + 1])
                run.opaque(f"{name} runs the start-up file {args[i + 1].text}")
            if text in ("-C", "--init-command") and i + 1 < len(args):
                run.nested(args[i + 1].text)
            i += 2
        elif text == "--command":
            command_flag = True
            i += 1
        elif text.startswith(("-", "+")) and len(text) > 1 and text not in ("--", "-"):
            command_flag = command_flag or (text.startswith("-") and not text.startswith("--") and "c" in text)
            reads_stdin = reads_stdin or (text.startswith("-") and not text.startswith("--") and "s" in text)
            i += 1
        else:
            i += 1 if text == "--" else 0
            break
    rest = args[i:]
    if command_flag:
        if not rest:
            return NO_FLOW
        if rest[0].dynamic:
            run.opaque(f"{name} -c runs a command built at run time")
        return run.nested(rest[0].text, run.stdin)
    if rest and rest[0].text != "-" and not reads_stdin:
        run.read(rest[0])
        run.execute(rest[0])
        run.opaque(f"runs a local script: {rest[0].text}")
        return UNKNOWN_FLOW
    return _stdin_code(run, name, shell=True)


def _interpreter(run: Run, name: str, args: list[Arg]) -> Flow:
    code_flags, module_flags, short, long = _INTERPRETERS[name]
    long = long | {flag[2:] for flag in code_flags if flag.startswith("--")}
    options, rest = split_options(args, short, long, stop_at_positional=True)
    for value in option_values(options, "--env-file"):
        run.read(value)
    codes = option_values(options, *code_flags)
    if codes:
        for code in codes:
            inline_code(run, name, code.text)
        return UNKNOWN_FLOW
    modules = option_values(options, *module_flags)
    if modules:
        return _python_module(run, modules[0].text, rest)
    if name == "php" and has_option(options, "-S"):
        run.unknown_host()
        run.upload(Flow(files=(".",)))
        run.note("php -S serves the folder to the network")
    scripts = option_values(options, "-f") if name == "php" else []
    script = scripts[0] if scripts else (rest[0] if rest and rest[0].text != "-" else None)
    if script is None:
        return _stdin_code(run, name, shell=False)
    if "://" in script.text:
        run.url(script)
        run.opaque(f"{name} runs code fetched from {script.text}")
        return UNKNOWN_FLOW
    run.read(script)
    run.execute(script)
    run.opaque(f"runs a local script: {script.text}")
    return UNKNOWN_FLOW


def _python_module(run: Run, module: str, rest: list[Arg]) -> Flow:
    if module in _PYTHON_PROGRAMS:
        return run.dispatch([Arg(_PYTHON_PROGRAMS[module]), *rest])
    if module in _PYTHON_SERVERS:
        directories = [rest[i + 1] for i, a in enumerate(rest[:-1]) if a.text in ("-d", "--directory")]
        run.unknown_host()
        run.upload(run.content(run.read(directories[0] if directories else ".")))
        run.note(f"python -m {module} serves files to the network")
        return NO_FLOW
    if module == "webbrowser":
        for arg in rest:
            if not arg.text.startswith("-"):
                run.url(arg, default_scheme="http")
        return NO_FLOW
    if module in ("venv", "virtualenv"):
        for arg in rest:
            if not arg.text.startswith("-"):
                run.write(arg)
        return NO_FLOW
    if module == "build":
        run.unknown_host()
        run.write("dist")
        return NO_FLOW
    if module in _PYTHON_LOCAL:
        return NO_FLOW
    run.opaque(f"runs the python module {module}")
    return UNKNOWN_FLOW


def _other_shell(run: Run, name: str, args: list[Arg]) -> Flow:
    inline_code(run, name, " ".join(a.text for a in args))
    return UNKNOWN_FLOW


def _cd(run: Run, name: str, args: list[Arg]) -> Flow:
    positional = [a for a in args if not a.text.startswith("-") or a.text == "-"]
    if name == "popd" or (positional and (positional[0].dynamic or positional[0].text == "-")):
        run.context.cwd = None
    elif name in ("cd", "pushd", "chdir"):
        run.context.cwd = run.path(positional[0].text) if positional else "~"
    return NO_FLOW


def _assign(run: Run, name: str, args: list[Arg]) -> Flow:
    assignments = [a for a in args if _ASSIGNMENT.match(a.text)]
    prints = not args if name == "set" else all(a.text == "-p" for a in args)
    if not assignments and prints:
        return _ENVIRONMENT
    for arg in assignments:
        match = _ASSIGNMENT.match(arg.text)
        assert match is not None
        value = arg.text[match.end() :]
        run.context.variables[match.group(1)] = Variable(None if arg.dynamic else (value,), arg.flow)
    return NO_FLOW


def _printenv(run: Run, name: str, args: list[Arg]) -> Flow:
    names = [a.text for a in args if not a.text.startswith("-")]
    return Flow(data=tuple("$" + n for n in names)) if names else _ENVIRONMENT


def _read(run: Run, name: str, args: list[Arg]) -> Flow:
    options, names = split_options(args, "adnNptu", ())
    targets = [a.text for a in names + option_values(options, "-a")] or ["REPLY"]
    for target in targets:
        run.context.variables[target] = Variable(None, replace(run.stdin, text=None, names=()))
    return NO_FLOW


def _echo(run: Run, name: str, args: list[Arg]) -> Flow:
    options: list[tuple[str, Arg | None]] = []
    if name == "printf":
        options, args = split_options(args, "v", ())
    elif name == "echo":
        while args and re.fullmatch(r"-[neE]+", args[0].text):
            args = args[1:]
    flow = merge(replace(arg.flow, text=None) for arg in args)
    formatted = name == "printf" and bool(args) and any(c in args[0].text for c in "%\\")
    out = flow if formatted else replace(flow, text=" ".join(a.text for a in args))
    for target in option_values(options, "-v"):
        run.context.variables[target.text] = Variable(None, flow)
        return NO_FLOW
    return out


def _source(run: Run, name: str, args: list[Arg]) -> Flow:
    if not args:
        return NO_FLOW
    script = args[0]
    content = run.read_content(script)
    run.context.sourced = run.context.sourced | Flow(files=content.files)
    if not _ROUTINE_SOURCE.search(script.text):
        run.execute(script)
        run.opaque(f"sources a script: {script.text}")
    return NO_FLOW


def _eval(run: Run, name: str, args: list[Arg]) -> Flow:
    run.opaque("eval runs text as a command")
    return run.nested(" ".join(a.text for a in args), run.stdin)


def _trap(run: Run, name: str, args: list[Arg]) -> Flow:
    if args and args[0].text not in ("-l", "-p", "-", "--"):
        run.nested(args[0].text)
    return NO_FLOW


def _alias(run: Run, name: str, args: list[Arg]) -> Flow:
    for arg in args:
        if (match := _ASSIGNMENT.match(arg.text.replace("-", "_"))) is not None:
            run.opaque("alias redefines a command")
            run.nested(arg.text[match.end() :])
    return NO_FLOW


EXEC_PROGRAMS = (
    declare(_WRAPPERS, _wrapper),
    declare(_SHELLS, _shell),
    declare(_INTERPRETERS, _interpreter),
    declare("powershell pwsh cmd", _other_shell),
    declare("cd pushd popd chdir", _cd),
    declare("export declare typeset local readonly set", _assign),
    declare("echo printf", _echo),
    declare("source .", _source),
    declare("env", _env),
    declare("printenv", _printenv),
    declare("read", _read),
    declare("eval", _eval),
    declare("trap", _trap),
    declare("alias", _alias),
    Program(("history", "fc"), prints=Flow(data=("<history>",))),
)
"""Shell built-ins, wrappers and interpreters."""
# Programs that run whatever commands or code arrive on their input (a reverse shell when that is a socket).
CODE_RUNNERS = _SHELLS | _REPL_PROGRAMS
