"""The ``trifecta`` command line: analyze's output contracts, exit codes, and the event schema.

See docs/design.md, "JSON output" and "Command line and exit codes"."""

from __future__ import annotations

import io
import json
import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from pydantic import ValidationError
from support.cli_sessions import ATTACKER, QUIET_SESSION, TRIFECTA_SESSION, Writer

from monitor.cli import main
from monitor.models import EVENT_ADAPTER

LEGS = {"private_data", "untrusted_content", "external_communication"}
LEVELS = {"clean", "partial", "armed", "trifecta", "exfiltration"}
ACTIONS = {"allow", "confirm", "deny"}

SAMPLE_EVENTS: dict[str, dict[str, Any]] = {
    "tools_listed": {
        "kind": "tools_listed",
        "session_id": "s",
        "server": "mail",
        "tools": [{"name": "send_email", "description": "Send", "inputSchema": {"type": "object"}}],
        "trusted": False,
    },
    "user_message": {"kind": "user_message", "session_id": "s", "text": "hi", "time": "2026-01-02T03:04:05Z"},
    "assistant_message": {"kind": "assistant_message", "session_id": "s", "text": "hello"},
    "tool_call": {
        "kind": "tool_call",
        "session_id": "s",
        "call_id": "c1",
        "server": "mail",
        "tool": "send_email",
        "arguments": {"to": "bob@corp.example"},
    },
    "tool_result": {"kind": "tool_result", "session_id": "s", "call_id": "c1", "result": "ok", "is_error": False},
}


def run(*args: str | Path) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture
def trifecta_trace(tmp_path: Path, write_jsonl: Writer) -> Path:
    return write_jsonl(tmp_path / "trifecta.jsonl", TRIFECTA_SESSION + QUIET_SESSION)


@pytest.fixture
def quiet_trace(tmp_path: Path, write_jsonl: Writer) -> Path:
    return write_jsonl(tmp_path / "quiet.jsonl", QUIET_SESSION)


# -- analyze --format json ------------------------------------------------------------------------------------


def test_json_document_has_exactly_the_contract_shape(trifecta_trace: Path) -> None:
    result = run("analyze", trifecta_trace, "--format", "json")

    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert set(doc) == {
        "schema_version",
        "tool_version",
        "ruleset_sha256",
        "posture",
        "sessions",
        "errors",
        "summary",
    }
    assert doc["schema_version"] == 2
    assert isinstance(doc["tool_version"], str) and doc["tool_version"]
    assert len(doc["ruleset_sha256"]) == 64 and int(doc["ruleset_sha256"], 16) >= 0
    assert doc["posture"] == "balanced"
    assert doc["errors"] == []

    assert [s["session_id"] for s in doc["sessions"]] == ["attacked", "quiet"]
    for session in doc["sessions"]:
        assert set(session) == {"session_id", "source", "level", "legs", "exposed", "calls", "alerts"}
        assert session["source"] == str(trifecta_trace)
        assert session["level"] in LEVELS
        assert set(session["legs"]) <= LEGS
        assert isinstance(session["exposed"], bool)
        for index, call in enumerate(session["calls"]):
            assert set(call) == {
                *("call_id", "index", "server", "tool", "legs", "provenance", "decision"),
                *("source", "time", "arguments"),
            }
            assert call["index"] == index
            assert set(call["legs"]) <= LEGS
            assert set(call["provenance"]) == set(call["legs"])
            for provenance in call["provenance"].values():
                assert set(provenance) == {"source", "rule"}
            assert set(call["decision"]) == {"action", "level", "reasons"}
            assert call["decision"]["action"] in ACTIONS
            assert call["decision"]["level"] in LEVELS
            assert all(isinstance(r, str) for r in call["decision"]["reasons"])
        for alert in session["alerts"]:
            assert set(alert) == {"kind", "severity", "call_id", "message", "path", "evidence", "steps"}
            assert isinstance(alert["path"], list)
            for evidence in alert["evidence"]:
                assert set(evidence) == {"kind", "from_call", "detail"}
                assert evidence["kind"] in {"fragment", "destination"}

    attacked = doc["sessions"][0]
    assert attacked["level"] in {"trifecta", "exfiltration"}
    assert attacked["legs"] == ["private_data", "untrusted_content", "external_communication"]
    assert [(c["call_id"], c["tool"], c["server"]) for c in attacked["calls"]] == [
        ("read-1", "read_inbox", "mail"),
        ("send-1", "send_email", "mail"),
    ]
    assert attacked["calls"][1]["decision"]["action"] != "allow"
    [high] = [a for a in attacked["alerts"] if a["kind"] in {"trifecta", "exfiltration"}]
    assert high["call_id"] == "send-1"
    assert {"kind": "destination", "from_call": "read-1"}.items() <= high["evidence"][0].items()
    assert ATTACKER in high["evidence"][0]["detail"]
    assert [s["call_id"] for s in high["steps"]][-1] == "send-1"
    assert attacked["calls"][1]["arguments"]["recipients"] == [ATTACKER]

    summary = doc["summary"]
    assert set(summary) == {"sessions", "shown", "calls", "by_level", "by_action"}
    assert summary["sessions"] == summary["shown"] == 2
    assert summary["calls"] == 2
    assert sum(summary["by_level"].values()) == 2
    assert sum(summary["by_action"].values()) == 2


