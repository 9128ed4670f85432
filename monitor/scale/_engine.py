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

from monitor.analysis import AnalysisProgress, analyze_records, collect_for_batch
from monitor.classify import RuleSet
from monitor.ingest import InputPart, read_part
from monitor.models import RecordError, SessionReport
from monitor.session import MonitorConfig, SessionMonitor

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
    """What a worker needs to build the engine the single-process run builds: the monitor's configuration, with
    its rule packs loaded once by the process that starts the run and shipped to the workers (a worker reads no
    rules file). ``debug`` prints each engine failure's traceback on the worker's standard error."""

    config: MonitorConfig = field(default_factory=MonitorConfig)
    debug: bool = False

    @property
    def key(self) -> str:
        """Return what tells two specs apart (a worker keeps one engine per key)."""
        rules = self.config.rules
        named = rules.sha256 if isinstance(rules, RuleSet) else rules if isinstance(rules, str) else f"id{id(rules)}"
        config = self.config
        bounds = f"{config.evidence_budget}|{config.read_bounds}"
        return f"{config.posture.value}|{named}|{bounds}|{config.policy.model_dump_json()}"

    def build_monitor(self) -> SessionMonitor:
        """Return a new engine as the spec says."""
        return SessionMonitor(self.config)


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
    with warnings.catch_warnings(record=True) as caught, collect_for_batch():
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
