"""The MCP client guard against a real SDK server over stdio, through a real ``ClientSession``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, ElicitResult, InputRequiredResult, InputResponses

from monitor.decide import Policy
from monitor.errors import CallDenied, ConfirmationRequired
from monitor.hosts.mcp import GuardedClientSession
from monitor.models import Action, AlertKind, Decision, Level, Reason
from monitor.session import SessionMonitor

SERVERS = Path(__file__).parent / "servers"
OFFICE = SERVERS / "office_server.py"
ROOT = Path(__file__).resolve().parents[2]
ATTACKER = "collector@exfil-drop.example"
NEWS = "https://news.example/newsletter"
ASK = f"Summarise the newsletter at {NEWS} for me, and look up patient 4471's record."
KEY = "conversation-1"


class RecordingMonitor(SessionMonitor):
    """A monitor that remembers what reached ``after_call`` (the type passed and the error flag)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.results: list[tuple[str, object, bool]] = []

    def after_call(self, session_id: str, call_id: str, result: Any, is_error: bool = False) -> Any:
        self.results.append((call_id, result, is_error))
        return super().after_call(session_id, call_id, result, is_error)


def _calls(log: Path) -> list[str]:
    """The tools the server ran, in order."""
    if not log.exists():
        return []
    return [json.loads(line)["tool"] for line in log.read_text().splitlines()]


@asynccontextmanager
async def _guarded(
    log: Path,
    monitor: SessionMonitor,
    *,
    confirm: Callable[[Decision], Awaitable[bool]] | None = None,
    listed: bool = True,
    legacy: bool = False,
    env: dict[str, str] | None = None,
    elicitation: Any = None,
) -> AsyncIterator[GuardedClientSession]:
    params = StdioServerParameters(
        command=sys.executable,
        args=[str(OFFICE)],
        env={**os.environ, "OFFICE_CALL_LOG": str(log), **(env or {})},
    )
    with open(os.devnull, "w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write, elicitation_callback=elicitation) as session,
        ):
            guard = GuardedClientSession(session, monitor, session_key=KEY, server="office", confirm=confirm)
            await (guard.initialize() if legacy else guard.discover())
            if listed:
                await guard.list_tools()
            yield guard


async def _read_then_fetch(guard: GuardedClientSession) -> str:
    """The user's request: look up the record and read the newsletter (which carries the injection)."""
    guard.monitor.observe_user_message(KEY, ASK)
    record = await guard.call_tool("lookup_patient", {"patient_id": "4471"})
    await guard.call_tool("fetch_page", {"url": NEWS})
    return str(record.content[0].text)  # type: ignore[union-attr]


def _exfiltration(record: str) -> dict[str, str]:
    return {"to": ATTACKER, "subject": "sync", "body": record}


