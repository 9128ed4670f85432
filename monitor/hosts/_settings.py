"""Claude Code settings: add and remove the trifecta hook entries of a ``settings.json``.

Claude Code reads hooks from ``~/.claude/settings.json`` (the user's, or ``$CLAUDE_CONFIG_DIR/settings.json``),
``<project>/.claude/settings.json`` (shared with the project) and ``<project>/.claude/settings.local.json``
(personal, not committed). :func:`install_hooks` adds one entry per hook event that runs the hook command
(:func:`build_hook_command`); :func:`uninstall_hooks` removes them again. Both:

- touch only trifecta's own entries (a hook whose command runs ``monitor hook claude-code`` or
  ``trifecta hook claude-code``): every other key and every other hook stays, in its order;
- are idempotent: installing twice writes once; installing with other options replaces trifecta's entries;
- copy the file to ``settings.json.<UTC time>.bak`` beside it before changing it (never when nothing changes);
- write atomically (a temporary file in the same folder, then a rename), keeping the file's permissions, and
  write through a symbolic link to the file it points to;
- refuse a file that is not JSON, has comments, or whose ``hooks`` has an unexpected shape, with
  :class:`~monitor.errors.InputError` naming ``file:line``; nothing is written then.

Standard library only (plus :mod:`monitor.errors`, which imports nothing).
"""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import re
import secrets
import shlex
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from monitor.errors import InputError

HOOK_EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure", "SessionEnd")
"""The Claude Code hook events the hook answers, in the order a session meets them."""
TOOL_EVENTS = frozenset({"PreToolUse", "PostToolUse", "PostToolUseFailure"})
"""Events whose entries take a tool-name ``matcher`` (``*``: every tool, MCP tools included)."""
DEFAULT_TIMEOUT = 60
"""Seconds Claude Code gives each hook process before it stops it (a stopped hook lets the call through)."""

_OURS = re.compile(r"\b(?:monitor|trifecta)['\"]?\s+hook\s+claude-code\b")
_BOM = "\ufeff"
_ATTEMPTS = 3
_WHITESPACE = " \t\r\n"


@dataclass(frozen=True)
class InstallResult:
    """What :func:`install_hooks` or :func:`uninstall_hooks` did, or would do (``dry_run``), to one file.

    ``before`` is the file's text ("" when it did not exist), ``after`` the text it has (or would have);
    ``changed`` says whether they differ, ``written`` whether the file was written (never in a dry run),
    ``backup`` where the previous content was copied. ``added`` lists the events given a trifecta entry;
    ``removed`` counts trifecta hooks taken out (replaced or uninstalled).
    """

    path: Path
    existed: bool
    before: str
    after: str
    changed: bool
    written: bool
    backup: Path | None
    added: tuple[str, ...]
    removed: int

    def render_diff(self) -> str:
        """A unified diff from ``before`` to ``after`` ("" when nothing changes)."""
        lines = difflib.unified_diff(
            self.before.splitlines(keepends=True),
            self.after.splitlines(keepends=True),
            fromfile=str(self.path) if self.existed else "/dev/null",
            tofile=str(self.path),
        )
        return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def resolve_settings_path(project: Path | None = None, *, user: bool = False, local: bool = False) -> Path:
    """The settings file to change: the user's (``user``, the default when no ``project`` is given), or the
    project's ``.claude/settings.json`` (``.claude/settings.local.json`` with ``local``).

    The user's file is ``$CLAUDE_CONFIG_DIR/settings.json`` when that variable is set, as Claude Code reads it,
    else ``~/.claude/settings.json``. ``local`` without ``project`` means the current folder's project.
    """
    if user and (project is not None or local):
        raise ValueError("choose the user's settings or a project's, not both")
    if project is None and not local:
        configured = os.environ.get("CLAUDE_CONFIG_DIR")
        base = Path(configured).expanduser() if configured else Path.home() / ".claude"
        return base.absolute() / "settings.json"
    folder = (project if project is not None else Path.cwd()).expanduser().absolute()
    return folder / ".claude" / ("settings.local.json" if local else "settings.json")


