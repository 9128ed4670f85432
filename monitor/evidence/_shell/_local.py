"""Local programs for the shell parser: readers and filters, file management, archives, ``find`` and ``xargs``.

Readers, file writers, quiet programs and development tools are data (:class:`Program` entries). The others
give a handler: it takes the run, the program's name and its arguments, records what the program reads and
writes, and returns what it prints (a :class:`Flow`), which a pipe hands to the next program.
"""

from __future__ import annotations

import posixpath
import re

from monitor.evidence._shell._core import (
    NO_FLOW,
    Arg,
    Flow,
    Run,
    has_option,
    merge,
    option_values,
    remote_host,
    split_options,
)
from monitor.evidence._shell._program import Program, declare, read_files_or_stdin

# Programs that print the files they are given (standard input without files): the short options that take a
# value, the long ones, and for some the option naming the file the output goes to, or a summary (counts,
# hashes, a type) printed instead of the files' content.
_READ_OPTIONS = frozenset(["-X", "--exclude-from", "--files0-from", "-f", "--files-from"])
_OUTPUT = frozenset(["-o", "--output"])
_SUMMARY = NO_FLOW


def _declare_reader(
    names: str, short: str, long: str, *, output: frozenset[str] = frozenset(), prints: Flow | None = None
) -> Program:
    """A program that prints the files it reads (its operands, or standard input)."""
    long_options = frozenset(long.split())
    return Program(
        tuple(names.split()),
        short=short,
        long=long_options,
        reads=_READ_OPTIONS,
        output=output,
        operands="reads",
        prints=prints,
    )


