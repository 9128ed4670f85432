"""What a worker does with one part, and how the parts' results become one stream again, in order."""

from __future__ import annotations

import logging
import multiprocessing
import os
import sys
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from monitor.analysis import AnalysisProgress, analyze_records
from monitor.classify import LoadedRule, RuleSet
from monitor.decide import Policy
from monitor.ingest import InputPart, read_part
from monitor.models import Posture, RecordError, SessionReport
from monitor.session import SessionMonitor

_MONITOR_LOGGER = "monitor"


def count_cores() -> int:
    """Return the number of cores this process may run on (the default of ``--jobs`` and of ``--dask local``):
    its CPU affinity where the system has one (a container's cpuset), else the machine's cores."""
    counter = getattr(os, "process_cpu_count", None)  # Python 3.13
    if counter is not None:
        count = counter()
    elif hasattr(os, "sched_getaffinity"):
        count = len(os.sched_getaffinity(0))
    else:
        count = os.cpu_count()
    return max(1, count or 1)


@dataclass(frozen=True)
class EngineSpec:
    """What a worker needs to build the engine the single-process run builds: the posture, the decision policy
    and the rule packs (loaded once, by the process that starts the run, and shipped to the workers: a worker
    reads no rules file). ``debug`` prints each engine failure's traceback on the worker's standard error."""

    posture: Posture = Posture.BALANCED
    policy: Policy = field(default_factory=Policy)
    rules: RuleSet | None = None
    debug: bool = False

    @property
    def key(self) -> str:
        """Return what tells two specs apart (a worker keeps one engine per key)."""
        rules = self.rules.sha256 if self.rules is not None else "builtin"
        return f"{self.posture.value}|{rules}|{self.policy.model_dump_json()}"

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle the rule packs as their loaded files (a :class:`RuleSet` is rebuilt from them on arrival: its
        own lookup tables are keyed by object identity and do not survive a copy)."""
        files = (self.rules.rules, self.rules.sha256) if self.rules is not None else None
        return (_rebuild_spec, (self.posture, self.policy, files, self.debug))

    def build_monitor(self) -> SessionMonitor:
        """Return a new engine as the spec says."""
        if self.rules is None:
            return SessionMonitor(posture=self.posture, policy=self.policy)
        return SessionMonitor(posture=self.posture, policy=self.policy, rules=self.rules, builtin_rules=False)


def _rebuild_spec(
    posture: Posture, policy: Policy, files: tuple[tuple[LoadedRule, ...], str] | None, debug: bool
) -> EngineSpec:
    rules = RuleSet(files[0], files[1]) if files is not None else None
    return EngineSpec(posture=posture, policy=policy, rules=rules, debug=debug)


@dataclass(frozen=True)
class CaughtWarning:
    """A warning a worker caught while analysing a part, to be issued again by the process that merges."""

    message: str
    category: type[Warning]
    filename: str
    lineno: int


@dataclass(frozen=True)
class PartResult:
    """What analysing one part gave: its sessions and errors in order, how many records were read, the warnings
    raised meanwhile."""

    index: int
    items: tuple[SessionReport | RecordError, ...]
    records: int
    warnings: tuple[CaughtWarning, ...] = ()


_engines: dict[str, SessionMonitor] = {}


def analyze_part(part: InputPart, spec: EngineSpec) -> PartResult:
    """Analyse one part with this process's engine for ``spec``; warnings are caught and returned, not printed.

    The engine is kept for the next part (the sessions of a part all end with it); one that still holds a
    session afterwards (its end failed) is replaced, so no part sees another's sessions.
    """
    monitor = _engines.get(spec.key)
    if monitor is None:
        monitor = _engines[spec.key] = spec.build_monitor()
        if spec.debug and multiprocessing.parent_process() is not None:  # in this process, the caller shows them
            _show_tracebacks()
    progress = AnalysisProgress()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        items = tuple(analyze_records(read_part(part), monitor, progress))
    if monitor.sessions():
        del _engines[spec.key]
    kept = tuple(
        CaughtWarning(str(w.message), w.category, w.filename, w.lineno) for w in caught if _picklable(w.category)
    )
    return PartResult(part.index, items, progress.records, kept)


def fail_part(part: InputPart, what: str) -> PartResult:
    """The result of a part a worker could not analyse: one error naming the part, and nothing else from it."""
    error = RecordError(source=part.name, message=f"{what}; the sessions of this part are not reported")
    return PartResult(part.index, (error,), 0)


def describe_exception(exc: BaseException) -> str:
    """Return an exception in one line: its type and its text."""
    text = " ".join(str(exc).split())
    text = text if len(text) <= 200 else text[:199] + "…"
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class Merger:
    """Passes on the results of the parts in order, counting progress, and issues the workers' warnings in this
    process (once per message and place, as Python's default filter shows a warning raised here)."""

    def __init__(self, progress: AnalysisProgress | None) -> None:
        self.progress = progress if progress is not None else AnalysisProgress()
        self._registries: dict[str, dict[Any, Any]] = {}

    def emit(self, result: PartResult) -> Iterator[SessionReport | RecordError]:
        """Yield one part's sessions and errors, after its warnings, and count them."""
        for w in result.warnings:
            registry = self._registries.setdefault(w.filename, {})
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, registry=registry)
        self.progress.records += result.records
        for item in result.items:
            if isinstance(item, RecordError):
                self.progress.errors += 1
            else:
                self.progress.sessions += 1
            yield item


def _picklable(category: type[Warning]) -> bool:
    module = sys.modules.get(category.__module__)
    return module is not None and getattr(module, category.__qualname__, None) is category


def _show_tracebacks() -> None:
    logging.getLogger(_MONITOR_LOGGER).addHandler(logging.StreamHandler(sys.stderr))
