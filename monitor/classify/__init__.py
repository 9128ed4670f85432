"""Classification of tool calls into the three legs (DESIGN §3): reviewed overrides, annotations,
heuristics and the posture's default, each leg with its provenance; and the rule packs behind the overrides."""

from monitor.classify._effects import (
    CODE_EXECUTION_PATHS,
    EFFECT_SIGNALS,
    EffectSignal,
    classify_effects,
    names_code_execution_path,
)
from monitor.classify._engine import CallClassification, Classifier
from monitor.classify._heuristics import HEURISTICS, Heuristic, Where, match_heuristics, tokenize_name
from monitor.classify._labels import (
    MAX_LABEL_BLOCKS,
    TRUST_ANNOTATIONS_KEY,
    Label,
    LabelClaim,
    LabelledResult,
    LabelScheme,
    ResultLabels,
    apply_labels,
    read_action_metadata,
    read_result_labels,
)
from monitor.classify._loader import builtin_rules_dir, hash_rules, load_builtin_rules, load_rules
from monitor.classify._overrides import LoadedRule, RuleSet, UncheckedPin, resolve_argument
from monitor.classify._rules import (
    Condition,
    RuleFile,
    RuleTest,
    Status,
    ToolRule,
    Trust,
    build_rule_schema,
    find_wildcard_risks,
)
from monitor.classify._ruletests import TestOutcome, check_test_coverage, run_rule_tests
from monitor.classify._safe_yaml import YamlLimits, YamlProblem, load_yaml_text, read_yaml_file
from monitor.classify._suggest import draft_rule_file, dump_rule_file, parse_definitions, update_pins

__all__ = [
    "CODE_EXECUTION_PATHS",
    "CallClassification",
    "Classifier",
    "Condition",
    "EFFECT_SIGNALS",
    "EffectSignal",
    "HEURISTICS",
    "Heuristic",
    "Label",
    "LabelClaim",
    "LabelScheme",
    "LabelledResult",
    "LoadedRule",
    "MAX_LABEL_BLOCKS",
    "ResultLabels",
    "RuleFile",
    "RuleSet",
    "RuleTest",
    "Status",
    "TRUST_ANNOTATIONS_KEY",
    "TestOutcome",
    "ToolRule",
    "Trust",
    "UncheckedPin",
    "Where",
    "YamlLimits",
    "YamlProblem",
    "apply_labels",
    "build_rule_schema",
    "builtin_rules_dir",
    "check_test_coverage",
    "classify_effects",
    "draft_rule_file",
    "dump_rule_file",
    "find_wildcard_risks",
    "hash_rules",
    "load_builtin_rules",
    "load_rules",
    "load_yaml_text",
    "match_heuristics",
    "names_code_execution_path",
    "parse_definitions",
    "read_action_metadata",
    "read_result_labels",
    "read_yaml_file",
    "resolve_argument",
    "run_rule_tests",
    "tokenize_name",
    "update_pins",
]