_READERS = (
    _declare_reader("cat tac rev zcat gzcat bzcat xzcat zstdcat lz4cat comm dos2unix unix2dos", "s", "separator"),
    _declare_reader("head tail", "nc", "lines bytes pid sleep-interval max-unchanged-stats"),
    _declare_reader("less more most", "bhjkopPtTxyz", "log-file tag"),
    _declare_reader("bat batcat", "lmHrp", "language map-syntax highlight-line line-range style theme"),
    _declare_reader("nl", "bdfhilnsvw", ""),
    _declare_reader("strings", "ntTe", "bytes radix target encoding"),
    _declare_reader("xxd", "cglos", "cols groupsize len seek"),
    _declare_reader("od", "AjNtwS", "address-radix skip-bytes read-bytes format width strings"),
    _declare_reader("hexdump hd", "enfsC", "format length skip"),
    _declare_reader("base64 base32 basenc", "w", "wrap"),
    _declare_reader("fold fmt", "wgp", "width goal prefix"),
    _declare_reader("expand unexpand", "t", "tabs"),
    _declare_reader("column", "cstNoRWHOJ", "table-columns separator output-separator"),
    _declare_reader(
        "sort", "koStTz", "key output buffer-size field-separator temporary-directory files0-from", output=_OUTPUT
    ),
    _declare_reader("uniq", "fsw", "skip-fields skip-chars check-chars"),
    _declare_reader("cut", "bcdf", "bytes characters delimiter fields output-delimiter"),
    _declare_reader("paste", "d", "delimiters"),
    _declare_reader("join", "12ejotv", ""),
    _declare_reader("shuf", "inor", "input-range head-count output random-source", output=_OUTPUT),
    _declare_reader("iconv", "fto", "from-code to-code output", output=_OUTPUT),
    _declare_reader(
        "diff sdiff", "CUIFLxXow", "context unified ignore-matching-lines label exclude exclude-from output width"
    ),
    _declare_reader("cmp", "in", "ignore-initial bytes", prints=_SUMMARY),
    _declare_reader("pr", "hlwoNS", "header length width indent"),
    _declare_reader("file", "fmPF", "files-from magic-file separator", prints=_SUMMARY),
    _declare_reader(
        "wc md5sum sha1sum sha224sum sha256sum sha384sum sha512sum cksum sum",
        "a",
        "algorithm files0-from",
        prints=_SUMMARY,
    ),
    _declare_reader("b2sum", "l", "length", prints=_SUMMARY),
)
_GREP_OPTIONS = {
    "grep egrep fgrep zgrep": ("efmABCdD", "regexp file max-count after-context before-context context label"),
    "rg": ("efgmABCjMtTrEd", "regexp file glob iglob max-count after-context before-context context threads"),
    "ag ack": ("ABCGgm", "after before context file-search-regex max-count ignore ignore-dir"),
}
_GREP_LONG = " include exclude exclude-dir exclude-from ignore-file pre pre-glob type type-not replace encoding"
_GREP_LONG += " max-depth sort sortr type-add colors path-separator max-filesize devices directories binary-files"
_GREPS = {
    name: (short, frozenset((long + _GREP_LONG).split()))
    for names, (short, long) in _GREP_OPTIONS.items()
    for name in names.split()
}
_SED_EXEC = re.compile(r"(?:^|[;{}\n])\s*[0-9$,/!]*\s*e(?:\s|;|$)|/[gpiImM0-9]*e[gpiImM0-9]*\s*(?:$|[;}\n])")
_AWK_EXEC = re.compile(r"system\s*\(|\|\s*getline|\|&|/inet|\b(?:print|printf)\b[^;{}]*\|")
_COMPRESSORS = {
    "gzip": ".gz", "pigz": ".gz", "bzip2": ".bz2", "xz": ".xz", "lzma": ".lzma", "zstd": ".zst", "lz4": ".lz4",
    "compress": ".Z", "gunzip": "", "bunzip2": "", "unxz": "", "unlzma": "", "unzstd": "", "uncompress": "",
}  # fmt: skip
_SAFE_TAR_COMPRESSORS = frozenset(["gzip", "pigz", "bzip2", "xz", "zstd", "lz4", "lzma", "lzip", "lzop"])
# Programs with no effect on files or the network worth recording (file management is recorded as writes).
_QUIET = Program(
    tuple(
        "true false : sleep date whoami id uname hostname which whereis type clear tput stty jobs wait kill pkill"
        " killall ps pgrep top htop free uptime nproc umask ulimit unset shift return exit break continue test ["
        " seq yes basename dirname realpath readlink df pwd tty logname groups users who arch"
        " getconf locale hash shopt bind help disown fg bg sync mktemp lscpu lsblk nvidia-smi unalias".split()
    )
)
# Programs that change the files they are given (chmod's and its kin's first operand is the mode or owner).
_WRITE_LONG = frozenset(["mode", "reference", "size", "date"])
_WRITERS = (
    Program(("mkdir",), short="mZ", long=_WRITE_LONG, operands="writes"),
    Program(("touch",), short="drt", long=_WRITE_LONG, operands="writes"),
    Program(("truncate",), short="rs", long=_WRITE_LONG, operands="writes"),
    Program(("shred",), short="nsu", long=_WRITE_LONG, operands="writes"),
    Program(("rm", "rmdir", "unlink"), long=_WRITE_LONG, operands="writes"),
    Program(("chmod", "chown", "chgrp", "chattr", "setfacl"), long=_WRITE_LONG, operands="writes", skip=1),
)
# Tools that run the project's own code or check it (tests, linters, compilers, builds): local, and what they
# print is the project's content.
_DEV_TOOLS = Program(
    tuple(
        "pytest py.test mypy ruff black isort flake8 pylint pyright pyre bandit coverage nosetests pydocstyle"
        " tsc eslint prettier jest vitest mocha webpack vite esbuild rollup babel swc stylelint"
        " make gmake cmake ninja meson scons gcc g++ cc c++ clang clang++ ld ar nm objdump readelf strip"
        " rustc rustfmt javac kotlinc scalac swiftc shellcheck shfmt hadolint yamllint markdownlint actionlint"
        " golangci-lint gofmt goimports clang-format clang-tidy cppcheck".split()
    ),
    prints=Flow(files=(".",)),
)


def _grep(run: Run, name: str, args: list[Arg]) -> Flow:
    short, long = _GREPS[name]
    options, positional = split_options(args, short, long)
    for value in option_values(options, "-f", "--file", "--exclude-from", "--ignore-file"):
        run.read(value)
    for value in option_values(options, "--pre"):
        run.opaque(f"{name} --pre runs {value.text} on each file")
    listing = has_option(options, "--files")
    patterns = listing or has_option(options, "-e", "--regexp", "-f", "--file")
    files = positional if patterns else positional[1:]
    recursive = name in ("rg", "ag", "ack") or has_option(options, "-r", "-R", "--recursive")
    if not files and recursive:
        files = [Arg(".")]
    flow = read_files_or_stdin(run, files)
    if listing or has_option(options, "-l", "-L", "--files-with-matches", "--files-without-match", "-c", "--count"):
        return Flow(names=flow.files)
    return flow


def _sed(run: Run, name: str, args: list[Arg]) -> Flow:
    options, positional = split_options(args, "efl", {"expression", "file", "line-length"})
    scripts = option_values(options, "-e", "--expression")
    for value in option_values(options, "-f", "--file"):
        run.read(value)
        run.note(f"the sed script in {value.text} is not examined")
    if not scripts and not has_option(options, "-f", "--file") and positional:
        scripts, positional = positional[:1], positional[1:]
    if any(_SED_EXEC.search(s.text) for s in scripts):
        run.opaque("the sed script runs commands")
    flow = read_files_or_stdin(run, positional)
    if has_option(options, "-i", "--in-place"):
        for arg in positional:
            run.write(arg, run.content(run.path(p) for p in arg.paths))
        return NO_FLOW
    return flow


