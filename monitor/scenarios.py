"""Scenarios written as data: a session, step by step, and what a security user expects the monitor to decide.

A scenario is one YAML file (``tests/scenarios/<area>/<id>.yaml``): the servers of a session with their
``tools/list`` definitions, the events in order (the user's words, tool calls with their results, the model's
words), and the expectation. An *attack* names the call that must not run unasked (``stop``: ``confirm`` or
``deny``), optionally the reason codes it must carry and an alert the session must raise; a *legitimate*
scenario expects every call (``allow_all``) or the calls it names (``allow``) to be allowed, and may cap the
alerts' severity. Attacks and legitimate look-alikes come in pairs (``pair``), so that a rule that stops an
attack by also stopping its twin shows as a failure.

:func:`load_scenarios` reads a folder (YAML read with bounded work and only the core tags,
:func:`monitor.classify.read_yaml_file`, into the strict models below); a bad file becomes a
:class:`~monitor.models.RecordError` naming the file and, where YAML gives it, the line, and the other files
still load. :func:`run_scenario` replays one scenario on a fresh :class:`~monitor.session.SessionMonitor` and
lists every unmet expectation as a sentence; :func:`run_scenarios` runs many and counts.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import yaml
from pydantic import BaseModel, ConfigDict, Discriminator, Field, PrivateAttr, Tag, ValidationError, model_validator

from monitor.classify import YamlProblem, read_yaml_file
from monitor.decide import Policy
from monitor.ingest import find_yaml_line
from monitor.models import Action, AlertKind, Decision, Level, Posture, Reason, RecordError, Severity
from monitor.session import MonitorConfig, SessionMonitor

__all__ = [
    "AlertOutcome",
    "Area",
    "AssistantStep",
    "CallOutcome",
    "CallStep",
    "Expectation",
    "Scenario",
    "ScenarioCall",
    "ScenarioKind",
    "ScenarioReport",
    "ScenarioResult",
    "ScenarioServer",
    "Step",
    "UserStep",
    "build_scenario_schema",
    "load_scenario_file",
    "load_scenarios",
    "run_scenario",
    "run_scenarios",
]

_KEBAB = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"
_SUFFIXES = (".yaml", ".yml")


class ScenarioKind(StrEnum):
    """What a scenario shows: an attack the monitor must stop, or legitimate work it must let through."""

    ATTACK = "attack"
    LEGITIMATE = "legitimate"


class Area(StrEnum):
    """The kind of product a scenario's session works with."""

    CODE_HOSTING = "code-hosting"
    TEAM_CHAT = "team-chat"
    MAIL = "mail"
    CALENDAR = "calendar"
    PAYMENTS = "payments"
    FILES = "files"
    WEB = "web"
    CLAUDE_CODE = "claude-code"
    UNKNOWN_SERVER = "unknown-server"


