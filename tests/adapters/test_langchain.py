"""The LangChain adapter in a real LangGraph graph (``StateGraph`` + ``ToolNode``) driven by a scripted chat model:
which tool bodies ran, and what the model was shown."""

from __future__ import annotations

import asyncio
import importlib
import subprocess
import sys
from collections.abc import Sequence
from typing import Annotated, Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool, tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import InjectedState, ToolNode, tools_condition
from pydantic import Field
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
from monitor.adapters.langchain import GuardedTool, LangChainGuard
from monitor.decide import Policy
from monitor.models import Action, Leg
from monitor.session import SessionMonitor

THREAD = "thread-7"
CONFIG: RunnableConfig = {"configurable": {"thread_id": THREAD}}


class ScriptedChatModel(FakeMessagesListChatModel):
    """Returns its scripted messages in order, and keeps every list of messages it was shown."""

    seen: list[list[BaseMessage]] = Field(default_factory=list)

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:
        return self

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
        self.seen.append(list(messages))
        return super()._generate(messages, stop, run_manager, **kwargs)


class MailTools(SharedMailTools[BaseTool]):
    """The host's tools (tests/support/mail_scenario.py); ``ran`` lists each body that ran, with its arguments."""

    def __init__(self) -> None:
        super().__init__(tool)


def call(name: str, args: dict[str, Any], n: int) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"call-{n}", "type": "tool_call"}])