def _awk(run: Run, name: str, args: list[Arg]) -> Flow:
    options, positional = split_options(args, "fFv", {"file", "field-separator", "assign", "include", "source"})
    programs = option_values(options, "-f", "--file", "--include")
    for value in programs:
        run.read(value)
        run.opaque(f"the awk program in {value.text} is not examined")
    if not programs and positional:
        program, positional = positional[0], positional[1:]
        if _AWK_EXEC.search(program.text):
            run.opaque("the awk program runs commands or opens connections")
    files = [a for a in positional if not re.match(r"[A-Za-z_]\w*=", a.text)]
    return read_files_or_stdin(run, files)


def _jq(run: Run, name: str, args: list[Arg]) -> Flow:
    positional: list[Arg] = []
    from_file = False
    i = 0
    while i < len(args):
        text = args[i].text
        if text in ("--arg", "--argjson") and i + 2 < len(args):
            i += 3
            continue
        if text in ("--slurpfile", "--rawfile") and i + 2 < len(args):
            run.read(args[i + 2])
            i += 3
            continue
        if text in ("-f", "--from-file", "-L") and i + 1 < len(args):
            from_file = from_file or text != "-L"
            if text != "-L":
                run.read(args[i + 1])
            i += 2
            continue
        if text.startswith("-") and text != "-":
            i += 1
            continue
        positional.append(args[i])
        i += 1
    if name == "yq" and positional and positional[0].text in ("eval", "e", "eval-all", "ea"):
        positional = positional[1:]
    files = positional if from_file else positional[1:]
    flow = read_files_or_stdin(run, files)
    if name == "yq" and any(a.text in ("-i", "--inplace") for a in args):
        for arg in files:
            run.write(arg, run.content(run.path(p) for p in arg.paths))
    return flow


def _tee(run: Run, name: str, args: list[Arg]) -> Flow:
    _, files = split_options(args, "", {"output-error"})
    for arg in files:
        run.write(arg, run.stdin)
    return run.stdin


def _copy(run: Run, name: str, args: list[Arg]) -> Flow:
    short = {"install": "mogtSCTD"}.get(name, "tS")
    long = {"target-directory", "suffix", "mode", "owner", "group", "backup", "sparse", "reflink"}
    options, positional = split_options(args, short, long)
    targets = option_values(options, "-t", "--target-directory")
    if name == "install" and has_option(options, "-d", "--directory"):
        for arg in positional:
            run.write(arg)
        return NO_FLOW
    if targets:
        sources, target = positional, targets[-1]
    elif len(positional) >= 2:
        sources, target = positional[:-1], positional[-1]
    elif name == "ln" and positional:
        sources, target = positional, Arg(posixpath.basename(positional[0].text.rstrip("/")) or ".")
    else:
        return NO_FLOW
    parts = []
    for source in sources:
        if name in ("cp", "install"):
            parts.append(run.read_content(source))
        else:
            parts.append(run.content(run.path(p) for p in source.paths))
        if name == "mv":
            run.write(source)
    run.write(target, merge(parts))
    return NO_FLOW


def _dd(run: Run, name: str, args: list[Arg]) -> Flow:
    flow, target = run.stdin, None
    for arg in args:
        if arg.text.startswith("if="):
            flow = run.read_content(arg.part(arg.text[3:]))
        elif arg.text.startswith("of="):
            target = arg.part(arg.text[3:])
    if target is None:
        return flow
    run.write(target, flow)
    return NO_FLOW


def _summarise(run: Run, name: str, args: list[Arg]) -> Flow:
    """``du``, ``tree``, ``stat``, ``lsof``: they print the names of the files they are given (or all)."""
    return Flow(names=tuple(run.path(a.text) for a in args if not a.text.startswith("-")) or ("*",))


def _list(run: Run, name: str, args: list[Arg]) -> Flow:
    _, positional = split_options(args, "ITw", {"ignore", "hide", "width", "format", "sort", "time-style"})
    dirs = [run.path(a.text) for a in positional] or ["."]
    return Flow(names=tuple("*" if d == "." else posixpath.join(d, "*") for d in dirs))