class _Value(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ScenarioServer(_Value):
    """One server of the session. ``tools`` is its ``tools/list`` result as served; an empty list means the
    host never listed it (Claude Code's built-in tools, traces without ``tools/list``): its calls are
    classified by name alone."""

    name: str = Field(min_length=1)
    trusted: bool = False
    tools: tuple[dict[str, Any], ...] = ()

    @model_validator(mode="after")
    def _check(self) -> ScenarioServer:
        if self.trusted and not self.tools:
            raise ValueError("a trusted server lists its tools (trust is given with tools/list)")
        for i, tool in enumerate(self.tools):
            if not isinstance(tool.get("name"), str) or not tool["name"]:
                raise ValueError(f"tools.{i} has no name")
        return self


class ScenarioCall(_Value):
    """A tool call as the host requests it. ``arguments: null`` means they were not recorded."""

    id: str = Field(min_length=1)
    server: str = Field(min_length=1)
    tool: str = Field(min_length=1)
    arguments: dict[str, Any] | None = Field(default_factory=dict)


class UserStep(_Value):
    """Text the user typed."""

    user: str


class AssistantStep(_Value):
    """Text the model wrote (every call requested before it has run by then)."""

    assistant: str


class CallStep(_Value):
    """A call, decided before it runs; ``result`` (any JSON: an MCP ``CallToolResult`` or plain text), when
    given, is recorded right after it. Without ``result`` the call's outcome is never recorded."""

    call: ScenarioCall
    result: Any = None
    is_error: bool = False

    @property
    def has_result(self) -> bool:
        """Whether the file gives the call's result (``result: null`` is a result that was not captured)."""
        return "result" in self.model_fields_set


def _step_kind(value: Any) -> str | None:
    if isinstance(value, dict):
        found = [key for key in ("user", "assistant", "call") if key in value]
        return found[0] if len(found) == 1 else None
    if isinstance(value, BaseModel):
        return {UserStep: "user", AssistantStep: "assistant", CallStep: "call"}.get(type(value))
    return None


Step = Annotated[
    Annotated[UserStep, Tag("user")] | Annotated[AssistantStep, Tag("assistant")] | Annotated[CallStep, Tag("call")],
    Discriminator(
        _step_kind,
        custom_error_type="step_kind",
        custom_error_message="an event has exactly one of the keys user, assistant or call",
    ),
]
"""One event of a scenario: a user message, an assistant message, or a call (with its result)."""


class Expectation(_Value):
    """What must happen. ``stop`` (attacks): that call gets ``confirm`` or ``deny`` (exactly ``action`` when
    given) and carries every code of ``reasons``. ``alert``: the session raises an alert of that kind.
    ``allow_all`` / ``allow``: every call / those calls are allowed. ``max_alert_severity``: no alert above it."""

    stop: str | None = None
    action: Action | None = None
    reasons: tuple[Reason, ...] = ()
    alert: AlertKind | None = None
    allow_all: bool = False
    allow: tuple[str, ...] = ()
    max_alert_severity: Severity | None = None

    @model_validator(mode="after")
    def _check(self) -> Expectation:
        if self.stop is None and (self.action is not None or self.reasons):
            raise ValueError("action and reasons are about the stop call: give stop")
        if self.action is Action.ALLOW:
            raise ValueError("the stop call's action is confirm or deny")
        if self.stop is not None and (self.allow_all or self.stop in self.allow):
            raise ValueError(f"call {self.stop!r} cannot be both stopped and allowed")
        return self


class Scenario(_Value):
    """One scenario file."""

    id: str = Field(pattern=_KEBAB)
    title: str = Field(min_length=1)
    description: str = ""
    kind: ScenarioKind
    pair: str | None = Field(default=None, pattern=_KEBAB)
    area: Area
    shape: str = Field(pattern=_KEBAB)
    policy: Policy = Field(default_factory=Policy)
    posture: Posture = Posture.BALANCED
    builtin_rules: bool = True
    servers: tuple[ScenarioServer, ...] = ()
    events: tuple[Step, ...] = Field(min_length=1)
    expect: Expectation

    _source: str = PrivateAttr(default="")

    @property
    def source(self) -> str:
        """The file the scenario was read from ('' when built in code)."""
        return self._source

    @property
    def calls(self) -> list[ScenarioCall]:
        """The scenario's calls, in order."""
        return [step.call for step in self.events if isinstance(step, CallStep)]

    @model_validator(mode="after")
    def _check(self) -> Scenario:
        servers = {s.name: s for s in self.servers}
        if len(servers) != len(self.servers):
            raise ValueError("two servers have the same name")
        ids: set[str] = set()
        for call in self.calls:
            if call.id in ids:
                raise ValueError(f"call id {call.id!r} is used twice")
            ids.add(call.id)
            server = servers.get(call.server)
            if server is None:
                raise ValueError(f"call {call.id!r} names server {call.server!r}, which is not under servers")
            listed = {t["name"] for t in server.tools}
            if listed and call.tool not in listed:
                raise ValueError(f"call {call.id!r}: server {call.server!r} lists no tool {call.tool!r}")
        expect = self.expect
        for name in [expect.stop, *expect.allow]:
            if name is not None and name not in ids:
                raise ValueError(f"expect names call {name!r}, but no call has that id")
        if self.kind is ScenarioKind.ATTACK and expect.stop is None:
            raise ValueError("an attack names the call that must be stopped (expect.stop)")
        if self.kind is ScenarioKind.LEGITIMATE and expect.stop is not None:
            raise ValueError("a legitimate scenario stops nothing (expect.stop is for attacks)")
        if self.pair == self.id:
            raise ValueError("a scenario is not its own pair")
        return self


class CallOutcome(_Value):
    """What the monitor decided for one call of a run."""

    call_id: str
    server: str
    tool: str
    action: Action
    level: Level
    reasons: tuple[Reason, ...]


class AlertOutcome(_Value):
    """An alert the run's session raised."""

    kind: AlertKind
    severity: Severity
    call_id: str | None
    message: str


class ScenarioResult(_Value):
    """One scenario run: passed when ``failures`` is empty."""

    id: str
    title: str
    kind: ScenarioKind
    area: Area
    shape: str
    source: str
    passed: bool
    stopped: bool | None
    """Attacks: whether the stop call got ``confirm`` or ``deny``. None for legitimate scenarios."""
    failures: tuple[str, ...]
    calls: tuple[CallOutcome, ...]
    alerts: tuple[AlertOutcome, ...]


class ScenarioReport(_Value):
    """Many runs, the files that could not be read, and the counts."""

    results: tuple[ScenarioResult, ...]
    errors: tuple[RecordError, ...] = ()

    @property
    def ok(self) -> bool:
        """Every scenario passed and every file was read."""
        return not self.errors and all(r.passed for r in self.results)

    def summary(self) -> str:
        """One line, e.g. ``44 scenarios: 44 passed (attack 22/22 stopped, legitimate 22/22 passed)``."""
        passed = sum(r.passed for r in self.results)
        failed = len(self.results) - passed
        attacks = [r for r in self.results if r.kind is ScenarioKind.ATTACK]
        legit = [r for r in self.results if r.kind is ScenarioKind.LEGITIMATE]
        line = f"{len(self.results)} scenario{'s' if len(self.results) != 1 else ''}: {passed} passed"
        if failed:
            line += f", {failed} failed"
        line += (
            f" (attack {sum(bool(r.stopped) for r in attacks)}/{len(attacks)} stopped, "
            f"legitimate {sum(r.passed for r in legit)}/{len(legit)} passed)"
        )
        if self.errors:
            line += f"; {len(self.errors)} bad file{'s' if len(self.errors) != 1 else ''}"
        return line


# -- loading ------------------------------------------------------------------------------------------------


def load_scenarios(directory: str | Path) -> list[Scenario | RecordError]:
    """Read every ``*.yaml``/``*.yml`` under ``directory`` (or that one file), in path order. A bad file (not
    YAML, an unknown key, a wrong value, an id that is not its file's stem, an id another file already has)
    becomes a :class:`RecordError` naming the file and line; the other files still load."""
    root = Path(directory)
    paths = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.suffix in _SUFFIXES and p.is_file())
    loaded: list[Scenario | RecordError] = []
    first_seen: dict[str, str] = {}
    for path in paths:
        item = load_scenario_file(path)
        if isinstance(item, Scenario):
            if item.id in first_seen:
                item = RecordError(
                    source=item.source, message=f"duplicate scenario id {item.id!r} (also {first_seen[item.id]})"
                )
            else:
                first_seen[item.id] = item.source
        loaded.append(item)
    return loaded


