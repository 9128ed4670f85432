"""``monitor.lint._catalogue``: the registry of rule ids, and one validator for every rule."""

from __future__ import annotations

from monitor.lint import LABEL_RULE_IDS, LINT_RULES, RULES_BY_ID, VALIDATORS, LintSeverity


def test_registry_ids_are_unique_kebab_case_with_severity_title_and_help() -> None:
    assert len(RULES_BY_ID) == len(LINT_RULES)
    for rule in LINT_RULES:
        assert rule.title and rule.help
        assert rule.severity in (LintSeverity.ERROR, LintSeverity.WARNING)
    errors = {r.id for r in LINT_RULES if r.severity is LintSeverity.ERROR}
    assert {"annotation-unknown-member", "hint-not-boolean", "annotations-unsupported-protocol"} <= errors
    warnings = {r.id for r in LINT_RULES if r.severity is LintSeverity.WARNING}
    assert {"hint-missing", "hint-ignored-when-read-only", "duplicate-tool-name", "instruction-in-description"} <= (
        warnings
    )


def test_every_rule_but_unreadable_input_and_result_labels_has_exactly_one_validator_with_its_severity() -> None:
    checked = [validator.id for validator in VALIDATORS]
    per_tool = [rule.id for rule in LINT_RULES if rule.id != "input-unreadable" and rule.id not in LABEL_RULE_IDS]
    assert sorted(checked) == sorted(per_tool)
    for validator in VALIDATORS:
        assert validator().severity is RULES_BY_ID[validator.id].severity