def build_hook_command(
    *,
    python: str | None = None,
    state_dir: Path | None = None,
    rules: Iterable[Path] = (),
    builtin_rules: bool = True,
    posture: str | None = None,
    on_allow: str | None = None,
    timeout: float | None = None,
    policy: str | None = None,
    scope: Path | None = None,
) -> str:
    """The shell command Claude Code runs for each event: ``<python> -P -m monitor hook claude-code [options]``.

    ``python`` defaults to the running interpreter, so the hook works without ``trifecta`` on ``PATH``; ``-P``
    keeps the project folder (the hook's working directory) off ``sys.path``, so a project's own ``monitor``
    package cannot stand in for this one. Paths are made absolute; every word is quoted for the shell.
    """
    words = [python or sys.executable, "-P", "-m", "monitor", "hook", "claude-code"]
    if state_dir is not None:
        words += ["--state-dir", str(state_dir.expanduser().absolute())]
    for folder in rules:
        words += ["--rules", str(folder.expanduser().absolute())]
    if not builtin_rules:
        words.append("--no-builtin-rules")
    if posture is not None:
        words += ["--posture", posture]
    if policy is not None:
        words += ["--policy", policy]
    if scope is not None:
        words += ["--scope", str(scope.expanduser().absolute())]
    if on_allow is not None:
        words += ["--on-allow", on_allow]
    if timeout is not None:
        words += ["--timeout", f"{timeout:g}"]
    return shlex.join(words)


def is_trifecta_hook(hook: object) -> bool:
    """Whether one hook of a settings file (``{"type": "command", "command": …}``) is the monitor's hook and nothing
    else: its command is exactly ``<python> [-P] -m monitor hook claude-code`` or ``<…/>trifecta hook claude-code``
    followed only by the hook's own options (what ``install`` writes, or the same written by hand). A command that
    only mentions the hook (a user's audit hook echoing it, a ``tee … | trifecta hook`` wrapper) is not."""
    if not isinstance(hook, dict) or hook.get("type", "command") != "command":
        return False
    command = hook.get("command")
    if not isinstance(command, str) or not _OURS.search(command):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    options = _hook_options(words)
    if options is None:
        return False
    from monitor.hosts._hook import UsageError, parse_options

    try:
        parsed = parse_options(options)
    except UsageError:
        return False
    return not (parsed.help or parsed.stop)


def _hook_options(words: list[str]) -> list[str] | None:
    """The words after the hook's own invocation, or None when ``words`` do not start with one."""
    if not words:
        return None
    program = os.path.basename(words[0])
    if program == "trifecta" and words[1:3] == ["hook", "claude-code"]:
        return words[3:]
    if program.startswith("python"):
        rest = words[2:] if words[1:2] == ["-P"] else words[1:]
        if rest[:4] == ["-m", "monitor", "hook", "claude-code"]:
            return rest[4:]
    return None


def build_hook_entries(command: str, *, timeout: int = DEFAULT_TIMEOUT) -> dict[str, dict[str, Any]]:
    """One matcher entry per event in :data:`HOOK_EVENTS`, each running ``command``."""
    entries: dict[str, dict[str, Any]] = {}
    for event in HOOK_EVENTS:
        hook = {"type": "command", "command": command, "timeout": timeout}
        entries[event] = {"matcher": "*", "hooks": [hook]} if event in TOOL_EVENTS else {"hooks": [hook]}
    return entries


def install_hooks(
    settings_path: Path, command: str, *, timeout: int = DEFAULT_TIMEOUT, dry_run: bool = False
) -> InstallResult:
    """Add (or replace) the trifecta entries of ``settings_path`` so that every event in :data:`HOOK_EVENTS`
    runs ``command``; create the file and its folder when missing.

    An event that already has a trifecta entry gets the new one in its place; other events get it last.
    Raises :class:`~monitor.errors.InputError` (``file:line: …``) for a file that cannot be changed safely.
    """
    if not is_trifecta_hook({"type": "command", "command": command}):
        raise ValueError(f"{command!r} is not a command build_hook_command writes: it could never be uninstalled")
    return _change(settings_path, lambda hooks: _merge(hooks, build_hook_entries(command, timeout=timeout)), dry_run)