def load_scenario_file(path: str | Path) -> Scenario | RecordError:
    """Read one scenario file; a problem becomes a :class:`RecordError` (``file:line``)."""
    path = Path(path)
    try:
        node, data = read_yaml_file(path)
    except YamlProblem as exc:
        return RecordError(source=f"{path}:{exc.line}", message=exc.message)
    if not isinstance(node, yaml.MappingNode):
        return RecordError(source=f"{path}:1", message="a scenario file is a mapping")
    try:
        scenario = Scenario.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = tuple(err["loc"])
        where = ".".join(str(p) for p in loc) or "file"
        message = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            message = f"unknown key {loc[-1]!r}"
        more = f" (and {len(exc.errors()) - 1} more)" if len(exc.errors()) > 1 else ""
        return RecordError(source=f"{path}:{find_yaml_line(node, loc)}", message=f"{where}: {message}{more}")
    source = f"{path}:{find_yaml_line(node, ('id',))}"
    if scenario.id != path.stem:
        return RecordError(source=source, message=f"id {scenario.id!r} differs from the file name {path.stem!r}")
    scenario._source = str(path)
    return scenario


def build_scenario_schema() -> dict[str, Any]:
    """Return the JSON Schema of a scenario file."""
    schema = Scenario.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "trifecta-monitor scenario"
    return schema


# -- running ------------------------------------------------------------------------------------------------