def test_a_benign_flow_runs_end_to_end(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    monitor = RecordingMonitor()

    async def main() -> list[Action]:
        async with _guarded(log, monitor) as guard:
            guard.monitor.observe_user_message(KEY, "Look up patient 4471 and email the record to ames@clinic.example")
            record = await guard.call_tool("lookup_patient", {"patient_id": "4471"})
            body = str(record.content[0].text)  # type: ignore[union-attr]
            sent = await guard.call_tool("send_email", {"to": "ames@clinic.example", "subject": "4471", "body": body})
            assert not sent.is_error
        return [call.decision.action for call in monitor.session(KEY).calls]

    assert anyio.run(main) == [Action.ALLOW, Action.ALLOW]
    assert _calls(log) == ["lookup_patient", "send_email"]
    # The SDK's own CallToolResult objects reached the monitor, not copies.
    assert all(isinstance(result, CallToolResult) and not failed for _, result, failed in monitor.results)


def test_the_exfiltration_without_a_callback_raises_and_the_send_never_runs(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"

    async def main() -> ConfirmationRequired:
        async with _guarded(log, SessionMonitor()) as guard:
            record = await _read_then_fetch(guard)
            with pytest.raises(ConfirmationRequired) as raised:
                await guard.call_tool("send_email", _exfiltration(record))
            return raised.value

    error = anyio.run(main)
    assert isinstance(error.decision, Decision)
    assert error.decision.action is Action.CONFIRM
    assert Reason.DESTINATION_ATTACKER_SUGGESTED in error.decision.reasons
    # The message says what the call would do, in words: where it sends, who chose that, what it carries.
    assert str(error).startswith("trifecta-monitor asks about this office/send_email call: it sends to " + ATTACKER)
    assert "untrusted content (from fetch_page)" in str(error) and "private data from lookup_patient" in str(error)
    assert _calls(log) == ["lookup_patient", "fetch_page"]


@pytest.mark.parametrize("answer", [False, True])
def test_the_confirm_callback_decides_whether_the_send_runs(tmp_path: Path, answer: bool) -> None:
    log = tmp_path / "calls.jsonl"
    asked: list[Decision] = []

    async def confirm(decision: Decision) -> bool:
        asked.append(decision)
        return answer

    async def main() -> None:
        async with _guarded(log, SessionMonitor(), confirm=confirm) as guard:
            record = await _read_then_fetch(guard)
            if answer:
                result = await guard.call_tool("send_email", _exfiltration(record))
                assert not result.is_error
            else:
                with pytest.raises(CallDenied, match="declined"):
                    await guard.call_tool("send_email", _exfiltration(record))

    anyio.run(main)
    assert [d.action for d in asked] == [Action.CONFIRM]
    assert asked[0].level is Level.EXFILTRATION
    ran_send = "send_email" in _calls(log)
    assert ran_send is answer


def test_a_denied_call_raises_call_denied_and_never_reaches_the_server(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    asked: list[Decision] = []

    async def confirm(decision: Decision) -> bool:
        asked.append(decision)
        return True

    async def main() -> CallDenied:
        monitor = SessionMonitor(policy=Policy(enforce=True))
        async with _guarded(log, monitor, confirm=confirm) as guard:
            record = await _read_then_fetch(guard)
            with pytest.raises(CallDenied) as raised:
                await guard.call_tool("send_email", _exfiltration(record))
            return raised.value

    error = anyio.run(main)
    assert isinstance(error.decision, Decision) and error.decision.action is Action.DENY
    assert asked == []  # a deny is not put to the user
    assert "send_email" not in _calls(log)


def test_calls_to_tools_never_listed_are_still_decided(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    monitor = SessionMonitor()

    async def main() -> Decision:
        async with _guarded(log, monitor, listed=False) as guard:
            record = await _read_then_fetch(guard)
            with pytest.raises(ConfirmationRequired) as raised:
                await guard.call_tool("send_email", _exfiltration(record))
            return raised.value.decision  # type: ignore[return-value]

    decision = anyio.run(main)
    assert decision.action is Action.CONFIRM
    calls = monitor.session(KEY).calls
    assert [c.tool for c in calls] == ["lookup_patient", "fetch_page", "send_email"]
    assert "send_email" not in _calls(log)


def test_a_changed_definition_between_listings_raises_definition_changed(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    monitor = SessionMonitor()

    async def main() -> tuple[str, str]:
        async with _guarded(log, monitor, listed=False, env={"OFFICE_RUG_PULL": "1"}) as guard:
            first = await guard.list_tools()
            second = await guard.list_tools()
            return (
                next(t.description or "" for t in first.tools if t.name == "fetch_page"),
                next(t.description or "" for t in second.tools if t.name == "fetch_page"),
            )

    before, after = anyio.run(main)
    assert before != after  # the server did change it
    alerts = [a for a in monitor.session(KEY).alerts if a.kind is AlertKind.DEFINITION_CHANGED]
    assert len(alerts) == 1 and "fetch_page" in alerts[0].message


def _replay(monitor: SessionMonitor, listing: Any, steps: list[tuple[str, dict[str, Any], Any]]) -> list[Decision]:
    """Feed a monitor directly: the listing, the user's words, then each call and its result."""
    monitor.register_tools(KEY, "office", listing)
    monitor.observe_user_message(KEY, ASK)
    decisions: list[Decision] = []
    for tool, arguments, result in steps:
        decision = monitor.before_call(KEY, "office", tool, arguments, f"c{len(decisions)}")
        decisions.append(decision)
        if result is not None:
            is_error = result.is_error if isinstance(result, CallToolResult) else bool(result.get("isError"))
            monitor.after_call(KEY, decision.call_id, result, is_error)
    return decisions


def _essence(decisions: list[Decision]) -> list[tuple[Action, tuple[Reason, ...], Level]]:
    return [(d.action, d.reasons, d.level) for d in decisions]


def test_the_sdk_objects_never_fail_open_and_decide_as_the_dicts_do(tmp_path: Path) -> None:
    """The fail-open probe: the SDK's own ListToolsResult.tools and CallToolResult objects, through the guard
    and straight into SessionMonitor, give the decisions their wire dicts give, and the exfiltration is not
    allowed either way."""
    log = tmp_path / "calls.jsonl"
    guarded = RecordingMonitor()

    async def main() -> tuple[Any, list[tuple[str, dict[str, Any], Any]]]:
        async with _guarded(log, guarded, listed=False) as guard:
            listing = await guard.list_tools()
            record = await _read_then_fetch(guard)
            with pytest.raises(ConfirmationRequired):
                await guard.call_tool("send_email", _exfiltration(record))
        results = [result for _, result, _ in guarded.results]
        steps = [
            ("lookup_patient", {"patient_id": "4471"}, results[0]),
            ("fetch_page", {"url": NEWS}, results[1]),
            ("send_email", _exfiltration(record), None),
        ]
        return listing.tools, steps

    tools, steps = anyio.run(main)
    through_guard = [call.decision for call in guarded.session(KEY).calls]
    as_objects = _replay(SessionMonitor(), tools, steps)

    def dump(value: Any) -> Any:
        return value.model_dump(by_alias=True, mode="json", exclude_none=True) if value is not None else None

    as_dicts = _replay(SessionMonitor(), [dump(t) for t in tools], [(t, a, dump(r)) for t, a, r in steps])
    assert _essence(through_guard) == _essence(as_objects) == _essence(as_dicts)
    exfiltration = as_objects[-1]
    assert exfiltration.action is not Action.ALLOW
    assert Reason.DESTINATION_ATTACKER_SUGGESTED in exfiltration.reasons
    assert exfiltration.level is Level.EXFILTRATION


def test_an_exception_from_the_call_is_reported_and_re_raised(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    monitor = RecordingMonitor()

    async def main() -> None:
        async with _guarded(log, monitor) as guard:
            with pytest.raises(MCPError):
                await guard.call_tool("wait", {"seconds": 30}, read_timeout_seconds=0.5)
            failed = await guard.call_tool("fail_loudly", {"reason": "disk full"})
            assert failed.is_error

    anyio.run(main)
    timeout, failed = monitor.results
    assert timeout[2] is True and "MCPError" in json.dumps(timeout[1])
    assert failed[2] is True and isinstance(failed[1], CallToolResult)
    assert [c.tool for c in monitor.session(KEY).calls] == ["wait", "fail_loudly"]


def test_when_no_decision_can_be_obtained_the_call_needs_confirmation(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"

    class BrokenMonitor(SessionMonitor):
        def before_call(self, *args: Any, **kwargs: Any) -> Decision:
            raise RuntimeError("the monitor is broken")

    async def main() -> ConfirmationRequired:
        async with _guarded(log, BrokenMonitor()) as guard:
            with pytest.raises(ConfirmationRequired) as raised:
                await guard.call_tool("lookup_patient", {"patient_id": "4471"})
            return raised.value

    error = anyio.run(main)
    assert isinstance(error.decision, Decision) and error.decision.reasons == (Reason.MONITOR_ERROR,)
    assert _calls(log) == []


def test_the_hosts_callback_exception_passes_through_and_nothing_runs(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"

    class Hungup(Exception):
        pass

    async def confirm(decision: Decision) -> bool:
        raise Hungup("the terminal closed")

    async def main() -> None:
        async with _guarded(log, SessionMonitor(), confirm=confirm) as guard:
            record = await _read_then_fetch(guard)
            with pytest.raises(Hungup):
                await guard.call_tool("send_email", _exfiltration(record))

    anyio.run(main)
    assert "send_email" not in _calls(log)


def test_a_call_the_server_continues_is_decided_once(tmp_path: Path) -> None:
    """A tool that asks the user itself (2026-07-28: an InputRequiredResult, then a retry with the answers)."""
    log = tmp_path / "calls.jsonl"
    monitor = RecordingMonitor()

    async def unused(context: Any, params: Any) -> ElicitResult:
        raise AssertionError("the test answers the server's questions itself")

    async def main() -> tuple[Any, Any]:
        async with _guarded(log, monitor, elicitation=unused) as guard:
            first = await guard.call_tool("book_appointment", {"patient_id": "4471"}, allow_input_required=True)
            assert isinstance(first, InputRequiredResult) and first.input_requests
            answers: InputResponses = {
                key: ElicitResult(action="accept", content={"day": "Tuesday"}) for key in first.input_requests
            }
            final = await guard.call_tool(
                "book_appointment",
                {"patient_id": "4471"},
                input_responses=answers,
                request_state=first.request_state,
                allow_input_required=True,
            )
            # A round that carries the state of another call (other arguments) is a new call, decided anew.
            again = await guard.call_tool("book_appointment", {"patient_id": "9"}, allow_input_required=True)
            assert isinstance(again, InputRequiredResult)
            with pytest.raises(MCPError, match="requestState"):  # the server refuses it too
                await guard.call_tool(
                    "book_appointment",
                    {"patient_id": "10"},
                    input_responses=answers,
                    request_state=again.request_state,
                    allow_input_required=True,
                )
            return final, again

    final, again = anyio.run(main)
    assert isinstance(final, CallToolResult) and "booked 4471 on Tuesday" in str(final.content)
    assert isinstance(again, InputRequiredResult)
    calls = monitor.session(KEY).calls
    assert [c.tool for c in calls] == ["book_appointment"] * 3
    (first_id, first_result, _), (refused_id, _, refused_failed) = monitor.results
    assert (first_id, first_result) == (calls[0].call_id, final)
    assert (refused_id, refused_failed) == (calls[2].call_id, True)


def test_other_requests_pass_through(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"

    async def main() -> None:
        async with _guarded(log, SessionMonitor(), legacy=True) as guard:
            assert guard.protocol_version == "2025-11-25"
            await guard.send_ping()
            assert (await guard.list_resources()).resources == []
            assert (await guard.list_prompts()).prompts == []
            assert guard.server_info is not None and guard.server_info.name == "office"

    anyio.run(main)


def test_a_session_key_is_required() -> None:
    with pytest.raises(ValueError, match="session_key"):
        GuardedClientSession(None, SessionMonitor(), session_key="", server="office")  # type: ignore[arg-type]


def test_without_the_sdk_the_import_says_how_to_install_it() -> None:
    script = textwrap.dedent(
        """
        import sys

        class NoMcp:
            def find_spec(self, name, path=None, target=None):
                if name == "mcp" or name.startswith("mcp.") or name.startswith("mcp_types"):
                    raise ModuleNotFoundError(f"No module named {name!r}", name=name)
                return None

        sys.meta_path.insert(0, NoMcp())
        try:
            import monitor.hosts.mcp
        except ImportError as exc:
            print(exc)
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=ROOT)
    assert "pip install 'trifecta-monitor[hosts]'" in out.stdout


def test_the_client_example_runs_and_the_injected_send_is_declined() -> None:
    example = ROOT / "docs" / "examples" / "hosts" / "mcp_client.py"
    out = subprocess.run(
        [sys.executable, str(example)],
        capture_output=True,
        text=True,
        check=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    lines = out.stdout.splitlines()
    assert lines[:2] == ["lookup_patient: ran", "fetch_page: ran"]
    assert lines[3].startswith("send_email: not sent (trifecta-monitor asks about this clinic/send_email call")
    assert lines[3].endswith("the user declined)")
    assert lines[4] == "session level: exfiltration"
