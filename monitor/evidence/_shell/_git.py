"""git for the shell parser: which subcommands stay local, which reach a remote, and what they send.

``git push`` sends the repository (recorded as the repository's path, ``.`` by default) to its remote. A remote
given as a URL or ``host:path`` names its host; a remote given by name (``origin``) names none the command
shows, so the host is unknown, unless the same command added it (``git remote add x URL && git push x``). A
remote that is a local path is not the network. Options that make git run programs (``-c core.pager=...``,
``-c alias.x=!cmd``, ``--exec-path``, ``ext::`` remotes, ``--upload-pack``) make the parse opaque; the
command they carry is parsed when it is shell text.
"""

from __future__ import annotations

import posixpath
import re

from monitor.evidence._shell._core import (
    NO_FLOW,
    REMOTE_FLOW,
    Arg,
    Flow,
    Run,
    has_option,
    option_values,
    remote_host,
    split_options,
)
from monitor.evidence._shell._program import declare

# Configuration keys whose value is a program git runs (or that turns on running one).
_PROGRAM_KEYS = re.compile(
    r"^(?:alias\..+|.*\.(?:pager|editor|sshcommand|askpass|hookspath|fsmonitor|gitproxy|external|textconv"
    r"|command|program|helper|clean|smudge|process|cmd|tool|path|execute)|protocol\.ext\..*|core\.worktree)$",
    re.IGNORECASE,
)
_LOCAL = frozenset(
    """status log blame shortlog describe rev-parse rev-list ls-tree cat-file show-ref for-each-ref reflog
    branch tag whatchanged name-rev merge-base cherry count-objects fsck verify-commit verify-tag check-ignore
    check-attr var version help config init add commit checkout switch restore reset rm mv merge rebase
    cherry-pick revert clean notes worktree gc prune repack apply am format-patch bundle sparse-checkout
    range-diff annotate maintenance hash-object update-index write-tree commit-tree read-tree update-ref
    symbolic-ref mktag mktree pack-refs show-branch stage stash diff show grep ls-files bisect mergetool difftool
    citool gui request-pull""".split()
)
# Subcommands whose output is the repository's content (so a pipe carries it).
_PRINTS_CONTENT = frozenset(["diff", "show", "log", "cat-file", "grep", "blame", "annotate", "stash", "whatchanged"])
_NETWORK = frozenset(["push", "pull", "fetch", "clone", "ls-remote", "remote", "submodule", "send-email", "lfs"])
_GLOBAL_VALUED = frozenset(["-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--super-prefix"])


def _remote(run: Run, arg: Arg | None, *, sending: Flow = NO_FLOW) -> None:
    """Reach a git remote: a URL or ``host:path`` names its host, a name does not, a local path is no network."""
    text = "" if arg is None else arg.text
    url = run.context.remotes.get(text, text)
    if arg is not None and arg.dynamic:
        run.unknown_host()
    elif url.startswith("ext::"):
        run.opaque("git runs a program as its remote")
    elif url.startswith("file://") or url.startswith(("/", "./", "../", "~")) or url in (".", ".."):
        run.write(url.removeprefix("file://"), sending)
        return
    elif (host := remote_host(url)) is not None:
        run.host(host)
    else:
        run.unknown_host()
        run.note(f"git remote {url or '(default)'} is named, not shown: its host is unknown")
    run.upload(sending)


def _check_config(run: Run, setting: str) -> None:
    key, _, value = setting.partition("=")
    if _PROGRAM_KEYS.match(key.strip()):
        run.opaque(f"git -c {key.strip()} sets a program git runs")
        if value.strip():
            run.nested(value.strip().removeprefix("!"))


def _git(run: Run, name: str, args: list[Arg]) -> Flow:
    """``git``: global options, then the subcommand (see the module text)."""
    repo = "."
    i = 0
    while i < len(args) and args[i].text.startswith("-"):
        flag, eq, value = args[i].text.partition("=")
        if flag in _GLOBAL_VALUED and not eq:
            value = args[i + 1].text if i + 1 < len(args) else ""
            i += 1
        if flag == "-C":
            repo = posixpath.join(repo, value) if repo != "." else value
        elif flag == "-c":
            _check_config(run, value)
        elif flag == "--exec-path" and value:
            run.opaque("git --exec-path runs programs from another folder")
        elif flag == "--git-dir":
            repo = value or repo
        i += 1
    sub = args[i].text if i < len(args) else ""
    rest = args[i + 1 :]
    if sub in _LOCAL:
        return _local(run, sub, rest, repo)
    if sub in _NETWORK:
        return _network(run, sub, rest, repo)
    if not sub:
        return NO_FLOW
    run.opaque(f"unknown git subcommand {sub} (it may be an alias)")
    return NO_FLOW