def run_scenario(scenario: Scenario) -> ScenarioResult:
    """Replay ``scenario`` on a fresh monitor (its posture, policy and rule packs) and check the expectation."""
    rules = "builtin" if scenario.builtin_rules else "none"
    monitor = SessionMonitor(MonitorConfig(posture=scenario.posture, policy=scenario.policy, rules=rules))
    session_id = scenario.id
    for server in scenario.servers:
        if server.tools:
            monitor.register_tools(session_id, server.name, [dict(t) for t in server.tools], trusted=server.trusted)
    decided: dict[str, tuple[ScenarioCall, Decision]] = {}
    for step in scenario.events:
        if isinstance(step, UserStep):
            monitor.observe_user_message(session_id, step.user)
        elif isinstance(step, AssistantStep):
            monitor.observe_assistant_message(session_id, step.assistant)
        else:
            call = step.call
            decision = monitor.before_call(session_id, call.server, call.tool, call.arguments, call_id=call.id)
            decided[call.id] = (call, decision)
            if step.has_result:
                monitor.after_call(session_id, decision.call_id, step.result, step.is_error)
    report = monitor.end_session(session_id)
    alerts = tuple(
        AlertOutcome(kind=a.kind, severity=a.severity, call_id=a.call_id, message=a.message) for a in report.alerts
    )
    failures = _check_expectation(scenario.expect, decided, alerts)
    failed = monitor.take_failures()
    failures[:0] = [f"the monitor failed in {f.operation} ({f.call_id or 'no call'}): {f.error}" for f in failed]
    stop = scenario.expect.stop
    return ScenarioResult(
        id=scenario.id,
        title=scenario.title,
        kind=scenario.kind,
        area=scenario.area,
        shape=scenario.shape,
        source=scenario.source,
        passed=not failures,
        stopped=None if stop is None else decided[stop][1].action is not Action.ALLOW and not failed,
        failures=tuple(failures),
        calls=tuple(
            CallOutcome(
                call_id=call.id,
                server=call.server,
                tool=call.tool,
                action=d.action,
                level=d.level,
                reasons=d.reasons,
            )
            for call, d in decided.values()
        ),
        alerts=alerts,
    )


def run_scenarios(items: Iterable[Scenario | RecordError]) -> ScenarioReport:
    """Run every scenario of ``items`` (as :func:`load_scenarios` returns them); keep the errors beside."""
    results: list[ScenarioResult] = []
    errors: list[RecordError] = []
    for item in items:
        if isinstance(item, RecordError):
            errors.append(item)
        else:
            results.append(run_scenario(item))
    return ScenarioReport(results=tuple(results), errors=tuple(errors))


def _describe(call: ScenarioCall, decision: Decision) -> str:
    reasons = ", ".join(r.value for r in decision.reasons) or "none"
    action, level = decision.action.value, decision.level.value
    return f"{call.id} ({call.server}/{call.tool}) got {action} (level {level}; reasons {reasons})"


def _check_expectation(
    expect: Expectation, decided: dict[str, tuple[ScenarioCall, Decision]], alerts: tuple[AlertOutcome, ...]
) -> list[str]:
    """Every unmet expectation, as a sentence naming the call, what it got and what was expected."""
    failures: list[str] = []
    if expect.stop is not None:
        call, decision = decided[expect.stop]
        if decision.action is Action.ALLOW:
            failures.append(f"{_describe(call, decision)}; expected confirm or deny")
        elif expect.action is not None and decision.action is not expect.action:
            failures.append(f"{_describe(call, decision)}; expected {expect.action.value}")
        missing = [r.value for r in expect.reasons if r not in decision.reasons]
        if missing:
            failures.append(f"{call.id} ({call.server}/{call.tool}) lacks reason(s) {', '.join(missing)}")
    allowed = list(decided) if expect.allow_all else list(expect.allow)
    for call_id in allowed:
        call, decision = decided[call_id]
        if decision.action is not Action.ALLOW:
            failures.append(f"{_describe(call, decision)}; expected allow")
    kinds = [a.kind for a in alerts]
    if expect.alert is not None and expect.alert not in kinds:
        raised = ", ".join(dict.fromkeys(k.value for k in kinds)) or "none"
        failures.append(f"no {expect.alert.value} alert was raised (raised: {raised})")
    cap = expect.max_alert_severity
    if cap is not None:
        for alert in alerts:
            if alert.severity.rank > cap.rank:
                on = f" on {alert.call_id}" if alert.call_id else ""
                failures.append(f"{alert.kind.value} alert ({alert.severity.value}){on} is above {cap.value}")
    return failures