def test_json_posture_is_the_one_asked_for(quiet_trace: Path) -> None:
    result = run("analyze", quiet_trace, "--format", "json", "--posture", "strict")

    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["posture"] == "strict"


def test_jsonl_writes_one_session_object_per_line(trifecta_trace: Path) -> None:
    result = run("analyze", trifecta_trace, "--format", "jsonl")

    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert len(lines) == 2
    sessions = [json.loads(line) for line in lines]
    assert [s["session_id"] for s in sessions] == ["attacked", "quiet"]
    for session in sessions:
        assert set(session) == {"session_id", "source", "level", "legs", "exposed", "calls", "alerts"}
        assert session["source"] == str(trifecta_trace)


def test_output_file_gets_the_document_and_stdout_stays_clean(trifecta_trace: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.json"

    result = run("analyze", trifecta_trace, "--format", "json", "--output", out)

    assert result.exit_code == 0, result.output
    assert "attacked" not in result.stdout
    assert "sessions" not in result.stdout
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert [s["session_id"] for s in doc["sessions"]] == ["attacked", "quiet"]


def test_output_file_for_the_table(trifecta_trace: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.txt"

    result = run("analyze", trifecta_trace, "-o", out)

    assert result.exit_code == 0, result.output
    assert "attacked" not in result.stdout
    assert "attacked" in out.read_text(encoding="utf-8")


# -- exit codes ---------------------------------------------------------------------------------------------


def test_exit_code_is_0_by_default_even_with_findings(trifecta_trace: Path) -> None:
    assert run("analyze", trifecta_trace, "--format", "json").exit_code == 0


def test_exit_code_is_0_on_clean_input_with_fail_on_high(quiet_trace: Path) -> None:
    result = run("analyze", quiet_trace, "--fail-on", "high")

    assert result.exit_code == 0, result.output


def test_exit_code_is_1_when_a_session_reaches_trifecta_and_fail_on_high(trifecta_trace: Path) -> None:
    result = run("analyze", trifecta_trace, "--format", "json", "--fail-on", "high")

    assert result.exit_code == 1, result.output
    assert json.loads(result.stdout)["sessions"][0]["level"] in {"trifecta", "exfiltration"}


def test_exit_code_is_0_with_fail_on_never(trifecta_trace: Path) -> None:
    assert run("analyze", trifecta_trace, "--fail-on", "never").exit_code == 0


def test_rejected_record_exits_2_and_keeps_the_valid_sessions(tmp_path: Path, write_jsonl: Writer) -> None:
    lines: list[dict[str, Any] | str] = [*TRIFECTA_SESSION, "{not json", *QUIET_SESSION]
    trace = write_jsonl(tmp_path / "broken.jsonl", lines)

    result = run("analyze", trace, "--format", "json", "--fail-on", "high")

    assert result.exit_code == 2, result.output
    doc = json.loads(result.stdout)
    assert [s["session_id"] for s in doc["sessions"]] == ["attacked", "quiet"]
    [error] = doc["errors"]
    assert set(error) == {"source", "message"}
    assert error["source"] == f"{trace}:{len(TRIFECTA_SESSION) + 1}"
    assert f"{trace}:{len(TRIFECTA_SESSION) + 1}" in result.stderr


def test_missing_input_exits_2(tmp_path: Path, quiet_trace: Path) -> None:
    missing = tmp_path / "nope.jsonl"

    result = run("analyze", missing, quiet_trace, "--format", "json")

    assert result.exit_code == 2
    doc = json.loads(result.stdout)
    assert [s["session_id"] for s in doc["sessions"]] == ["quiet"]
    assert [e["source"] for e in doc["errors"]] == [str(missing)]


@pytest.mark.parametrize(
    "option",
    [
        ["--format", "xml"],
        ["--posture", "lax"],
        ["--fail-on", "sometimes"],
        ["--input-format", "csv"],
        ["--no-such-option"],
    ],
)
def test_unknown_option_values_are_usage_errors(quiet_trace: Path, option: list[str]) -> None:
    result = run("analyze", quiet_trace, *option)

    assert result.exit_code == 2
    assert "Usage:" in result.output
    assert "quiet" not in result.stdout


def test_analyze_needs_a_path() -> None:
    result = run("analyze")

    assert result.exit_code == 2
    assert "Usage:" in result.output


# -- table --------------------------------------------------------------------------------------------------


def test_table_has_one_row_per_session_with_its_level(trifecta_trace: Path) -> None:
    json_result = run("analyze", trifecta_trace, "--format", "json")
    levels = {s["session_id"]: s["level"] for s in json.loads(json_result.stdout)["sessions"]}

    result = run("analyze", trifecta_trace)

    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split()[:2] == ["level", "legs"]
    assert lines[0].split()[-1] == "session"
    rows = {line.split()[-1]: line.split() for line in lines[1:] if line.split() and line.split()[-1] in levels}
    assert set(rows) == {"attacked", "quiet"}
    assert sum(1 for line in lines if line.split()[-1:] in (["attacked"], ["quiet"])) == 2
    for session_id, cells in rows.items():
        assert cells[0] == levels[session_id]
    assert rows["attacked"][1] == "PUX"
    assert "2 sessions" in result.stdout


# -- schema events ------------------------------------------------------------------------------------------


def _event_schema() -> dict[str, Any]:
    result = run("schema", "events")
    assert result.exit_code == 0, result.output
    schema: dict[str, Any] = json.loads(result.stdout)
    return schema


def test_schema_events_names_every_event_kind() -> None:
    schema = _event_schema()

    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    branches = schema.get("oneOf") or schema.get("anyOf")
    assert branches and len(branches) == len(SAMPLE_EVENTS)
    mapping = schema["discriminator"]["mapping"]
    assert set(mapping) == set(SAMPLE_EVENTS)
    for kind, ref in mapping.items():
        definition = schema["$defs"][ref.rsplit("/", 1)[-1]]
        assert definition["properties"]["kind"]["const"] == kind
        assert definition.get("additionalProperties") is False


def test_schema_events_validates_a_sample_line_of_each_kind() -> None:
    schema = _event_schema()
    try:
        import jsonschema  # type: ignore[import-untyped]
    except ImportError:  # not a dependency of the project: check the same lines with the model the schema is from
        jsonschema = None

    for kind, line in SAMPLE_EVENTS.items():
        if jsonschema is not None:
            jsonschema.validate(line, schema, cls=jsonschema.Draft202012Validator)
        assert EVENT_ADAPTER.validate_python(line).kind == kind
    if jsonschema is not None:
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({**SAMPLE_EVENTS["user_message"], "extra": 1}, schema)
    with pytest.raises(ValidationError):
        EVENT_ADAPTER.validate_python({**SAMPLE_EVENTS["user_message"], "extra": 1})


def test_schema_events_requires_the_kind_the_reader_requires() -> None:
    """A line the published schema accepts must not be rejected by the reader: ``kind`` is required by both."""
    schema = _event_schema()

    for ref in schema["discriminator"]["mapping"].values():
        definition = schema["$defs"][ref.rsplit("/", 1)[-1]]
        assert "kind" in definition.get("required", []), f"{definition['title']}: 'kind' is not required"


def test_malformed_run_file_in_an_archive_exits_2_and_the_other_runs_are_reported(
    tmp_path: Path, agentdojo_run: Callable[..., dict[str, Any]]
) -> None:
    archive = tmp_path / "runs.tar.gz"
    members = {
        "m/banking/user_task_0/none/none.json": json.dumps(agentdojo_run(suite_name="banking")).encode(),
        "m/banking/user_task_1/none/none.json": b'{\n  "messages": [\n    {"role": "user",\n',
    }
    with tarfile.open(archive, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))

    result = run("analyze", archive, "--format", "json")

    assert result.exit_code == 2
    document = json.loads(result.stdout)
    assert [s["session_id"] for s in document["sessions"]] == ["m/banking/user_task_0/none/none"]
    [error] = document["errors"]
    assert error["source"].startswith(f"{archive}!m/banking/user_task_1/none/none.json:")
    assert f"{archive}!m/banking/user_task_1/none/none.json" in result.stderr


# -- --jobs and --dask: where the analysis runs never changes what it prints ----------------------------------


@pytest.fixture
def many_inputs(tmp_path: Path, agentdojo_run: Callable[..., dict[str, Any]]) -> list[Path]:
    """The bundled samples, an archive of 150 runs with a malformed one in the middle, and a missing file."""
    archive = tmp_path / "runs.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for i in range(150):
            run_file = agentdojo_run(user_task_id=f"user_task_{i}", injection_task_id=f"injection_task_{i % 5}")
            data = b'{"messages": [' if i == 70 else json.dumps(run_file).encode()
            info = tarfile.TarInfo(f"m/workspace/user_task_{i}/important_instructions/injection_task_{i % 5}.json")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    root = Path(__file__).resolve().parents[2]
    return [root / "samples", archive, tmp_path / "missing.jsonl", root / "samples" / "sessions"]


@pytest.mark.parametrize("output_format", ["table", "json", "jsonl", "sarif"])
@pytest.mark.parametrize("options", [(), ("--posture", "strict", "--level", "armed", "--baseline", "claude")])
def test_analyze_jobs_2_prints_what_jobs_1_prints(
    many_inputs: list[Path], output_format: str, options: tuple[str, ...]
) -> None:
    args = ("analyze", *many_inputs, "--format", output_format, *options)

    one = run(*args, "--jobs", "1")
    two = run(*args, "--jobs", "2")

    assert one.exit_code == 2  # the malformed run and the missing file
    assert (two.exit_code, two.stdout, two.stderr) == (one.exit_code, one.stdout, one.stderr)
    assert "missing.jsonl: no such file or folder" in two.stderr


def test_analyze_jobs_defaults_to_the_cores_and_prints_the_same(
    many_inputs: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    import monitor.cli as cli

    asked: list[int] = []
    analyze_paths = cli.analyze_paths

    def spy(*args: Any, **kwargs: Any) -> Any:
        asked.append(kwargs["jobs"])
        return analyze_paths(*args, **kwargs)

    monkeypatch.setattr(cli, "count_cores", lambda: 2)
    monkeypatch.setattr(cli, "analyze_paths", spy)
    default = run("analyze", *many_inputs, "--format", "json")
    one = run("analyze", *many_inputs, "--format", "json", "--jobs", "1")

    assert asked == [2, 1]
    assert (default.exit_code, default.stdout, default.stderr) == (one.exit_code, one.stdout, one.stderr)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (("--jobs", "0"), "--jobs"),
        (("--jobs", "2", "--dask", "local:2"), "give one of them"),
        (("--dask", "local:none"), "--dask"),
    ],
)
def test_analyze_refuses_a_bad_choice_of_where_to_run(options: tuple[str, ...], message: str) -> None:
    result = run("analyze", Path(__file__).resolve().parents[2] / "samples", *options)

    assert result.exit_code == 2
    assert message in result.output