def _local(run: Run, sub: str, rest: list[Arg], repo: str) -> Flow:
    if sub == "config":
        for k, arg in enumerate(rest[:-1]):
            if _PROGRAM_KEYS.match(arg.text):
                run.note(f"git config sets {arg.text}, a program git will run")
                run.write(posixpath.join(repo, ".git/config"), Flow(data=(rest[k + 1].text,)))
        return NO_FLOW
    if sub == "bisect" and rest and rest[0].text == "run":
        return run.dispatch(rest[1:])
    if sub == "rebase":
        for value in [rest[k + 1] for k, a in enumerate(rest[:-1]) if a.text in ("-x", "--exec")]:
            run.nested(value.text)
    if sub in ("mergetool", "difftool"):
        run.note(f"git {sub} runs the configured tool")
    if sub == "archive":
        options, _ = split_options(rest, "o", {"output", "remote", "format", "prefix"})
        for value in option_values(options, "--remote"):
            _remote(run, value)
        for value in option_values(options, "-o", "--output"):
            run.write(value, run.content([repo]))
            return NO_FLOW
        return run.content([repo])
    if sub in ("apply", "am"):
        for arg in rest:
            if not arg.text.startswith("-"):
                run.read(arg)
    if sub == "ls-files":
        return Flow(names=(posixpath.join(repo, "*") if repo != "." else "*",))
    if sub == "format-patch" and not any(a.text == "--stdout" for a in rest):
        return NO_FLOW
    return run.content([repo]) if sub in _PRINTS_CONTENT or sub == "format-patch" else NO_FLOW


def _network(run: Run, sub: str, rest: list[Arg], repo: str) -> Flow:
    valued = {"repo", "push-option", "receive-pack", "exec", "upload-pack", "depth", "branch", "origin"}
    valued |= {"reference", "separate-git-dir", "template", "config", "jobs", "filter", "shallow-since"}
    options, positional = split_options(rest, "obucj", valued)
    for flag in ("--receive-pack", "--exec", "--upload-pack", "-u", "--template"):
        if has_option(options, flag):
            run.opaque(f"git {sub} {flag} runs a program")
    for value in option_values(options, "-c", "--config"):
        _check_config(run, value.text)
    if sub == "push":
        targets = option_values(options, "--repo") or positional[:1]
        _remote(run, targets[0] if targets else None, sending=run.content([repo]))
        return REMOTE_FLOW
    if sub in ("pull", "fetch", "ls-remote"):
        _remote(run, positional[0] if positional else None)
        return REMOTE_FLOW
    if sub == "clone":
        if not positional:
            return NO_FLOW
        _remote(run, positional[0])
        url = positional[0].text.rstrip("/")
        default = re.sub(r"\.git$", "", re.split(r"[/:]", url)[-1]) or "repo"
        run.write(positional[1] if len(positional) > 1 else positional[0].part(default), REMOTE_FLOW, fetched=True)
        return NO_FLOW
    if sub == "remote":
        action = positional[0].text if positional else ""
        if action in ("add", "set-url") and len(positional) >= 3:
            run.context.remotes[positional[1].text] = positional[2].text
        elif action in ("update", "show", "prune"):
            _remote(run, positional[1] if len(positional) > 1 else None)
        return NO_FLOW
    if sub == "submodule":
        action = positional[0].text if positional else ""
        if action == "foreach":
            return run.nested(" ".join(a.text for a in positional[1:]))
        if action in ("update", "sync", "add"):
            _remote(run, positional[1] if action == "add" and len(positional) > 1 else None)
        return NO_FLOW
    if sub == "send-email":
        for arg in positional:
            run.upload_file(arg)
        run.unknown_host()
        return NO_FLOW
    run.unknown_host()
    if sub == "lfs" and positional and positional[0].text == "push":
        run.upload(run.content([repo]))
    return REMOTE_FLOW


GIT_PROGRAMS = (declare("git", _git),)
"""git, its own family: local subcommands, remotes, and what a push sends."""
