"""The test doubles hosts use: factories give what the readers give, the sink records what it is pushed."""

from monitor import SessionMonitor
from monitor.models import ToolAnnotations, parse_tool
from monitor.testing import RecordingSink, make_tool, make_tool_call, make_user_message, replay_events
from monitor.types import AlertSink


def test_make_tool_gives_a_tool_the_monitor_parses_with_only_the_hints_given() -> None:
    raw = make_tool("send_email", "Send an e-mail", read_only=False, open_world=True)
    tool, findings = parse_tool(raw)
    assert findings == []
    assert tool is not None and tool.annotations == ToolAnnotations(readOnlyHint=False, openWorldHint=True)
    assert "annotations" not in make_tool("plain")


def test_replay_returns_one_decision_per_call() -> None:
    events = [make_user_message("hi"), make_tool_call("s", "a", {}), make_tool_call("s", "b", None, call_id="x")]
    decisions = replay_events(SessionMonitor(), events)
    assert [d.call_id for d in decisions] == ["call#0", "x"]


def test_the_recording_sink_is_an_alert_sink() -> None:
    sink = RecordingSink()
    assert isinstance(sink, AlertSink)
    replay_events(SessionMonitor(sink=sink), [make_user_message("hi")])
    assert len(sink.levels) == 1
    sink.clear()
    assert sink.levels == [] and sink.alert_kinds == []


def test_the_documented_example_of_testing_a_host_runs() -> None:
    import re
    from pathlib import Path

    page = (Path(__file__).resolve().parents[1] / "docs" / "python-api.md").read_text(encoding="utf-8")
    blocks = [b for b in re.findall(r"```python\n(.*?)```", page, re.S) if "monitor.testing" in b]
    assert len(blocks) == 1
    exec(compile(blocks[0], "docs/python-api.md", "exec"), {})