def _tar(run: Run, name: str, args: list[Arg]) -> Flow:
    args = list(args)
    if args and re.fullmatch(r"[A-Za-z]+", args[0].text):
        args[0] = args[0].part("-" + args[0].text)
    long = "file directory files-from exclude-from exclude use-compress-program to-command checkpoint-action"
    long += " transform xform format owner group mode mtime newer after-date label suffix blocking-factor"
    long += " record-size rsh-command info-script new-volume-script index-file volno-file tape-length"
    options, members = split_options(args, "fCTXbIHKLNgVF", set(long.split()))
    for key in ("--to-command", "--rsh-command", "--info-script", "--new-volume-script", "-F"):
        if has_option(options, key):
            run.opaque(f"tar {key} runs a program")
    for value in option_values(options, "--checkpoint-action"):
        if "exec" in value.text:
            run.opaque("tar --checkpoint-action runs a program")
    for value in option_values(options, "-I", "--use-compress-program"):
        if (value.text.split() or [""])[0] not in _SAFE_TAR_COMPRESSORS:
            run.opaque(f"tar runs {value.text} to compress")
    for value in option_values(options, "-T", "--files-from", "-X", "--exclude-from"):
        run.read(value)
    archives = option_values(options, "-f", "--file")
    archive = archives[-1] if archives else None
    directories = option_values(options, "-C", "--directory")
    base = directories[0].text if directories else ""
    host = None
    if archive is not None and not has_option(options, "--force-local"):
        host = remote_host(archive.text)
    if has_option(options, "-c", "--create", "-r", "--append", "-u", "--update"):
        parts = []
        for member in members:
            path = member.text if not base or member.text.startswith(("/", "~")) else posixpath.join(base, member.text)
            parts.append(run.read_content(member.part(path)))
        if has_option(options, "-T", "--files-from"):
            parts.append(Flow(files=("*",)))
        flow = merge(parts)
        if archive is None or archive.text == "-":
            return flow
        if host is not None:
            run.host(host)
            run.upload(flow)
        else:
            run.write(archive, flow)
        return NO_FLOW
    if has_option(options, "-x", "--extract", "--get", "-t", "--list", "-d", "--diff", "--compare"):
        if host is not None:
            run.host(host)
            content = Flow(remote=True)
        elif archive is None or archive.text == "-":
            content = run.stdin
        else:
            content = run.read_content(archive)
            content = content | Flow(remote=any(p in run.effects.fetched for p in content.files))
        if not has_option(options, "-x", "--extract", "--get"):
            return NO_FLOW
        if has_option(options, "-O", "--to-stdout"):
            return content
        run.write(Arg(base or "."), content)
    return NO_FLOW


def _zip(run: Run, name: str, args: list[Arg]) -> Flow:
    if name in ("7z", "7za", "7zr"):
        command, rest = (args[0].text, args[1:]) if args else ("", [])
        positional = [a for a in rest if not a.text.startswith("-")]
        outputs = [a.part(a.text[2:]) for a in rest if a.text.startswith("-o")]
        if command == "a" and positional:
            run.write(positional[0], read_files_or_stdin(run, positional[1:]))
        elif command in ("x", "e") and positional:
            content = run.read_content(positional[0])
            run.write(outputs[0] if outputs else Arg("."), content | Flow(remote=_fetched(run, content)))
        return NO_FLOW
    if any(a.text in ("-TT", "--unzip-command") for a in args):
        run.opaque(f"{name} runs a test command")
    names: list[Arg] = []
    skip = False
    for arg in args:
        if arg.text in ("-x", "-i"):
            skip = True
        elif arg.text.startswith("-") and arg.text != "-":
            skip = False
        elif not skip:
            names.append(arg)
    if name == "zip":
        if not names:
            return NO_FLOW
        members = names[1:] + ([Arg(n) for n in run.stdin.names] if any(a.text == "-@" for a in args) else [])
        flow = read_files_or_stdin(run, members) if members else NO_FLOW
        if names[0].text == "-":
            return flow
        run.write(names[0], flow)
        return NO_FLOW
    archive = names[0] if names else None
    content = run.stdin if archive is None or archive.text == "-" else run.read_content(archive)
    if any(a.text == "-p" for a in args):
        return content
    if name == "unzip" and any(a.text in ("-l", "-t", "-v", "-Z") for a in args):
        return NO_FLOW
    targets = [args[i + 1] for i, a in enumerate(args[:-1]) if a.text == "-d"]
    run.write(targets[0] if targets else Arg("."), content | Flow(remote=_fetched(run, content)))
    return NO_FLOW


def _fetched(run: Run, content: Flow) -> bool:
    return content.remote or any(path in run.effects.fetched for path in content.files)