def build_graph(model: ScriptedChatModel, tools: list[GuardedTool]) -> Any:
    """The usual agent loop: the model, then the tools it asked for, until it answers."""

    def agent(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [model.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    return graph.compile()


def guard_tools(guard: LangChainGuard, host: MailTools) -> list[GuardedTool]:
    tools = guard.wrap_tools(host.mail, server="mail", annotations=MAIL_ANNOTATIONS)
    return tools + guard.wrap_tools(host.web, server="web", annotations=WEB_ANNOTATIONS)


ATTACK_SCRIPT = [
    call("read_inbox", {}, 1),
    call("fetch_page", {"url": NEWS_URL}, 2),
    call("send_email", EXFILTRATION, 3),
    AIMessage(content="Here is the summary."),
]


def run_attack(guard: LangChainGuard, host: MailTools, config: RunnableConfig = CONFIG) -> ScriptedChatModel:
    model = ScriptedChatModel(responses=ATTACK_SCRIPT)
    graph = build_graph(model, guard_tools(guard, host))
    graph.invoke(guard.observe_input({"messages": [("user", ASK_SUMMARY)]}, config), config)
    return model


def tool_message(model: ScriptedChatModel, call_id: str) -> ToolMessage:
    """The tool message the model was shown for a call."""
    found = [m for m in model.seen[-1] if isinstance(m, ToolMessage) and m.tool_call_id == call_id]
    assert len(found) == 1
    return found[0]


def expected_sentence(monitor: SessionMonitor, session: str) -> str:
    report = monitor.session(session)
    return report.calls[-1].decision.describe("mail/send_email", {c.call_id: c.tool for c in report.calls})


def test_a_summary_mailed_to_the_colleague_the_user_named_is_sent() -> None:
    host, guard = MailTools(), LangChainGuard(SessionMonitor())
    model = ScriptedChatModel(responses=[call("read_inbox", {}, 1), call("send_email", FORWARD, 2), AIMessage("Done.")])
    graph = build_graph(model, guard_tools(guard, host))
    graph.invoke(guard.observe_input({"messages": [("user", ASK_FORWARD)]}, CONFIG), CONFIG)
    assert host.ran == [("read_inbox", {}), ("send_email", FORWARD)]
    sent = tool_message(model, "call-2")
    assert (sent.content, sent.status) == (f"sent to {FORWARD['to']}", "success")
    assert [c.decision.action for c in guard.monitor.session(THREAD).calls] == [Action.ALLOW, Action.ALLOW]


def test_an_injected_send_does_not_run_and_the_model_is_told_why() -> None:
    host, guard = MailTools(), LangChainGuard(SessionMonitor())
    model = run_attack(guard, host)
    assert host.names == ["read_inbox", "fetch_page"]  # the send's body never ran
    refusal = tool_message(model, "call-3")
    assert refusal.status == "error"
    assert refusal.content == expected_sentence(guard.monitor, THREAD) + "; there is no one to ask, so it was not run"
    assert str(refusal.content).startswith(
        f"trifecta-monitor asks about this mail/send_email call: it sends to {ATTACKER}, an address only untrusted "
        "content (from fetch_page) suggested; it carries private data from read_inbox"
    )
    # The results of the calls that ran reached the monitor: that is what made the send an exfiltration.
    assert guard.monitor.session(THREAD).level.value == "exfiltration"


def test_enforce_mode_blocks_without_asking() -> None:
    asked: list[CallQuestion] = []
    host = MailTools()
    guard = LangChainGuard(SessionMonitor(policy=Policy(enforce=True)), ask=lambda q: asked.append(q) or True)
    model = run_attack(guard, host)
    assert "send_email" not in host.names
    assert asked == []
    assert str(tool_message(model, "call-3").content).startswith("trifecta-monitor blocked this mail/send_email call")


@pytest.mark.parametrize("answer", [True, False])
def test_the_ask_callback_decides_a_call_to_confirm(answer: bool) -> None:
    asked: list[CallQuestion] = []

    def ask(question: CallQuestion) -> bool:
        asked.append(question)
        return answer

    host, guard = MailTools(), LangChainGuard(SessionMonitor(), ask=ask)
    model = run_attack(guard, host)
    assert [(q.session_key, q.server, q.tool, q.arguments) for q in asked] == [
        (THREAD, "mail", "send_email", EXFILTRATION)
    ]
    assert asked[0].decision.action is Action.CONFIRM
    assert asked[0].message == expected_sentence(guard.monitor, THREAD)
    shown = tool_message(model, "call-3")
    if answer:
        assert host.names == ["read_inbox", "fetch_page", "send_email"]
        assert (shown.content, shown.status) == (f"sent to {ATTACKER}", "success")
    else:
        assert host.names == ["read_inbox", "fetch_page"]
        assert shown.content == asked[0].message + "; the user declined"


def test_an_async_graph_awaits_an_async_ask() -> None:
    asked: list[str] = []

    async def ask(question: CallQuestion) -> bool:
        await asyncio.sleep(0)
        asked.append(question.tool)
        return False

    host, guard = MailTools(), LangChainGuard(SessionMonitor(), ask=ask)
    model = ScriptedChatModel(responses=ATTACK_SCRIPT)
    graph = build_graph(model, guard_tools(guard, host))
    inputs = guard.observe_input({"messages": [("user", ASK_SUMMARY)]}, CONFIG)
    asyncio.run(graph.ainvoke(inputs, CONFIG))
    assert asked == ["send_email"]
    assert host.names == ["read_inbox", "fetch_page"]
    assert str(tool_message(model, "call-3").content).endswith("; the user declined")


def test_a_failing_monitor_does_not_crash_the_run_and_runs_nothing_unasked(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the monitor broke")

    monitor = SessionMonitor()
    monkeypatch.setattr(monitor, "before_call", broken)
    host, guard = MailTools(), LangChainGuard(monitor)
    model = run_attack(guard, host)
    assert host.names == []  # fail closed: nothing ran without a decision or a person's yes
    shown = tool_message(model, "call-3")
    assert "the monitor failed while checking it" in str(shown.content)
    assert len(model.seen) == len(ATTACK_SCRIPT)  # the run went on to the model's last turn


def test_a_monitor_that_cannot_record_results_still_hands_them_to_the_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monitor = SessionMonitor()

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the monitor broke")

    monkeypatch.setattr(monitor, "after_call", broken)
    host, guard = MailTools(), LangChainGuard(monitor)
    model = run_attack(guard, host)
    assert tool_message(model, "call-1").content == INBOX
    assert tool_message(model, "call-2").content == PAGE


def test_a_sink_that_raises_does_not_crash_the_run() -> None:
    class BrokenSink:
        def on_decision(self, notice: Any) -> None:
            raise RuntimeError("sink down")

        on_alert = on_level = on_decision

    host, guard = MailTools(), LangChainGuard(SessionMonitor(sink=BrokenSink()))
    model = run_attack(guard, host)
    assert guard.monitor.sink_errors > 0  # the sink was told, and failed, on every notice
    unbroken_host, unbroken = MailTools(), LangChainGuard(SessionMonitor())
    unbroken_model = run_attack(unbroken, unbroken_host)
    # The run is the one a monitor without a sink gives: the same tools ran, the same call was refused.
    assert host.names == unbroken_host.names == ["read_inbox", "fetch_page"]
    assert tool_message(model, "call-3").status == tool_message(unbroken_model, "call-3").status == "error"


def test_threads_are_sessions_and_an_explicit_key_wins() -> None:
    host, guard = MailTools(), LangChainGuard(SessionMonitor())
    run_attack(guard, host, {"configurable": {"thread_id": "a"}})
    assert set(guard.monitor.sessions()) == {"a"}
    fixed = LangChainGuard(SessionMonitor(), session_key=lambda config: "conv-" + config["configurable"]["user"])
    run_attack(fixed, MailTools(), {"configurable": {"thread_id": "ignored", "user": "u1"}})
    assert fixed.monitor.sessions() == ["conv-u1"]


def test_a_call_without_a_session_key_is_refused() -> None:
    host, guard = MailTools(), LangChainGuard(SessionMonitor())
    model = run_attack(guard, host, {})
    assert host.names == []
    assert "no session key" in str(tool_message(model, "call-1").content)


def test_mcp_annotations_kept_in_tool_metadata_are_read() -> None:
    # langchain-mcp-adapters puts the MCP tool's annotations in tool.metadata (model_dump of the SDK's
    # ToolAnnotations: snake_case names in mcp 2, None for unset hints) and its _meta beside them.
    ran: list[str] = []

    def lookup_note(title: str) -> str:
        ran.append(title)
        return "cabin: LAKEVIEW-5G"

    metadata = {"title": None, "read_only_hint": True, "open_world_hint": False, "destructive_hint": None, "_meta": {}}
    note = StructuredTool.from_function(lookup_note, description="Look up a note.", metadata=metadata)
    guard = LangChainGuard(SessionMonitor(), session_key="s")
    (wrapped,) = guard.wrap_tools([note], server="notes", trusted=True)
    wrapped.invoke({"title": "cabin"})
    legs = guard.monitor.session("s").calls[0].legs
    assert ran == ["cabin"]
    assert Leg.UNTRUSTED_CONTENT not in legs and Leg.EXTERNAL_COMMUNICATION not in legs
    # The same tool without its metadata is open-world: what it returns is untrusted content.
    bare = StructuredTool.from_function(lookup_note, description="Look up a note.")
    other = LangChainGuard(SessionMonitor(), session_key="s")
    other.wrap_tools([bare], server="notes", trusted=True)[0].invoke({"title": "cabin"})
    assert Leg.UNTRUSTED_CONTENT in other.monitor.session("s").calls[0].legs


def test_a_direct_invoke_returns_the_refusal_as_text() -> None:
    host = MailTools()
    guard = LangChainGuard(SessionMonitor(policy=Policy(enforce=True)), session_key="s")
    tools = {t.name: t for t in guard_tools(guard, host)}
    guard.observe_user_message(ASK_SUMMARY)
    tools["read_inbox"].invoke({})
    tools["fetch_page"].invoke({"url": NEWS_URL})
    answer = tools["send_email"].invoke(EXFILTRATION)
    assert isinstance(answer, str) and answer.startswith("trifecta-monitor blocked this mail/send_email call")
    assert host.names == ["read_inbox", "fetch_page"]


def test_without_the_extra_the_import_error_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "langchain_core", None)
    monkeypatch.delitem(sys.modules, "monitor.adapters.langchain", raising=False)
    with pytest.raises(ImportError, match=r"pip install 'trifecta-monitor\[langchain\]'"):
        importlib.import_module("monitor.adapters.langchain")


def test_the_package_imports_without_the_frameworks() -> None:
    program = (
        "import sys\n"
        "for name in ('langchain_core', 'langgraph', 'agents'):\n"
        "    sys.modules[name] = None\n"
        "import monitor, monitor.adapters\n"
        "from monitor.adapters import CallQuestion\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=False, timeout=120)
    assert (done.returncode, done.stdout.strip()) == (0, "ok"), done.stderr


def test_arguments_the_graph_injects_are_not_taken_for_the_models() -> None:
    seen: list[dict[str, Any]] = []

    class RecordingMonitor(SessionMonitor):
        def before_call(self, session_id: str, server: str, tool: str, arguments: Any, call_id: Any = None) -> Any:
            seen.append(dict(arguments))
            return super().before_call(session_id, server, tool, arguments, call_id)

    @tool
    def lookup_order(order_id: str, state: Annotated[dict[str, Any], InjectedState]) -> str:
        """Look up one of the user's orders."""
        return f"order {order_id}: {len(state['messages'])} messages in the thread"

    guard = LangChainGuard(RecordingMonitor())
    tools = guard.wrap_tools([lookup_order], server="shop")
    model = ScriptedChatModel(responses=[call("lookup_order", {"order_id": "A-17"}, 1), AIMessage("Found it.")])
    graph = build_graph(model, tools)
    graph.invoke(guard.observe_input({"messages": [("user", "Where is order A-17?")]}, CONFIG), CONFIG)
    assert seen == [{"order_id": "A-17"}]  # the graph state reached the tool, not the monitor
    assert tool_message(model, "call-1").content == "order A-17: 2 messages in the thread"


def test_each_session_learns_the_tools_as_a_tools_list_would_give_them() -> None:
    listed: list[tuple[str, str, list[dict[str, Any]]]] = []

    class RecordingMonitor(SessionMonitor):
        def register_tools(self, session_id: str, server: str, tools: Any, trusted: bool = False) -> Any:
            listed.append((session_id, server, tools))
            return super().register_tools(session_id, server, tools, trusted)

    host, guard = MailTools(), LangChainGuard(RecordingMonitor())
    run_attack(guard, host)
    by_server = {server: {t["name"]: t for t in tools} for session, server, tools in listed if session == THREAD}
    send = by_server["mail"]["send_email"]
    assert send["annotations"] == MAIL_ANNOTATIONS["send_email"]
    assert set(send["inputSchema"]["properties"]) == {"to", "subject", "body"}
    assert send["description"] == "Send an e-mail."
    assert set(by_server["web"]) == {"fetch_page"}
    assert len(listed) == 2  # once per server for the session, not once per call


def test_an_input_langchain_cannot_read_is_returned_unchanged_and_never_raises() -> None:
    guard = LangChainGuard(SessionMonitor(), session_key="s")
    unreadable = {"messages": [{"content": "a message with no role"}, 42]}
    assert guard.observe_input(unreadable) is unreadable
    assert guard.monitor.sessions() == []  # nothing was recorded as the user's words
    guard.observe_input({"messages": [("user", "send it to bob@corp.example")]})
    assert guard.monitor.sessions() == ["s"]