_MANAGED_SETTINGS = (
    Path("/etc/claude-code/managed-settings.json"),
    Path("/Library/Application Support/ClaudeCode/managed-settings.json"),
)


def find_install_problems(settings_path: Path, project: Path | None = None) -> list[str]:
    """What would keep the hook from running as installed in ``settings_path``, one sentence each: a settings file
    Claude Code reads for this project (managed, the user's, the project's, the project's local one) that sets
    ``disableAllHooks``, and another of them that runs the hook too (each event would then run it twice)."""
    folder = (project if project is not None else Path.cwd()).expanduser().absolute()
    files = [
        *_MANAGED_SETTINGS,
        resolve_settings_path(user=True),
        folder / ".claude" / "settings.json",
        folder / ".claude" / "settings.local.json",
    ]
    problems: list[str] = []
    for path in dict.fromkeys([settings_path, *files]):
        try:
            settings = json.loads(path.read_text(encoding="utf-8-sig"))
        except (OSError, ValueError):
            continue
        if not isinstance(settings, dict):
            continue
        if settings.get("disableAllHooks") is True:
            problems.append(f"{path} sets disableAllHooks: true: Claude Code runs no hooks, so nothing is monitored")
        hooks = settings.get("hooks")
        if path != settings_path and isinstance(hooks, dict) and _runs_trifecta(hooks):
            problems.append(f"{path} runs the trifecta hook too: each event would be checked twice")
    return problems


def _runs_trifecta(hooks: dict[str, Any]) -> bool:
    return any(
        is_trifecta_hook(hook)
        for groups in hooks.values()
        if isinstance(groups, list)
        for group in groups
        if isinstance(group, dict) and isinstance(group.get("hooks"), list)
        for hook in group["hooks"]
    )


def uninstall_hooks(settings_path: Path, *, dry_run: bool = False) -> InstallResult:
    """Remove every trifecta hook from ``settings_path``; drop the event lists and the ``hooks`` key that this
    leaves empty. A missing file, or one without trifecta hooks, is left as it is (``changed`` is false)."""
    return _change(settings_path, lambda hooks: _merge(hooks, {}), dry_run)


# -- merging ------------------------------------------------------------------------------------------------


def _merge(hooks: dict[str, Any], entries: dict[str, dict[str, Any]]) -> tuple[dict[str, Any], tuple[str, ...], int]:
    """``hooks`` without trifecta's hooks, plus ``entries``; the events added and the hooks removed."""
    merged: dict[str, Any] = {}
    removed = 0
    for event, groups in hooks.items():
        kept: list[Any] = []
        place: int | None = None
        for group in groups:
            inner = group.get("hooks")
            mine = [hook for hook in inner if is_trifecta_hook(hook)] if isinstance(inner, list) else []
            if not mine:
                kept.append(group)
                continue
            removed += len(mine)
            rest = [hook for hook in inner if not is_trifecta_hook(hook)]
            if rest:
                kept.append({**group, "hooks": rest})
            elif place is None:
                place = len(kept)
        if event in entries:
            kept.insert(len(kept) if place is None else place, entries[event])
        if kept or not groups:
            merged[event] = kept
    for event, entry in entries.items():
        merged.setdefault(event, [entry])
    return merged, tuple(entries), removed


_Edit = Callable[[dict[str, Any]], tuple[dict[str, Any], tuple[str, ...], int]]


def _change(path: Path, edit: _Edit, dry_run: bool) -> InstallResult:
    for _ in range(_ATTEMPTS):
        raw, existed = _read_bytes(path)
        text, bom = _decode(path, raw)
        settings = _parse(path, text)
        hooks = settings.get("hooks", {})
        new_hooks, added, removed = edit(hooks)
        updated = dict(settings)
        if new_hooks:
            updated["hooks"] = new_hooks
        elif "hooks" in updated and hooks:
            del updated["hooks"]
        if _canonical(updated) == _canonical(settings):
            return InstallResult(path, existed, text, text, False, False, None, added, removed)
        after = _render(updated, text)
        if dry_run:
            return InstallResult(path, existed, text, after, True, False, None, added, removed)
        backup = _write_backup(path, raw) if existed else None
        if _read_bytes(path) != (raw, existed):
            continue  # written meanwhile (Claude Code saves its settings too): start again from the new content
        _write_atomically(path, (bom + after).encode("utf-8"))
        return InstallResult(path, existed, text, after, True, True, backup, added, removed)
    raise InputError(str(path), f"changed {_ATTEMPTS} times while being edited; nothing was written")


