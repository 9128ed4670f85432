import hashlib
import io
import json

from monitor import SessionMonitor
from monitor.models import AnalysisSummary, Posture, RecordError
from monitor.report import JsonDocumentWriter, JsonLinesWriter, hash_ruleset, session_to_json


def _report():
    m = SessionMonitor()
    m.observe_user_message("s", "hi")
    m.before_call("s", "srv", "read_file", {"path": "a"}, "c1")
    m.after_call("s", "c1", "text")
    return m.end_session("s")


def test_ruleset_hash_of_no_rules_is_the_hash_of_an_empty_list() -> None:
    assert hash_ruleset([]) == hashlib.sha256(b"[]").hexdigest()


def test_document_is_valid_json_with_sessions_errors_and_summary_in_order() -> None:
    out = io.BytesIO()
    writer = JsonDocumentWriter(out, tool_version="1.0", ruleset_sha256="abc", posture=Posture.STRICT)
    summary = AnalysisSummary()
    for _ in range(2):
        report = _report()
        summary.add(report)
        writer.write_session(report)
    writer.write_error(RecordError(source="f.jsonl:3", message="not JSON"))
    writer.close(summary)
    document = json.loads(out.getvalue())
    assert list(document) == [
        "schema_version",
        "tool_version",
        "ruleset_sha256",
        "posture",
        "sessions",
        "errors",
        "summary",
    ]
    assert document["posture"] == "strict" and len(document["sessions"]) == 2
    assert document["errors"] == [{"source": "f.jsonl:3", "message": "not JSON"}]
    assert document["summary"] == {
        "sessions": 2,
        "shown": 2,
        "calls": 2,
        "by_level": {"armed": 2},
        "by_action": {"allow": 2},
    }


def test_empty_document_is_valid_json() -> None:
    out = io.BytesIO()
    writer = JsonDocumentWriter(out, tool_version="1.0", ruleset_sha256="abc", posture=Posture.BALANCED)
    writer.close(AnalysisSummary())
    assert json.loads(out.getvalue())["sessions"] == []


def test_provenance_is_keyed_by_leg_in_canonical_order() -> None:
    m = SessionMonitor()
    m.before_call("s", "srv", "read_file", {"path": "a"}, "c1")
    m.before_call("s", "srv", "upload_file", {"path": "a"}, "c2")
    read, upload = session_to_json(m.end_session("s"))["calls"]
    assert list(read["provenance"]) == read["legs"] == ["private_data", "untrusted_content", "external_communication"]
    assert read["provenance"]["private_data"] == {"source": "heuristic", "rule": "private-store-name:file"}
    assert list(upload["provenance"]) == upload["legs"] == ["untrusted_content", "external_communication"]


def test_jsonl_writes_a_line_per_session() -> None:
    out = io.BytesIO()
    writer = JsonLinesWriter(out)
    writer.write_session(_report())
    writer.write_session(_report())
    lines = out.getvalue().splitlines()
    assert [json.loads(line)["session_id"] for line in lines] == ["s", "s"]
