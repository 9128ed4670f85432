"""Golden tests for the sample sessions and the commands the README runs on them.

Every ``trifecta analyze samples/...`` command in a fenced code block of README.md (after an optional
``$ `` prompt, or chained after other commands with ``&&``) is run through the CLI from the project root,
and its standard output must equal ``tests/golden/<name>.txt``, where the name is made from the command
(``trifecta analyze samples/sessions`` -> ``analyze-samples-sessions.txt``). After an intended change of
output, regenerate the golden files with::

    UPDATE_GOLDEN=1 pytest tests/test_samples.py

and review the diff. Then, whatever the golden files say, each sample session must come out as its story
says: the incidents reach the trifecta and their sending call is confirmed; the look-alikes are only allowed.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import shlex
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from monitor.cli import main

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
GOLDEN_DIR = Path(__file__).resolve().parent / "golden"
SAMPLES = "samples/sessions"
REQUIRED_COMMAND = f"trifecta analyze {SAMPLES}"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"

_FENCE = re.compile(r"^\s*(```+|~~~+)")
_PROMPT = re.compile(r"^\s*\$\s+")
_SHELL_PUNCTUATION = frozenset("();<>|&")
_COMMAND_SEPARATORS = frozenset({"&&", "||", ";", "&"})
# Environment variables that make rich colour output that is not a terminal: unset while the CLI runs.
_PLAIN_ENV: dict[str, str | None] = dict.fromkeys(("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE"))

# The sending call of each incident: the last call of this tool in the session.
INCIDENTS = {
    "github-public-issue": "create_pull_request",
    "supabase-ticket": "execute_sql",
    "calendar-invite": "send_gmail_message",
}
BENIGN = ("github-benign", "supabase-benign", "calendar-benign")

# -- README commands ---------------------------------------------------------------------------------


def readme_commands(markdown: str) -> list[str]:
    """The ``trifecta analyze samples/...`` commands run in fenced code blocks, in order, without repeats.

    A line may carry a ``$ `` prompt and chain several commands (``pip install . && trifecta analyze ...``);
    each command is cut at its first pipe or redirect and returned in normalised shell quoting.
    """
    commands: dict[str, None] = {}
    fence: str | None = None
    for line in markdown.splitlines():
        match = _FENCE.match(line)
        if match:
            marker = match.group(1)
            if fence is None:
                fence = marker
            elif marker[0] == fence[0] and len(marker) >= len(fence) and not line.strip().strip(marker[0]):
                fence = None
            continue
        if fence is not None and "trifecta analyze samples/" in line:
            for words in _simple_commands(_PROMPT.sub("", line, count=1), line):
                if words[:2] == ["trifecta", "analyze"] and words[2:3] and words[2].startswith("samples/"):
                    commands[shlex.join(words)] = None
    return list(commands)


def _simple_commands(text: str, line: str) -> list[list[str]]:
    """Split one shell line into its commands' words, dropping what follows a pipe or redirect."""
    lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError as exc:
        raise AssertionError(f"README line is not valid shell ({exc}): {line!r}") from None
    commands: list[list[str]] = [[]]
    skipping = False
    for token in tokens:
        if set(token) <= _SHELL_PUNCTUATION:
            skipping = token not in _COMMAND_SEPARATORS
            if not skipping:
                commands.append([])
        elif not skipping:
            commands[-1].append(token)
    return [words for words in commands if words]


def command_args(command: str) -> list[str]:
    """The CLI arguments of a command :func:`readme_commands` returned (the words after ``trifecta``)."""
    words = shlex.split(command)
    assert words[:1] == ["trifecta"], f"not a trifecta command: {command!r}"
    return words[1:]


def golden_name(command: str) -> str:
    """``trifecta analyze samples/sessions --format json`` -> ``analyze-samples-sessions-format-json.txt``."""
    slug = re.sub(r"[^A-Za-z0-9]+", "-", " ".join(command_args(command))).strip("-").lower()
    return f"{slug}.txt"


@cache
def _commands() -> tuple[str, ...]:
    if not README.is_file():
        return ()
    return tuple(readme_commands(README.read_text(encoding="utf-8")))


def _no_commands_message() -> str:
    return (
        f"{README} has no line starting with 'trifecta analyze samples/' inside a fenced code block.\n"
        f"The README must show at least `{REQUIRED_COMMAND}` in a ```console or ```sh block "
        "(a leading '$ ' prompt is fine); this test runs every such line and compares its output with "
        f"{GOLDEN_DIR.relative_to(ROOT)}/<command>.txt."
    )


def _golden_params() -> list[Any]:
    commands = _commands()
    if not commands:
        return [pytest.param(None, id="README-has-no-sample-command")]
    return [pytest.param(c, id=golden_name(c).removesuffix(".txt")) for c in commands]


# -- running the CLI ---------------------------------------------------------------------------------