def _compress(run: Run, name: str, args: list[Arg]) -> Flow:
    options, files = split_options(args, "oSb" if name in ("zstd", "unzstd", "lz4") else "S", {"suffix", "output"})
    to_stdout = has_option(options, "-c", "--stdout", "--to-stdout")
    if not files or to_stdout:
        return read_files_or_stdin(run, files)
    decompress = has_option(options, "-d", "--decompress", "--uncompress") or not _COMPRESSORS.get(name, "x")
    for arg in files:
        content = run.read_content(arg)
        outputs = option_values(options, "-o", "--output")
        if outputs:
            target = outputs[0].text
        elif decompress:
            target = re.sub(r"\.(gz|bz2|xz|lzma|zst|lz4|Z|tgz)$", "", arg.text)
        else:
            target = arg.text + (_COMPRESSORS.get(name) or ".gz")
        run.write(arg.part(target), content)
    return NO_FLOW


def _find(run: Run, name: str, args: list[Arg]) -> Flow:
    i = 0
    while i < len(args) and (args[i].text in ("-H", "-L", "-P") or args[i].text.startswith("-O")):
        i += 1
    roots: list[str] = []
    while i < len(args) and not args[i].text.startswith(("-", "(", "!", ")")):
        roots.append(run.path(args[i].text))
        i += 1
    expression = args[i:]
    patterns = [expression[k + 1].text for k, a in enumerate(expression[:-1]) if a.text in ("-name", "-iname")]
    found = tuple(posixpath.join(root, "**", p) for root in roots or ["."] for p in patterns or ["*"])
    k = 0
    while k < len(expression):
        text = expression[k].text
        if text in ("-exec", "-execdir", "-ok", "-okdir"):
            end = k + 1
            while end < len(expression) and expression[end].text not in (";", "+"):
                end += 1
            inner: list[Arg] = []
            for arg in expression[k + 1 : end]:
                if "{}" in arg.text:
                    inner.extend(arg.part(arg.text.replace("{}", f)) for f in found)
                else:
                    inner.append(arg)
            run.dispatch(inner, NO_FLOW)
            k = end + 1
            continue
        if text in ("-fprint", "-fprint0", "-fprintf", "-fls") and k + 1 < len(expression):
            run.write(expression[k + 1])
        elif text == "-files0-from" and k + 1 < len(expression):
            run.read(expression[k + 1])
        elif text == "-delete":
            for path in found:
                run.write(path)
        k += 1
    return Flow(names=found)


def _xargs(run: Run, name: str, args: list[Arg]) -> Flow:
    long = {"replace", "eof", "max-lines", "max-args", "max-procs", "max-chars", "delimiter", "arg-file"}
    options, command = split_options(args, "IELnPsda", long | {"process-slot-var"}, stop_at_positional=True)
    replace = [v.text for v in option_values(options, "-I", "--replace")]
    if has_option(options, "-i"):
        replace.append("{}")
    names = run.stdin.names
    for value in option_values(options, "-a", "--arg-file"):
        run.read(value)
        names = ()
    if not names:
        names = ("*",)
        run.note(f"{name} runs a command on names it reads")
    # The arguments xargs adds are the words of its input: names, and whatever content the input carries.
    content = Flow(run.stdin.files, (), run.stdin.data, run.stdin.unknown, None, run.stdin.remote)
    carries = bool(content.files or content.data or content.unknown)
    command = command or [Arg("echo")]
    inner = [command[0]]
    for arg in command[1:]:
        token = next((r for r in replace if r in arg.text), None)
        if token:
            flow = merge([arg.flow, content])
            inner.extend(Arg(arg.text.replace(token, n), arg.dynamic or carries, flow, arg.quoted) for n in names)
        else:
            inner.append(arg)
    if not replace:
        inner.extend(Arg(n, carries, content) for n in names)
    return run.dispatch(inner, NO_FLOW)


LOCAL_PROGRAMS = (
    *_READERS,
    declare(_GREPS, _grep),
    declare("sed gsed", _sed),
    declare("awk gawk mawk nawk", _awk),
    declare("jq yq gojq", _jq),
    declare("tee", _tee),
    declare("dd", _dd),
    declare("find", _find),
    declare("xargs", _xargs),
    declare("tar gtar bsdtar", _tar),
    declare("cp mv install ln", _copy),
    declare("zip unzip 7z 7za 7zr", _zip),
    declare(_COMPRESSORS, _compress),
    *_WRITERS,
    _QUIET,
    declare("du tree stat lsof", _summarise),
    declare("ls dir exa eza fd fdfind locate", _list),
    _DEV_TOOLS,
)
"""Local programs: readers and filters, file management, archives, ``find`` and ``xargs``."""
