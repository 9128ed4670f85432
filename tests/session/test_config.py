"""One configuration value: what it holds, how the monitor reads it, and the spellings it replaces."""

from __future__ import annotations

import pickle
import warnings

import pytest
from pydantic import ValidationError

from monitor import Leg, MonitorConfig, Policy, Posture, ReadBounds, RuleSet, SessionMonitor, load_rules
from monitor.classify import load_builtin_rules
from monitor.scale import EngineSpec


def test_the_defaults_are_the_built_in_packs_the_balanced_posture_and_the_default_policy() -> None:
    config = MonitorConfig()
    assert (config.posture, config.policy, config.rules) == (Posture.BALANCED, Policy(), "builtin")
    assert (config.evidence_budget, config.read_bounds) == (50_000, ReadBounds())
    monitor = SessionMonitor(config)
    assert monitor.config == config and monitor.rules is load_builtin_rules()


def test_rules_take_a_source_the_built_in_packs_or_none() -> None:
    mine = load_rules([], builtin=False)
    assert SessionMonitor(MonitorConfig(rules=mine)).rules is mine
    assert SessionMonitor(MonitorConfig(rules="none")).rules is None
    assert SessionMonitor(rules=None).rules is load_builtin_rules()  # None was always the default
    with pytest.raises(ValidationError):
        MonitorConfig(rules="all")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        MonitorConfig(rules=3)  # type: ignore[arg-type]


def test_the_keyword_arguments_change_the_fields_of_the_config_given() -> None:
    base = MonitorConfig(posture="strict", rules="none", evidence_budget=10)  # type: ignore[arg-type]
    monitor = SessionMonitor(base, policy=Policy(enforce=True), evidence_budget=20)
    assert monitor.config == base.replace(policy=Policy(enforce=True), evidence_budget=20)
    assert (monitor.posture, monitor.policy.enforce, monitor.evidence_budget, monitor.rules) == (
        Posture.STRICT,
        True,
        20,
        None,
    )
    assert base.evidence_budget == 10  # frozen: the base is unchanged


def test_bad_values_and_unknown_fields_are_refused() -> None:
    with pytest.raises(ValidationError):
        MonitorConfig(evidence_budget=0)
    with pytest.raises(ValidationError):
        MonitorConfig(posture="lenient")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        MonitorConfig(rule="none")  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        MonitorConfig().replace(evidence_budget=-1)
    with pytest.raises(ValidationError):
        MonitorConfig().posture = Posture.STRICT  # type: ignore[misc]


def test_builtin_rules_false_is_the_deprecated_spelling_of_rules_none() -> None:
    with pytest.warns(DeprecationWarning, match="rules='none'"):
        monitor = SessionMonitor(builtin_rules=False)
    assert monitor.rules is None and monitor.config.rules == "none"
    mine = load_rules([], builtin=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        assert SessionMonitor(rules=mine, builtin_rules=False).rules is mine
        assert SessionMonitor(builtin_rules=True).rules is load_builtin_rules()


def test_a_config_with_loaded_packs_crosses_to_another_process_whole() -> None:
    """Worker processes and the span processor's engine get the parent's packs as their files."""
    config = MonitorConfig(posture="strict", rules=load_builtin_rules())  # type: ignore[arg-type]
    arrived = pickle.loads(pickle.dumps(config))
    assert isinstance(arrived.rules, RuleSet) and arrived.rules is not config.rules
    assert arrived.rules.sha256 == config.rules.sha256 and len(arrived.rules.active) == len(config.rules.active)  # type: ignore[union-attr]
    # A reviewed rule of the packs classifies the same call alike on both sides (and unlike no packs at all).
    calls = [SessionMonitor(c).before_call("s", "agentdojo-banking", "get_iban", {}, "c1") for c in (config, arrived)]
    unreviewed = SessionMonitor(rules="none").before_call("s", "agentdojo-banking", "get_iban", {}, "c1")
    assert calls[0].legs_call == calls[1].legs_call == {Leg.PRIVATE_DATA} != unreviewed.legs_call
    assert calls[0].rule_ids == calls[1].rule_ids != ()


def test_engine_specs_tell_configs_apart() -> None:
    strict = EngineSpec(MonitorConfig(posture="strict"))  # type: ignore[arg-type]
    assert EngineSpec().key != strict.key
    assert EngineSpec().key != EngineSpec(MonitorConfig(rules="none")).key
    assert EngineSpec().key != EngineSpec(MonitorConfig(evidence_budget=7)).key
    assert EngineSpec().key == EngineSpec(MonitorConfig()).key
    assert SessionMonitor(strict.config).posture is Posture.STRICT