@pytest.fixture
def in_root(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run from the project root, as the README commands are written."""
    monkeypatch.chdir(ROOT)


def run_cli(args: list[str]) -> Result:
    """Run ``trifecta ARGS`` in-process, with no variable that would force colour on a non-terminal."""
    result = CliRunner().invoke(main, args, env=_PLAIN_ENV, catch_exceptions=False)
    assert result.exit_code in (0, 1), (
        f"trifecta {shlex.join(args)} exited {result.exit_code} (2 means unreadable input or a rejected "
        f"record):\n{result.stderr}"
    )
    return result


@cache
def _analysis() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(run_cli(["analyze", str(ROOT / SAMPLES), "--format", "json"]).stdout)
    return document


def _session(session_id: str) -> dict[str, Any]:
    sessions = {s["session_id"]: s for s in _analysis()["sessions"]}
    assert session_id in sessions, f"no session {session_id!r} in {SAMPLES}; found {sorted(sessions)}"
    return sessions[session_id]


# -- golden files ------------------------------------------------------------------------------------


def test_readme_runs_the_samples() -> None:
    if not _commands():
        pytest.fail(_no_commands_message(), pytrace=False)
    assert REQUIRED_COMMAND in _commands(), f"README runs {list(_commands())} but not `{REQUIRED_COMMAND}`"


@pytest.mark.usefixtures("in_root")
@pytest.mark.parametrize("command", _golden_params())
def test_readme_command_matches_golden(command: str | None) -> None:
    if command is None:
        pytest.fail(_no_commands_message(), pytrace=False)
    names = [golden_name(c) for c in _commands()]
    assert len(set(names)) == len(names), f"README commands share a golden file name: {names}"
    golden = GOLDEN_DIR / golden_name(command)
    actual = run_cli(command_args(command)).stdout
    if UPDATE:
        GOLDEN_DIR.mkdir(exist_ok=True)
        golden.write_text(actual, encoding="utf-8", newline="\n")
        return
    if not golden.is_file():
        pytest.fail(
            f"no golden file {golden.relative_to(ROOT)} for `{command}`; create it with "
            "UPDATE_GOLDEN=1 pytest tests/test_samples.py",
            pytrace=False,
        )
    expected = golden.read_text(encoding="utf-8")
    diff = "".join(
        difflib.unified_diff(
            expected.splitlines(keepends=True), actual.splitlines(keepends=True), str(golden.name), "actual"
        )
    )
    assert actual == expected, (
        f"`{command}` no longer prints {golden.relative_to(ROOT)} (if intended: UPDATE_GOLDEN=1 pytest "
        f"tests/test_samples.py):\n{diff}"
    )


def test_no_orphan_golden_files() -> None:
    if not _commands():
        pytest.skip("README has no sample command (test_readme_runs_the_samples fails for that)")
    used = {golden_name(c) for c in _commands()}
    orphans = sorted(p.name for p in GOLDEN_DIR.glob("*.txt") if p.name not in used)
    assert orphans == [], f"golden files no README command produces (delete them): {orphans}"


@pytest.mark.usefixtures("in_root")
def test_table_has_no_colour_when_not_a_terminal() -> None:
    first = run_cli(["analyze", SAMPLES]).stdout
    assert "\x1b[" not in first
    assert run_cli(["analyze", SAMPLES]).stdout == first


# -- what each sample must show ----------------------------------------------------------------------


def test_samples_are_read_without_errors() -> None:
    document = _analysis()
    assert document["errors"] == []
    assert {*INCIDENTS, *BENIGN} <= {s["session_id"] for s in document["sessions"]}


@pytest.mark.parametrize("session_id", sorted(INCIDENTS))
def test_incident_reaches_the_trifecta(session_id: str) -> None:
    assert _session(session_id)["level"] in ("trifecta", "exfiltration")


@pytest.mark.parametrize("session_id", sorted(INCIDENTS))
def test_incident_sending_call_is_confirmed(session_id: str) -> None:
    calls = [c for c in _session(session_id)["calls"] if c["tool"] == INCIDENTS[session_id]]
    assert calls, f"{session_id} has no {INCIDENTS[session_id]} call"
    decision = calls[-1]["decision"]
    assert (decision["action"], decision["level"]) == ("confirm", "exfiltration"), decision
    assert _session(session_id)["level"] == "exfiltration"


@pytest.mark.parametrize("session_id", BENIGN)
def test_benign_session_is_only_allowed(session_id: str) -> None:
    actions = {c["call_id"]: c["decision"]["action"] for c in _session(session_id)["calls"]}
    assert actions and set(actions.values()) == {"allow"}, actions


# -- the README parser itself ------------------------------------------------------------------------

_README_EXAMPLE = """\
Run `trifecta analyze samples/inline` (not in a code block, ignored).

```sh
python3 -m venv .venv && . .venv/bin/activate && pip install . && trifecta analyze samples/sessions
```

```console
$ trifecta analyze samples/sessions
session  level ...
$ trifecta analyze samples/sessions --format json | jq '.summary'
$ trifecta analyze samples/sessions --format=jsonl > sessions.jsonl; echo done
```

```python
print("trifecta analyze samples/in-a-string")  # not a command: ignored
```

~~~sh
trifecta analyze samples/sessions --fail-on high  # exits 1
trifecta classify samples/tools.json
~~~
"""


def test_readme_commands_are_found_in_fenced_blocks_only() -> None:
    assert readme_commands(_README_EXAMPLE) == [
        "trifecta analyze samples/sessions",
        "trifecta analyze samples/sessions --format json",
        "trifecta analyze samples/sessions --format=jsonl",
        "trifecta analyze samples/sessions --fail-on high",
    ]


@pytest.mark.parametrize(
    ("command", "args", "name"),
    [
        ("trifecta analyze samples/sessions", ["analyze", "samples/sessions"], "analyze-samples-sessions.txt"),
        (
            "trifecta analyze samples/sessions --format json",
            ["analyze", "samples/sessions", "--format", "json"],
            "analyze-samples-sessions-format-json.txt",
        ),
        (
            "trifecta analyze samples/sessions --fail-on high",
            ["analyze", "samples/sessions", "--fail-on", "high"],
            "analyze-samples-sessions-fail-on-high.txt",
        ),
        (
            "trifecta analyze 'samples/my sessions'",
            ["analyze", "samples/my sessions"],
            "analyze-samples-my-sessions.txt",
        ),
    ],
)
def test_command_args_and_golden_name(command: str, args: list[str], name: str) -> None:
    assert command_args(command) == args
    assert golden_name(command) == name
