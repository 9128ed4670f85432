"""The OpenAI Agents SDK adapter through the real ``Runner`` with a scripted ``Model`` (no network): which tool
bodies ran, and what the model was shown."""

from __future__ import annotations

import asyncio
import importlib
import json
import sys
from collections.abc import AsyncIterator
from typing import Any

import agents
import pytest
from agents import Agent, FunctionTool, Model, ModelResponse, RunConfig, Runner, Usage, function_tool
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText
from support.mail_scenario import (
    ASK_FORWARD,
    ASK_SUMMARY,
    ATTACKER,
    EXFILTRATION,
    FORWARD,
    INBOX,
    MAIL_ANNOTATIONS,
    NEWS_URL,
    PAGE,
    WEB_ANNOTATIONS,
)
from support.mail_scenario import MailTools as SharedMailTools

from monitor.adapters import CallQuestion
from monitor.adapters.openai_agents import GUARDRAIL_NAME, AgentsGuard
from monitor.decide import Policy
from monitor.models import Action, Decision
from monitor.session import SessionMonitor

CONVERSATION = "conversation-42"


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    # The scripted model needs no API key; an empty one makes sure nothing could reach the network with one.
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    agents.set_tracing_disabled(True)


class ScriptedModel(Model):
    """Answers each turn with the next scripted output items, and keeps the input of every turn."""

    def __init__(self, turns: list[list[Any]]) -> None:
        self.turns = list(turns)
        self.inputs: list[Any] = []

    async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> ModelResponse:
        self.inputs.append(input)
        return ModelResponse(output=self.turns.pop(0), usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError

    def output_for(self, call_id: str) -> str:
        """What the model was shown as the output of a call."""
        items = [i for i in self.inputs[-1] if isinstance(i, dict) and i.get("call_id") == call_id and "output" in i]
        assert len(items) == 1
        return str(items[0]["output"])


def call(name: str, args: dict[str, Any], n: int) -> list[Any]:
    return [
        ResponseFunctionToolCall(
            type="function_call", name=name, arguments=json.dumps(args), call_id=f"call-{n}", id=f"fc-{n}"
        )
    ]


def say(text: str) -> list[Any]:
    content = [ResponseOutputText(type="output_text", text=text, annotations=[])]
    return [ResponseOutputMessage(type="message", id="msg", role="assistant", status="completed", content=content)]


class MailTools(SharedMailTools[FunctionTool]):
    """The host's function tools (tests/support/mail_scenario.py); ``ran`` lists each body that ran, with its
    arguments."""

    def __init__(self) -> None:
        super().__init__(function_tool)


ATTACK_SCRIPT = [
    call("read_inbox", {}, 1),
    call("fetch_page", {"url": NEWS_URL}, 2),
    call("send_email", EXFILTRATION, 3),
    say("Here is the summary."),
]


def run(guard: AgentsGuard, host: MailTools, script: list[list[Any]], text: str, group_id: str | None = CONVERSATION):
    """One turn: the user's words to the monitor, then the agent run. Returns the model and the run result."""
    tools = guard.guard_tools(host.mail, server="mail", annotations=MAIL_ANNOTATIONS)
    tools += guard.guard_tools(host.web, server="web", annotations=WEB_ANNOTATIONS)
    model = ScriptedModel(script)
    agent = Agent(name="assistant", instructions="Help the user.", model=model, tools=tools)
    config = RunConfig(group_id=group_id)
    guard.observe_input(text, run_config=config)
    result = asyncio.run(Runner.run(agent, text, run_config=config))
    return model, result


def expected_sentence(monitor: SessionMonitor, session: str) -> str:
    report = monitor.session(session)
    return report.calls[-1].decision.describe("mail/send_email", {c.call_id: c.tool for c in report.calls})


def test_a_summary_mailed_to_the_colleague_the_user_named_is_sent() -> None:
    host, guard = MailTools(), AgentsGuard(SessionMonitor())
    script = [call("read_inbox", {}, 1), call("send_email", FORWARD, 2), say("Done.")]
    model, result = run(guard, host, script, ASK_FORWARD)
    assert host.ran == [("read_inbox", {}), ("send_email", FORWARD)]
    assert model.output_for("call-2") == f"sent to {FORWARD['to']}"
    assert result.final_output == "Done."
    assert [c.decision.action for c in guard.monitor.session(CONVERSATION).calls] == [Action.ALLOW, Action.ALLOW]


def test_an_injected_send_does_not_run_and_the_model_is_told_why() -> None:
    host, guard = MailTools(), AgentsGuard(SessionMonitor())
    model, result = run(guard, host, ATTACK_SCRIPT, ASK_SUMMARY)
    assert host.names == ["read_inbox", "fetch_page"]  # the send's body never ran
    shown = model.output_for("call-3")
    assert shown == expected_sentence(guard.monitor, CONVERSATION) + "; there is no one to ask, so it was not run"
    assert shown.startswith(
        f"trifecta-monitor asks about this mail/send_email call: it sends to {ATTACKER}, an address only untrusted "
        "content (from fetch_page) suggested; it carries private data from read_inbox"
    )
    assert result.final_output == "Here is the summary."
    # The guardrail results name the monitor's guardrail and keep its decisions.
    verdicts = [(r.guardrail.get_name(), r.output.behavior["type"]) for r in result.tool_input_guardrail_results]
    assert verdicts == [(GUARDRAIL_NAME, "allow"), (GUARDRAIL_NAME, "allow"), (GUARDRAIL_NAME, "reject_content")]
    last = result.tool_input_guardrail_results[-1].output.output_info
    assert isinstance(last, Decision) and last.action is Action.CONFIRM
    assert guard.monitor.session(CONVERSATION).level.value == "exfiltration"


def test_enforce_mode_blocks_without_asking() -> None:
    asked: list[CallQuestion] = []
    host = MailTools()
    guard = AgentsGuard(SessionMonitor(policy=Policy(enforce=True)), ask=lambda q: asked.append(q) or True)
    model, _ = run(guard, host, ATTACK_SCRIPT, ASK_SUMMARY)
    assert "send_email" not in host.names
    assert asked == []
    assert model.output_for("call-3").startswith("trifecta-monitor blocked this mail/send_email call")


@pytest.mark.parametrize("answer", [True, False])
def test_an_async_ask_callback_decides_a_call_to_confirm(answer: bool) -> None:
    asked: list[CallQuestion] = []

    async def ask(question: CallQuestion) -> bool:
        asked.append(question)
        return answer

    host, guard = MailTools(), AgentsGuard(SessionMonitor(), ask=ask)
    model, _ = run(guard, host, ATTACK_SCRIPT, ASK_SUMMARY)
    assert [(q.session_key, q.server, q.tool, q.arguments) for q in asked] == [
        (CONVERSATION, "mail", "send_email", EXFILTRATION)
    ]
    assert asked[0].message == expected_sentence(guard.monitor, CONVERSATION)
    if answer:
        assert host.names == ["read_inbox", "fetch_page", "send_email"]
        assert model.output_for("call-3") == f"sent to {ATTACKER}"
    else:
        assert host.names == ["read_inbox", "fetch_page"]
        assert model.output_for("call-3") == asked[0].message + "; the user declined"


def test_a_failing_monitor_does_not_crash_the_run_and_runs_nothing_unasked(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the monitor broke")

    monitor = SessionMonitor()
    monkeypatch.setattr(monitor, "before_call", broken)
    host, guard = MailTools(), AgentsGuard(monitor)
    model, result = run(guard, host, ATTACK_SCRIPT, ASK_SUMMARY)
    assert host.names == []
    assert "the monitor failed while checking it" in model.output_for("call-3")
    assert result.final_output == "Here is the summary."


def test_a_monitor_that_cannot_record_results_still_hands_them_to_the_model(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the monitor broke")

    monitor = SessionMonitor()
    monkeypatch.setattr(monitor, "after_call", broken)
    model, _ = run(AgentsGuard(monitor), MailTools(), ATTACK_SCRIPT, ASK_SUMMARY)
    assert model.output_for("call-1") == INBOX
    assert model.output_for("call-2") == PAGE


def test_the_group_id_is_the_session_and_an_explicit_key_wins() -> None:
    guard = AgentsGuard(SessionMonitor())
    run(guard, MailTools(), ATTACK_SCRIPT, ASK_SUMMARY, group_id="g-1")
    assert guard.monitor.sessions() == ["g-1"]
    keyed = AgentsGuard(SessionMonitor(), session_key=lambda context: f"user-{context.context['user']}")
    tools = keyed.guard_tools(MailTools().mail, server="mail", annotations=MAIL_ANNOTATIONS)
    agent = Agent(name="a", model=ScriptedModel([call("read_inbox", {}, 1), say("ok")]), tools=tools)
    asyncio.run(Runner.run(agent, "read my mail", context={"user": "u7"}, run_config=RunConfig(group_id="g-2")))
    assert keyed.monitor.sessions() == ["user-u7"]


def test_a_call_without_a_session_key_is_rejected() -> None:
    host, guard = MailTools(), AgentsGuard(SessionMonitor())
    model, _ = run(guard, host, ATTACK_SCRIPT, ASK_SUMMARY, group_id=None)
    assert host.names == []
    assert "no session key" in model.output_for("call-1")


def test_the_tools_own_guardrails_are_kept_and_the_originals_left_alone() -> None:
    host = MailTools()
    original = host.mail[0]
    guarded = AgentsGuard(SessionMonitor()).guard_tools(host.mail, server="mail")
    assert original.tool_input_guardrails is None
    assert [g.get_name() for g in guarded[0].tool_input_guardrails or []] == [GUARDRAIL_NAME]
    assert [g.get_name() for g in guarded[0].tool_output_guardrails or []] == [GUARDRAIL_NAME]


def test_without_the_extra_the_import_error_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "agents", None)
    monkeypatch.delitem(sys.modules, "monitor.adapters.openai_agents", raising=False)
    with pytest.raises(ImportError, match=r"pip install 'trifecta-monitor\[openai-agents\]'"):
        importlib.import_module("monitor.adapters.openai_agents")


def test_each_session_learns_the_tools_as_a_tools_list_would_give_them() -> None:
    listed: list[tuple[str, str, list[dict[str, Any]]]] = []

    class RecordingMonitor(SessionMonitor):
        def register_tools(self, session_id: str, server: str, tools: Any, trusted: bool = False) -> Any:
            listed.append((session_id, server, tools))
            return super().register_tools(session_id, server, tools, trusted)

    run(AgentsGuard(RecordingMonitor()), MailTools(), ATTACK_SCRIPT, ASK_SUMMARY)
    by_server = {server: {t["name"]: t for t in tools} for session, server, tools in listed if session == CONVERSATION}
    send = by_server["mail"]["send_email"]
    assert send["annotations"] == MAIL_ANNOTATIONS["send_email"]
    assert set(send["inputSchema"]["properties"]) == {"to", "subject", "body"}
    assert set(by_server["web"]) == {"fetch_page"}
    assert len(listed) == 2


def test_a_run_input_it_cannot_read_never_raises_and_nesting_from_the_model_is_kept_as_text() -> None:
    from monitor.adapters._gate import parse_arguments

    guard = AgentsGuard(SessionMonitor(), session_key="s")
    for unreadable in (42, object(), {"role": "user"}):
        guard.observe_input(unreadable)
    assert guard.monitor.sessions() == []
    deep = "[" * 100_000 + "]" * 100_000
    assert parse_arguments(deep) == {"input": deep}
