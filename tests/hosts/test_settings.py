"""Installing the Claude Code hook into settings.json: what a user's file looks like before and after."""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path
from typing import Any

import pytest
from support.claude_settings import ours_in, read_settings

from monitor.errors import InputError
from monitor.hosts.claude_code import (
    HOOK_EVENTS,
    build_hook_command,
    install_hooks,
    is_trifecta_hook,
    resolve_settings_path,
    uninstall_hooks,
)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "docs" / "examples" / "hosts"
PYTHON = "/opt/trifecta/bin/python"
COMMAND = build_hook_command(python=PYTHON)
USER_FORMATTER = {"type": "command", "command": "npx prettier --write ."}
USER_GUARD = {"type": "command", "command": "/usr/local/bin/monitor-disk hook pre", "timeout": 5}


def write_settings(path: Path, settings: Any) -> Path:
    path.write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")
    return path


def backups(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.bak"))


@pytest.fixture
def users_settings(tmp_path: Path) -> Path:
    """A settings file with the user's own keys and hooks, one of them on an event the hook also uses."""
    return write_settings(
        tmp_path / "settings.json",
        {
            "permissions": {"allow": ["Bash(npm test:*)"]},
            "hooks": {
                "PostToolUse": [{"matcher": "Write|Edit", "hooks": [USER_FORMATTER]}],
                "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
                "PreToolUse": [{"matcher": "Bash", "hooks": [USER_GUARD]}],
            },
            "model": "opus",
        },
    )


# -- merge --------------------------------------------------------------------------------------------------


def test_install_keeps_every_other_key_and_hook_in_order(users_settings: Path) -> None:
    before = read_settings(users_settings)
    result = install_hooks(users_settings, COMMAND)
    after = read_settings(users_settings)
    assert result.changed and result.written and result.added == HOOK_EVENTS
    assert list(after) == ["permissions", "hooks", "model"]
    assert after["permissions"] == before["permissions"] and after["model"] == "opus"
    # The user's events keep their place; the new ones follow in the order a session meets them.
    assert list(after["hooks"]) == [
        "PostToolUse",
        "Stop",
        "PreToolUse",
        "SessionStart",
        "UserPromptSubmit",
        "PostToolUseFailure",
        "SessionEnd",
    ]
    assert after["hooks"]["PostToolUse"][0] == before["hooks"]["PostToolUse"][0]
    assert after["hooks"]["PreToolUse"][0] == before["hooks"]["PreToolUse"][0]
    assert after["hooks"]["Stop"] == before["hooks"]["Stop"]
    assert ours_in(after) == {"Stop": [], **{event: [COMMAND] for event in HOOK_EVENTS}}


def test_the_entries_have_claude_codes_shapes(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    install_hooks(path, COMMAND, timeout=45)
    hooks = read_settings(path)["hooks"]
    hook = {"type": "command", "command": COMMAND, "timeout": 45}
    for event in ["PreToolUse", "PostToolUse", "PostToolUseFailure"]:
        assert hooks[event] == [{"matcher": "*", "hooks": [hook]}]
    for event in ["SessionStart", "UserPromptSubmit", "SessionEnd"]:
        assert hooks[event] == [{"hooks": [hook]}]


def test_installing_twice_writes_once(users_settings: Path) -> None:
    install_hooks(users_settings, COMMAND)
    text, stat = users_settings.read_bytes(), users_settings.stat()
    again = install_hooks(users_settings, COMMAND)
    assert not again.changed and not again.written and again.backup is None
    assert users_settings.read_bytes() == text
    assert users_settings.stat().st_mtime_ns == stat.st_mtime_ns and users_settings.stat().st_ino == stat.st_ino
    assert len(backups(users_settings.parent)) == 1


def test_a_hand_formatted_file_that_already_has_the_entries_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    install_hooks(path, COMMAND)
    compact = json.dumps(read_settings(path), separators=(",", ":"))
    path.write_text(compact, encoding="utf-8")
    assert not install_hooks(path, COMMAND).changed
    assert path.read_text(encoding="utf-8") == compact


def test_installing_with_other_options_replaces_the_entries_in_place(users_settings: Path) -> None:
    install_hooks(users_settings, COMMAND)
    settings = read_settings(users_settings)
    # The user adds a hook after ours; a new install must keep it after ours, not move ours to the end.
    settings["hooks"]["PreToolUse"].append({"matcher": "Read", "hooks": [USER_FORMATTER]})
    write_settings(users_settings, settings)
    strict = build_hook_command(python=PYTHON, posture="strict")
    result = install_hooks(users_settings, strict)
    after = read_settings(users_settings)
    assert result.changed and result.removed == len(HOOK_EVENTS)
    assert ours_in(after) == {"Stop": [], **{event: [strict] for event in HOOK_EVENTS}}
    matchers = [g.get("matcher") for g in after["hooks"]["PreToolUse"]]
    assert matchers == ["Bash", "*", "Read"]


def test_entries_written_by_hand_or_by_the_trifecta_script_are_recognised(tmp_path: Path) -> None:
    path = write_settings(
        tmp_path / "settings.json",
        {
            "hooks": {
                "PreToolUse": [
                    {"matcher": "*", "hooks": [{"type": "command", "command": "trifecta hook claude-code"}]},
                    {
                        "matcher": "mcp__.*",
                        "hooks": [{"type": "command", "command": "'/x/bin/trifecta' hook claude-code"}],
                    },
                    {"matcher": "Bash", "hooks": [USER_GUARD]},
                ],
                "Notification": [{"hooks": [{"type": "command", "command": "python -m monitor hook claude-code"}]}],
            }
        },
    )
    result = install_hooks(path, COMMAND)
    after = read_settings(path)
    assert result.removed == 3
    # The first of our old entries gives the new one its place; an event we no longer install is dropped.
    assert after["hooks"]["PreToolUse"] == [
        {"matcher": "*", "hooks": [{"type": "command", "command": COMMAND, "timeout": 60}]},
        {"matcher": "Bash", "hooks": [USER_GUARD]},
    ]
    assert "Notification" not in after["hooks"]


def test_a_group_mixing_the_users_hook_and_ours_keeps_the_users(tmp_path: Path) -> None:
    path = write_settings(
        tmp_path / "settings.json",
        {"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [USER_GUARD, {"type": "command", "command": COMMAND}]}]}},
    )
    install_hooks(path, COMMAND)
    groups = read_settings(path)["hooks"]["PreToolUse"]
    assert groups[0] == {"matcher": "*", "hooks": [USER_GUARD]}
    assert groups[1]["hooks"][0]["command"] == COMMAND and len(groups) == 2
    uninstall_hooks(path)
    assert read_settings(path) == {"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [USER_GUARD]}]}}


def test_only_the_hook_command_counts_as_ours() -> None:
    assert is_trifecta_hook({"type": "command", "command": COMMAND})
    assert is_trifecta_hook({"command": "trifecta hook claude-code --posture strict"})
    assert not is_trifecta_hook(USER_GUARD)
    assert not is_trifecta_hook({"command": "python -m monitor analyze ~/.claude/projects"})
    assert not is_trifecta_hook({"command": "trifecta hook claude-codex"})
    assert not is_trifecta_hook({"command": ["trifecta", "hook", "claude-code"]})
    with pytest.raises(ValueError, match="could never be uninstalled"):
        install_hooks(Path("unused.json"), "/usr/bin/python -m something-else")


# -- the file: backup, atomic write, permissions, links, creation -------------------------------------------


def test_the_previous_file_is_backed_up_with_its_permissions(users_settings: Path) -> None:
    os.chmod(users_settings, 0o640)
    original = users_settings.read_bytes()
    result = install_hooks(users_settings, COMMAND)
    assert result.backup is not None and result.backup.parent == users_settings.parent
    assert result.backup.name.startswith("settings.json.") and result.backup.name.endswith("Z.bak")
    assert result.backup.read_bytes() == original
    assert result.backup.stat().st_mode & 0o777 == 0o640
    assert users_settings.stat().st_mode & 0o777 == 0o640


def test_backups_never_overwrite_each_other(users_settings: Path) -> None:
    contents = [users_settings.read_bytes()]
    for posture in ["strict", "balanced", "strict"]:
        install_hooks(users_settings, build_hook_command(python=PYTHON, posture=posture))
        contents.append(users_settings.read_bytes())
    assert sorted(b.read_bytes() for b in backups(users_settings.parent)) == sorted(contents[:-1])


def test_no_backup_of_a_file_that_did_not_exist(tmp_path: Path) -> None:
    path = tmp_path / "project" / ".claude" / "settings.json"
    result = install_hooks(path, COMMAND)
    assert result.written and not result.existed and result.backup is None
    assert ours_in(read_settings(path)) == {event: [COMMAND] for event in HOOK_EVENTS}
    assert backups(path.parent) == []


def fail_fsync_after(calls: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """``os.fsync`` succeeds ``calls`` times, then fails as on a full disk."""
    fsync, done = os.fsync, [0]

    def fsync_or_fail(descriptor: int) -> None:
        done[0] += 1
        if done[0] > calls:
            raise OSError(28, "No space left on device")
        fsync(descriptor)

    monkeypatch.setattr(os, "fsync", fsync_or_fail)


def test_a_failed_write_leaves_the_file_as_it_was(users_settings: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    original = users_settings.read_bytes()
    fail_fsync_after(1, monkeypatch)  # the backup is written; the new settings are not
    with pytest.raises(InputError, match="cannot write the settings: No space left on device"):
        install_hooks(users_settings, COMMAND)
    assert users_settings.read_bytes() == original
    assert [p.name for p in users_settings.parent.iterdir() if p.suffix == ".tmp"] == []


def test_a_failed_backup_stops_before_the_settings_are_touched(
    users_settings: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = users_settings.read_bytes()
    fail_fsync_after(0, monkeypatch)
    with pytest.raises(InputError, match="cannot write the backup") as caught:
        install_hooks(users_settings, COMMAND)
    assert caught.value.source.endswith(".bak")
    assert users_settings.read_bytes() == original
    assert sorted(p.name for p in users_settings.parent.iterdir()) == ["settings.json"]


def test_a_reader_sees_the_old_file_or_the_new_one(users_settings: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    original = users_settings.read_bytes()
    seen: list[bytes] = []
    replace = os.replace

    def watch(source: str | Path, target: str | Path) -> None:
        seen.append(Path(target).read_bytes())  # just before the rename: still the old file
        replace(source, target)

    monkeypatch.setattr(os, "replace", watch)
    install_hooks(users_settings, COMMAND)
    assert seen == [original]
    assert ours_in(read_settings(users_settings))["PreToolUse"] == [COMMAND]


def test_a_change_made_meanwhile_is_kept(users_settings: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from monitor.hosts import _settings

    write_backup, writes = _settings._write_backup, [0]

    def backup_then_claude_code_saves(path: Path, raw: bytes) -> Path:
        backup = write_backup(path, raw)
        writes[0] += 1
        if writes[0] == 1:  # e.g. "always allow" chosen in Claude Code while the install runs
            settings = read_settings(path)
            settings["permissions"]["allow"].append("Bash(ls:*)")
            write_settings(path, settings)
        return backup

    monkeypatch.setattr(_settings, "_write_backup", backup_then_claude_code_saves)
    result = install_hooks(users_settings, COMMAND)
    after = read_settings(users_settings)
    assert after["permissions"]["allow"] == ["Bash(npm test:*)", "Bash(ls:*)"]
    assert ours_in(after)["PreToolUse"] == [COMMAND]
    assert result.backup is not None and "Bash(ls:*)" in result.backup.read_text()


def test_a_linked_settings_file_stays_a_link(tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    target = write_settings(dotfiles / "claude-settings.json", {"model": "opus"})
    link = tmp_path / "settings.json"
    link.symlink_to(target)
    install_hooks(link, COMMAND)
    assert link.is_symlink() and link.resolve() == target
    assert ours_in(read_settings(target))["SessionStart"] == [COMMAND]


def test_indentation_and_a_byte_order_mark_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_bytes(b'\xef\xbb\xbf{\n\t"model": "opus"\n}\n')
    install_hooks(path, COMMAND)
    raw = path.read_bytes()
    assert raw.startswith(b'\xef\xbb\xbf{\n\t"model": "opus",\n\t"hooks": {\n\t\t"SessionStart"')
    four = write_settings(tmp_path / "four.json", {})
    four.write_text('{\n    "model": "opus"\n}\n', encoding="utf-8")
    install_hooks(four, COMMAND)
    assert four.read_text(encoding="utf-8").startswith('{\n    "model": "opus",\n    "hooks": {\n        "Session')


def test_a_dry_run_writes_nothing_and_shows_the_change(users_settings: Path) -> None:
    original = users_settings.read_bytes()
    result = install_hooks(users_settings, COMMAND, dry_run=True)
    assert result.changed and not result.written and result.backup is None
    assert users_settings.read_bytes() == original and backups(users_settings.parent) == []
    diff = result.render_diff()
    assert diff.startswith(f"--- {users_settings}\n+++ {users_settings}\n")
    assert f'+            "command": {json.dumps(COMMAND)},' in diff.splitlines()
    assert json.loads(result.after) == json.loads(install_hooks(users_settings, COMMAND).after)


# -- files that must not be touched -------------------------------------------------------------------------

BAD_FILES = [
    ('{\n  "model": "opus",\n  "hooks": {},\n}\n', 4, "not valid JSON"),
    ('{\n  "model": "opus",\n  // mine\n  "hooks": {}\n}\n', 3, "a comment"),
    ('{\n  "url": "https://example.com",\n  /* mine */ "hooks": {}\n}\n', 3, "a comment"),
    ('{\n  "model": "opus",\n  "hooks": []\n}\n', 3, "hooks should be an object"),
    ('{\n  "hooks": {\n    "PreToolUse": {"matcher": "*"}\n  }\n}\n', 3, "hooks.PreToolUse should be a list"),
    (
        '{"hooks": {\n  "Stop": [],\n  "PreToolUse": [\n    {"hooks": []},\n    "echo"\n  ]}}',
        5,
        r"PreToolUse\[1\] should",
    ),
    ('{"hooks": {"PreToolUse": [{"matcher": "*",\n "hooks": {"command": "x"}}]}}', 2, r"\[0\]\.hooks should be a list"),
    ('{"hooks": {"PreToolUse": [{"hooks": [\n\n"echo hi"]}]}}', 3, r"hooks\[0\] should be an object"),
    ('[\n  {"hooks": {}}\n]\n', 1, "not a JSON object"),
    ('{\n  "model": "opus",\n  "env": {},\n  "model": "sonnet"\n}\n', 4, "'model' appears twice"),
]


@pytest.mark.parametrize(("text", "line", "message"), BAD_FILES)
def test_a_file_that_cannot_be_changed_safely_is_refused_naming_file_and_line(
    tmp_path: Path, text: str, line: int, message: str
) -> None:
    path = tmp_path / "settings.json"
    path.write_text(text, encoding="utf-8")
    for change in [lambda: install_hooks(path, COMMAND), lambda: uninstall_hooks(path)]:
        with pytest.raises(InputError, match=message) as caught:
            change()
        assert caught.value.source == f"{path}:{line}"
        assert "nothing was written" in str(caught.value)
        assert path.read_text(encoding="utf-8") == text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.json"]


def test_a_file_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_bytes(b'{\n  "model": "op\xe9ra"\n}\n')
    with pytest.raises(InputError, match="not UTF-8") as caught:
        install_hooks(path, COMMAND)
    assert caught.value.source == f"{path}:2"


def test_an_empty_file_is_empty_settings(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text("\n", encoding="utf-8")
    result = install_hooks(path, COMMAND)
    assert result.backup is not None and result.backup.read_text() == "\n"
    assert list(read_settings(path)) == ["hooks"]


# -- uninstall ----------------------------------------------------------------------------------------------


def test_uninstall_leaves_the_users_hooks_and_drops_what_it_empties(users_settings: Path) -> None:
    before = read_settings(users_settings)
    install_hooks(users_settings, COMMAND)
    result = uninstall_hooks(users_settings)
    assert result.changed and result.removed == len(HOOK_EVENTS) and result.backup is not None
    assert read_settings(users_settings) == before
    assert list(read_settings(users_settings)["hooks"]) == ["PostToolUse", "Stop", "PreToolUse"]


def test_uninstall_drops_the_hooks_key_it_empties_but_keeps_the_users_empty_lists(tmp_path: Path) -> None:
    path = write_settings(tmp_path / "settings.json", {"model": "opus"})
    install_hooks(path, COMMAND)
    uninstall_hooks(path)
    assert read_settings(path) == {"model": "opus"}
    kept = write_settings(tmp_path / "kept.json", {"hooks": {"Stop": []}})
    install_hooks(kept, COMMAND)
    uninstall_hooks(kept)
    assert read_settings(kept) == {"hooks": {"Stop": []}}


def test_uninstall_without_our_hooks_changes_nothing(users_settings: Path, tmp_path: Path) -> None:
    original = users_settings.read_bytes()
    result = uninstall_hooks(users_settings)
    assert not result.changed and not result.written and result.backup is None and result.removed == 0
    assert users_settings.read_bytes() == original and backups(tmp_path) == []
    missing = tmp_path / "missing" / "settings.json"
    assert not uninstall_hooks(missing).changed
    assert not missing.parent.exists()


# -- where, and what runs ----------------------------------------------------------------------------------


def test_the_settings_files_claude_code_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert resolve_settings_path() == tmp_path / "home" / ".claude" / "settings.json"
    assert resolve_settings_path(user=True) == tmp_path / "home" / ".claude" / "settings.json"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "config"))
    assert resolve_settings_path(user=True) == tmp_path / "config" / "settings.json"
    assert resolve_settings_path(tmp_path / "p") == tmp_path / "p" / ".claude" / "settings.json"
    assert resolve_settings_path(tmp_path / "p", local=True) == tmp_path / "p" / ".claude" / "settings.local.json"
    monkeypatch.chdir(tmp_path)
    assert resolve_settings_path(local=True) == tmp_path / ".claude" / "settings.local.json"
    with pytest.raises(ValueError, match="not both"):
        resolve_settings_path(tmp_path, user=True)


def test_the_command_names_the_interpreter_and_absolute_paths_quoted_for_a_shell(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    command = build_hook_command(
        python="/opt/my python/bin/python3",
        state_dir=Path("state dir"),
        rules=[Path("rules"), Path("/etc/trifecta rules")],
        builtin_rules=False,
        posture="strict",
        on_allow="allow",
        timeout=2.5,
    )
    assert shlex.split(command) == [
        "/opt/my python/bin/python3",
        "-P",
        "-m",
        "monitor",
        "hook",
        "claude-code",
        "--state-dir",
        str(tmp_path / "state dir"),
        "--rules",
        str(tmp_path / "rules"),
        "--rules",
        "/etc/trifecta rules",
        "--no-builtin-rules",
        "--posture",
        "strict",
        "--on-allow",
        "allow",
        "--timeout",
        "2.5",
    ]
    assert is_trifecta_hook({"command": command})


def test_the_documented_example_is_what_the_installer_writes(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_bytes((EXAMPLES / "claude-code-settings.before.json").read_bytes())
    install_hooks(path, COMMAND)
    assert path.read_text(encoding="utf-8") == (EXAMPLES / "claude-code-settings.json").read_text(encoding="utf-8")
    uninstall_hooks(path)
    assert path.read_bytes() == (EXAMPLES / "claude-code-settings.before.json").read_bytes()
