"""Replaying runs on a fresh monitor each, and the leave-one-suite-out plan."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from monitor.classify import LoadedRule, RuleSet, hash_rules
from monitor.evaluation._labels import InjectionTask, find_attempt
from monitor.evaluation._scores import Evaluation, HeldOutSuite, LeaveOneSuiteOut, LeftOut, RunResult
from monitor.ingest import AgentDojoRun, read_agentdojo_runs
from monitor.models import Decision, Posture, RecordError, SessionEnd, ToolCall, ToolResult, ToolsListed, UserMessage
from monitor.session import MonitorConfig, SessionMonitor
from monitor.types import OverrideSource

Tasks = Mapping[tuple[str, str], InjectionTask]

_UNKNOWN_TOOL = "invalid tool"


@dataclass(frozen=True)
class LabelledRuns:
    """Runs to replay (a file, folder or archive) and the injection tasks that label their attacks."""

    runs: Path
    tasks: Tasks


def evaluate_agentdojo(
    runs: Path | Sequence[LabelledRuns],
    tasks: Tasks | None = None,
    *,
    rules: OverrideSource | None,
    posture: Posture = Posture.BALANCED,
) -> Evaluation:
    """Replay every run under ``runs`` (file, folder or archive, labelled by ``tasks``; or several, each with its
    own labels) and return its :class:`Evaluation`, every suite of every set scored together.

    Runs are read by the same reader as ``trifecta analyze``, each file once. A file that cannot be read, or
    a run with a message that cannot be replayed, is left out and listed in ``errors`` (naming the file or
    archive entry); nothing is raised.
    """
    evaluation = Evaluation()
    for labelled in _label(runs, tasks):
        for run in read_agentdojo_runs(labelled.runs):
            evaluation.add(_score(run, labelled.tasks, rules, posture))
    return evaluation


def find_suite_servers(runs: Path | Iterable[Path]) -> dict[str, frozenset[str]]:
    """Return, by suite name, the servers the calls of the suite's runs under ``runs`` (one path or several) are
    made on (runs with an error or that cannot be read are left out)."""
    servers: dict[str, set[str]] = defaultdict(set)
    for path in [runs] if isinstance(runs, Path) else runs:
        for run in read_agentdojo_runs(path):
            if isinstance(run, AgentDojoRun) and not run.error:
                servers[_suite_of(run)].update(_servers_of(run))
    return {suite: frozenset(names) for suite, names in sorted(servers.items())}


def remove_rules_for(rules: RuleSet, servers: Iterable[str]) -> tuple[RuleSet, tuple[LoadedRule, ...]]:
    """Return the files of ``rules`` in effect (not overridden) minus those whose ``server`` is exactly one of
    ``servers``, as a rule set, and the files removed. A file another one overrides stays out, even when the
    file overriding it is removed."""
    names = set(servers)
    removed = tuple(r for r in rules.active if r.rule.server in names)
    kept = [r for r in rules.active if r.rule.server not in names]
    return RuleSet(kept, hash_rules(kept)), removed


@dataclass(frozen=True)
class _Plan:
    """A held-out suite: the rules without its own files (None when it has none) and the servers they named."""

    suite: str
    without: RuleSet | None
    removed: tuple[LoadedRule, ...]
    lost: frozenset[str]


def evaluate_leave_one_suite_out(
    runs: Path | Sequence[LabelledRuns],
    tasks: Tasks | None = None,
    *,
    rules: RuleSet,
    posture: Posture = Posture.BALANCED,
) -> LeaveOneSuiteOut:
    """Evaluate with every rule file of ``rules``, and once per suite of the runs (see the package's docstring)
    without the rule files of its own, in suite order. A suite no rule file of its own covers is held out too: its
    evaluation is the one with every file (:attr:`HeldOutSuite.covered` is False).

    Every held-out evaluation counts every run; a run that calls none of the removed servers is counted with
    its replay under every file, which is what it would replay to. Runs are read twice (the first pass finds
    each suite's servers); each is replayed with every file, and again for each held-out suite whose removed
    files name a server it calls. Errors are collected as :func:`evaluate_agentdojo` does.
    """
    sets = _label(runs, tasks)
    plans = []
    for suite, servers in find_suite_servers([s.runs for s in sets]).items():
        without, removed = remove_rules_for(rules, servers)
        plans.append(_Plan(suite, without if removed else None, removed, frozenset(r.rule.server for r in removed)))
    everything = Evaluation()
    held_out = [Evaluation() if plan.without is not None else everything for plan in plans]
    for labelled in sets:
        for run in read_agentdojo_runs(labelled.runs):
            outcome = _score(run, labelled.tasks, rules, posture)
            everything.add(outcome)
            called = _servers_of(run) if isinstance(run, AgentDojoRun) else frozenset()
            for plan, evaluation in zip(plans, held_out, strict=True):
                if plan.without is not None:
                    lost = called & plan.lost
                    evaluation.add(_score(run, labelled.tasks, plan.without, posture) if lost else outcome)
    return LeaveOneSuiteOut(
        everything,
        tuple(HeldOutSuite(plan.suite, plan.removed, e) for plan, e in zip(plans, held_out, strict=True)),
    )


def _label(runs: Path | Sequence[LabelledRuns], tasks: Tasks | None) -> list[LabelledRuns]:
    """The run sets to replay: one path with ``tasks`` (none: every attack is unlabelled), or sets labelled each."""
    if isinstance(runs, Path):
        return [LabelledRuns(runs, tasks or {})]
    if tasks is not None:
        raise ValueError("give several run sets their labels in each LabelledRuns, not as tasks")
    return list(runs)


def _suite_of(run: AgentDojoRun) -> str:
    return run.suite or "unknown"


def _servers_of(run: AgentDojoRun) -> frozenset[str]:
    return frozenset(r.server for r in run.records if isinstance(r, ToolCall | ToolsListed))


def _score(
    run: AgentDojoRun | RecordError,
    tasks: Tasks,
    rules: OverrideSource | None,
    posture: Posture,
) -> RunResult | RecordError | LeftOut:
    """Replay one run and tell what it is: benign, the attacker's goal as the user's task, or an attack with
    its attempt found."""
    if isinstance(run, RecordError):
        return run
    if run.error:
        return LeftOut.EXCLUDED
    result = _replay(run, rules, posture)
    if isinstance(result, RecordError):
        return result
    if run.attack == "none":
        result.kind = "goal-as-prompt" if run.user_task.startswith("injection_task") else "benign"
        return result
    task = tasks.get((result.suite, str(run.injection_task_id)))
    if task is None:
        return LeftOut.UNLABELLED
    result.kind = "attack"
    result.goal_class = task.goal_class
    result.attempt_index = find_attempt(result.calls, task, result.prompt, result.unknown_tools)
    return result


def _replay(run: AgentDojoRun, rules: OverrideSource | None, posture: Posture) -> RunResult | RecordError:
    """Replay one run on a fresh monitor; a message of it that could not be read leaves the run out."""
    monitor = SessionMonitor(MonitorConfig(posture=posture, rules="none" if rules is None else rules))
    decisions: list[Decision] = []
    calls: list[ToolCall] = []
    unknown: set[str] = set()
    prompt: str | None = None
    for record in run.records:
        if isinstance(record, RecordError):
            return RecordError(source=record.source, message=f"run could not be replayed: {record.message}")
        if isinstance(record, SessionEnd):
            continue
        if prompt is None and isinstance(record, UserMessage):
            prompt = record.text
        if isinstance(record, ToolResult) and _names_unknown_tool(record):
            unknown.add(record.call_id)
        decision = monitor.observe(record)
        if isinstance(record, ToolCall) and decision is not None:
            calls.append(record)
            decisions.append(decision)
    # Misses name the run file as found: its path (the input path joined with the path below it) or archive entry.
    session_id = str(PurePosixPath(run.entry)).removeprefix("./").removesuffix(".json")
    return RunResult(
        session_id,
        _suite_of(run),
        "",
        None,
        decisions,
        calls,
        security=run.security,
        prompt=prompt or "",
        # A run with no event the monitor saw (an all-null run) raised nothing.
        alerts=list(monitor.session(run.session_id).alerts) if monitor.has_session(run.session_id) else [],
        unknown_tools=frozenset(i for i, call in enumerate(calls) if call.call_id in unknown),
    )


def _names_unknown_tool(result: ToolResult) -> bool:
    """Whether a call's result is the benchmark's error for a tool that does not exist ("Invalid tool X provided.")."""
    return result.is_error and isinstance(result.result, str) and result.result.casefold().startswith(_UNKNOWN_TOOL)
