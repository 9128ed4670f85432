"""The span processor's settings: validated once, frozen, and sent whole to the engine process."""

from __future__ import annotations

import dataclasses
import pickle
import threading
from typing import Any

import pytest

from monitor.classify import RuleSet, load_builtin_rules
from monitor.decide import Policy
from monitor.models import Posture
from monitor.otel import LevelStamps
from monitor.otel._config import ProcessorConfig, pack_config, unpack_config
from monitor.session import MonitorConfig, SessionMonitor


def test_the_defaults_are_the_processors() -> None:
    config = ProcessorConfig()
    assert (config.max_spans, config.span_ttl) == (100_000, 3600.0)
    assert (config.max_sessions, config.session_ttl) == (10_000, 3600.0)
    assert (config.max_queue_bytes, config.check_timeout, config.engine_niceness) == (128 << 20, 5.0, 10)
    assert config.max_engine_bytes == 256 << 20
    assert config.level_stamps is LevelStamps.TOOLS and config.monitor_config == MonitorConfig()


@pytest.mark.parametrize(
    "bad",
    [
        {"max_spans": 0},
        {"max_sessions": 0},
        {"max_queue_bytes": 0},
        {"max_engine_bytes": 0},
        {"span_ttl": 0.0},
        {"session_ttl": -1.0},
    ],
)
def test_bounds_and_time_to_lives_must_be_positive(bad: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="the bounds, time-to-lives and timeout must be positive"):
        ProcessorConfig(**bad)
    with pytest.raises(ValueError, match="must be positive"):
        ProcessorConfig(check_timeout=0.0)


def test_engine_niceness_is_from_0_to_19() -> None:
    assert ProcessorConfig(engine_niceness=0).engine_niceness == 0
    assert ProcessorConfig(engine_niceness=19).engine_niceness == 19
    for niceness in (-1, 20):
        with pytest.raises(ValueError, match="engine_niceness must be from 0"):
            ProcessorConfig(engine_niceness=niceness)


def test_options_given_as_text_are_held_as_their_members() -> None:
    config = ProcessorConfig(level_stamps="all", monitor_config=MonitorConfig(posture="strict"))  # type: ignore[arg-type]
    assert config.level_stamps is LevelStamps.ALL and config.monitor_config.posture is Posture.STRICT
    with pytest.raises(ValueError, match="level_stamps must be one of tools, all, none, not 'calls'"):
        LevelStamps("calls")


def test_the_config_is_frozen() -> None:
    config = ProcessorConfig()
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.max_spans = 1  # type: ignore[misc]


def test_the_config_reaches_the_engine_process_whole() -> None:
    made_with = MonitorConfig(policy=Policy(enforce=True), rules=load_builtin_rules())
    config = ProcessorConfig(max_spans=7, session_ttl=9.5, monitor_config=made_with, level_stamps=LevelStamps.NONE)
    arrived = unpack_config(pack_config(config))
    assert arrived.max_spans == 7 and arrived.monitor_config.policy == made_with.policy
    # The rule packs arrive as their files, and classify as the parent's do.
    assert (
        isinstance(arrived.monitor_config.rules, RuleSet)
        and arrived.monitor_config.rules.sha256 == load_builtin_rules().sha256
    )
    assert len(arrived.monitor_config.rules.active) == len(load_builtin_rules().active)
    with pytest.raises(TypeError, match="not a span processor configuration"):
        unpack_config(pickle.dumps({"max_spans": 7}))


class Unpicklable:
    """Reviewed rules that cannot cross to another process (they hold a lock)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()

    def classify(self, tool: Any) -> None:
        """No rule."""
        return None

    def trust_for(self, server: str) -> bool | None:
        """No opinion."""
        return None


def test_rules_that_cannot_reach_the_engine_process_are_refused() -> None:
    with pytest.raises(ValueError, match=r"the rules cannot be sent to the engine process .*use worker='thread'"):
        pack_config(ProcessorConfig(monitor_config=MonitorConfig(rules=Unpicklable())))


def test_the_monitor_made_has_the_configured_posture_policy_and_rules() -> None:
    rules = Unpicklable()
    made_with = MonitorConfig(posture=Posture.STRICT, policy=Policy(enforce=True), rules=rules)
    monitor = ProcessorConfig(monitor_config=made_with).make_monitor()
    assert monitor.posture is Posture.STRICT and monitor.policy.enforce and monitor.rules is rules


def test_the_processor_takes_the_monitors_config_and_its_fields_one_by_one() -> None:
    from monitor.otel import TrifectaSpanProcessor

    made_with = MonitorConfig(posture=Posture.STRICT, rules="none")
    processor = TrifectaSpanProcessor(monitor_config=made_with, policy=Policy(enforce=True), worker="thread")
    try:
        assert processor.config.monitor_config == made_with.replace(policy=Policy(enforce=True))
    finally:
        processor.shutdown()
    with pytest.raises(ValueError, match="either a monitor or monitor_config"):
        TrifectaSpanProcessor(SessionMonitor(), monitor_config=made_with)
    with pytest.raises(ValueError, match="either a monitor or monitor_config"):
        TrifectaSpanProcessor(SessionMonitor(), posture="strict")