def _canonical(value: object) -> str:
    # Order-sensitive, formatting-blind: a hand-formatted file that already holds the same entries is kept.
    return json.dumps(value, ensure_ascii=True, separators=(",", ":"))


def _render(settings: dict[str, Any], previous: str) -> str:
    indent = _detect_indent(previous)
    text = json.dumps(settings, indent=indent, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate written as \udxxx: keep it escaped
        text = json.dumps(settings, indent=indent, ensure_ascii=True)
    return text + "\n"


def _detect_indent(text: str) -> str | int:
    for line in text.splitlines()[1:]:
        content = line.lstrip(" \t")
        if content and content != line:
            margin = line[: len(line) - len(content)]
            return "\t" if margin.startswith("\t") else min(len(margin), 8)
    return 2


# -- reading ------------------------------------------------------------------------------------------------


class _DuplicateKeyError(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _reject_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for key, item in pairs:
        if key in value:
            raise _DuplicateKeyError(key)
        value[key] = item
    return value


def _read_bytes(path: Path) -> tuple[bytes, bool]:
    try:
        return path.read_bytes(), True
    except FileNotFoundError:
        return b"", False
    except OSError as exc:
        raise InputError(str(path), f"cannot read the settings: {exc.strerror or exc}") from None


def _decode(path: Path, raw: bytes) -> tuple[str, str]:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InputError(f"{path}:{line}", "not UTF-8 text; nothing was written") from None
    return (text[1:], _BOM) if text.startswith(_BOM) else (text, "")


def _parse(path: Path, text: str) -> dict[str, Any]:
    if not text.strip(_WHITESPACE):
        return {}
    try:
        settings = json.loads(text, object_pairs_hook=_reject_duplicates)
    except json.JSONDecodeError as exc:
        comment = _find_comment(text)
        if comment is not None:
            raise InputError(
                f"{path}:{_line_at(text, comment)}",
                "a comment: settings files are plain JSON (Claude Code rejects comments too); "
                "remove the comments and run the command again; nothing was written",
            ) from None
        raise InputError(
            f"{path}:{exc.lineno}", f"not valid JSON: {exc.msg} (column {exc.colno}); nothing was written"
        ) from None
    except _DuplicateKeyError as exc:
        raise InputError(
            f"{path}:{_line_of_duplicate(text, exc.key)}",
            f"the key {exc.key!r} appears twice in one object; keep one and run the command again; nothing was written",
        ) from None
    except RecursionError:
        raise InputError(f"{path}:1", "nested too deeply to be settings; nothing was written") from None
    if not isinstance(settings, dict):
        raise InputError(f"{path}:1", "the settings are not a JSON object; nothing was written")
    _check_hooks(path, text, settings)
    return settings


def _check_hooks(path: Path, text: str, settings: dict[str, Any]) -> None:
    """``hooks`` must be ``{event: [{"hooks": [{…}, …], …}, …]}`` wherever trifecta has to look."""
    if "hooks" not in settings:
        return

    def refuse(where: Sequence[str | int], expected: str) -> InputError:
        pointer = "".join(f"[{step}]" if isinstance(step, int) else f".{step}" for step in where).lstrip(".")
        return InputError(
            f"{path}:{_line_of(text, where)}",
            f"{pointer} should be {expected}; fix it and run the command again; nothing was written",
        )

    hooks = settings["hooks"]
    if not isinstance(hooks, dict):
        raise refuse(["hooks"], "an object of hook events")
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            raise refuse(["hooks", event], "a list of matcher entries")
        for i, group in enumerate(groups):
            if not isinstance(group, dict):
                raise refuse(["hooks", event, i], 'an object with a "hooks" list')
            inner = group.get("hooks")
            if "hooks" in group and not isinstance(inner, list):
                raise refuse(["hooks", event, i, "hooks"], "a list of hooks")
            for j, hook in enumerate(inner or []):
                if not isinstance(hook, dict):
                    raise refuse(["hooks", event, i, "hooks", j], 'an object like {"type": "command", …}')


# -- locating lines -----------------------------------------------------------------------------------------


def _line_at(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _skip_whitespace(text: str, offset: int) -> int:
    while offset < len(text) and text[offset] in _WHITESPACE:
        offset += 1
    return offset


def _line_of(text: str, where: Sequence[str | int]) -> int:
    """The line where the value at ``where`` (keys and indexes from the top) starts in valid JSON ``text``."""
    try:
        return _line_at(text, _offset_of(text, where))
    except (IndexError, ValueError):
        return 1


def _offset_of(text: str, where: Sequence[str | int]) -> int:
    decoder = json.JSONDecoder()
    offset = _skip_whitespace(text, 0)
    for step in where:
        found = None
        if text[offset] == "{":
            offset = _skip_whitespace(text, offset + 1)
            while text[offset] != "}":
                key, offset = decoder.raw_decode(text, offset)
                offset = _skip_whitespace(text, _skip_whitespace(text, offset) + 1)
                if key == step:
                    found = offset
                offset = _skip_whitespace(text, decoder.raw_decode(text, offset)[1])
                offset = _skip_whitespace(text, offset + 1) if text[offset] == "," else offset
        else:
            offset, index = _skip_whitespace(text, offset + 1), 0
            while text[offset] != "]":
                if index == step:
                    found = offset
                offset = _skip_whitespace(text, decoder.raw_decode(text, offset)[1])
                offset = _skip_whitespace(text, offset + 1) if text[offset] == "," else offset
                index += 1
        if found is None:
            break
        offset = found
    return offset


def _line_of_duplicate(text: str, key: str) -> int:
    pattern = re.compile(re.escape(json.dumps(key)) + r"\s*:")
    matches = list(pattern.finditer(text))
    return _line_at(text, matches[1].start()) if len(matches) > 1 else 1


def _find_comment(text: str) -> int | None:
    """The offset of the first ``//`` or ``/*`` outside a string, if any."""
    in_string = escaped = False
    for offset, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char == "/" and text[offset + 1 : offset + 2] in ("/", "*"):
            return offset
    return None


# -- writing ------------------------------------------------------------------------------------------------


def _write_backup(path: Path, raw: bytes) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    mode = _mode_of(path) or 0o600
    for attempt in range(1, 1000):
        suffix = "" if attempt == 1 else f"-{attempt}"
        backup = path.with_name(f"{path.name}.{stamp}{suffix}.bak")
        try:
            descriptor = os.open(backup, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        except FileExistsError:
            continue
        except OSError as exc:
            raise InputError(
                str(backup), f"cannot write the backup: {exc.strerror or exc}; nothing was written"
            ) from None
        try:
            with os.fdopen(descriptor, "wb") as out:
                out.write(raw)
                out.flush()
                os.fsync(out.fileno())
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(backup)
            raise InputError(
                str(backup), f"cannot write the backup: {exc.strerror or exc}; nothing was written"
            ) from None
        return backup
    raise InputError(str(path), "too many backups written this second; nothing was written")


def _mode_of(path: Path) -> int | None:
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        return None


def _write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to a new file beside ``path`` (through a symbolic link: beside its target), then rename
    it over the old one: a reader sees the old content or the new, never a part. The old file's permissions
    stay; a new file gets the usual ones (the umask applies)."""
    target = path.resolve() if path.is_symlink() else path
    mode = _mode_of(target)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        descriptor, temporary = _create_temporary(target)
    except OSError as exc:
        raise InputError(str(path), f"cannot write the settings: {exc.strerror or exc}") from None
    try:
        with os.fdopen(descriptor, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        if mode is not None:
            os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        if isinstance(exc, OSError):
            raise InputError(str(path), f"cannot write the settings: {exc.strerror or exc}") from None
        raise
    with contextlib.suppress(OSError):
        folder = os.open(target.parent, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)


def _create_temporary(target: Path) -> tuple[int, Path]:
    for _ in range(100):
        temporary = target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
        try:
            return os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), temporary
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name beside {target}")
