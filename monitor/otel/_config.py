"""The span processor's settings: validated once into a frozen value that every part of it takes.

The processor, its session links, the delivery, the workers, the engine and the engine process all read their
bounds from one :class:`ProcessorConfig`; the engine process receives it, pickled, as the first thing on its
standard input (:func:`pack_config`, :func:`unpack_config`).
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass, field
from enum import StrEnum

from monitor.session import MonitorConfig, SessionMonitor


class WorkerKind(StrEnum):
    """Where the engine runs."""

    PROCESS = "process"  # a child process: the engine does not compete with the application for the GIL
    THREAD = "thread"  # the processor's delivery thread, in this process


class LevelStamps(StrEnum):
    """Which spans of a session get ``trifecta.level`` and ``trifecta.legs`` when they start (every one of them
    gets ``trifecta.session_id``)."""

    TOOLS = "tools"  # tool spans: the level and legs each call started at (the default)
    ALL = "all"  # every span of the session, its agent, chat and other spans too
    NONE = "none"  # none: the session id only

    @classmethod
    def _missing_(cls, value: object) -> LevelStamps:
        choices = ", ".join(kind.value for kind in cls)
        raise ValueError(f"level_stamps must be one of {choices}, not {value!r}")


@dataclass(frozen=True, slots=True, kw_only=True)
class ProcessorConfig:
    """The span processor's bounds and options, and those of the monitor it makes.

    ``max_spans``/``span_ttl`` bound the span links kept on the application side and in the engine;
    ``max_sessions``/``session_ttl`` the sessions; ``max_queue_bytes`` the records waiting for the engine, on
    each side of the pipe; ``max_engine_bytes`` the engine process's resident memory (beyond
    it, the least recently active sessions are ended, as beyond ``max_sessions``); ``check_timeout`` is how
    long ``check_tool_call`` waits (seconds). ``level_stamps`` says which spans get the level and legs;
    ``engine_niceness`` lowers the engine process's priority. ``monitor_config`` configures the
    :class:`SessionMonitor` the engine feeds; the annotations of tools listed by a server named in
    ``trusted_servers`` are trusted (their hints may lower risk). ``guardrail_attributes`` also writes each
    decision with the proposed guardrail attribute names (:mod:`monitor.otel._guardrail`). With
    ``decision_notices`` the engine sends every decision back as a notice, for the processor's ``sink``.

    Raises ``ValueError`` when a bound, time-to-live or the timeout is not positive, or ``engine_niceness`` is
    not from 0 to 19.
    """

    max_spans: int = 100_000
    span_ttl: float = 3600.0
    max_sessions: int = 10_000
    session_ttl: float = 3600.0
    max_queue_bytes: int = 128 * 1024 * 1024
    max_engine_bytes: int = 256 * 1024 * 1024
    check_timeout: float = 5.0
    level_stamps: LevelStamps = LevelStamps.TOOLS
    engine_niceness: int = 10
    monitor_config: MonitorConfig = field(default_factory=MonitorConfig)
    trusted_servers: frozenset[str] = frozenset()
    guardrail_attributes: bool = False
    decision_notices: bool = False

    def __post_init__(self) -> None:
        if min(self.max_spans, self.max_sessions, self.max_queue_bytes, self.max_engine_bytes) < 1 or (
            min(self.span_ttl, self.session_ttl, self.check_timeout) <= 0
        ):
            raise ValueError("the bounds, time-to-lives and timeout must be positive")
        if not 0 <= self.engine_niceness <= 19:
            raise ValueError("engine_niceness must be from 0 (the application's priority) to 19 (the lowest)")
        # Given as text, the enumerations are held as members from here on.
        object.__setattr__(self, "level_stamps", LevelStamps(self.level_stamps))
        object.__setattr__(self, "trusted_servers", frozenset(self.trusted_servers))

    def make_monitor(self) -> SessionMonitor:
        """A new :class:`SessionMonitor` made with :attr:`monitor_config`."""
        return SessionMonitor(self.monitor_config)


def pack_config(config: ProcessorConfig) -> bytes:
    """The configuration as the engine process reads it (raises ValueError when the rules cannot be sent)."""
    try:
        return pickle.dumps(config)
    except Exception as error:
        raise ValueError(f"the rules cannot be sent to the engine process ({error}); use worker='thread'") from error


def unpack_config(data: bytes) -> ProcessorConfig:
    """The configuration :func:`pack_config` packed (raises TypeError when ``data`` holds something else)."""
    config = pickle.loads(data)
    if not isinstance(config, ProcessorConfig):
        raise TypeError(f"not a span processor configuration: {type(config).__name__}")
    return config
