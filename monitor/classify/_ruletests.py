"""Running the inline tests of rule files (``trifecta rules test``)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from monitor.classify._engine import Classifier
from monitor.classify._overrides import LoadedRule, RuleSet
from monitor.classify._rules import GLOB_CHARS, RuleTest
from monitor.evidence import ContentIndex
from monitor.models import Leg, Posture, ToolContext, ToolDefinition, parse_tool, sort_legs


@dataclass(frozen=True)
class TestOutcome:
    """The outcome of one inline test (or of a file-level requirement, with ``index`` None)."""

    source: str
    index: int | None
    passed: bool
    message: str


def check_test_coverage(loaded: LoadedRule) -> list[str]:
    """Problems with a file's tests as a whole: each file needs a positive and a negative test."""
    tests = loaded.rule.tests
    problems = []
    if not any(t.is_positive for t in tests):
        problems.append("needs at least one positive test (a call and the 'legs' it gets)")
    if not any(t.is_negative for t in tests):
        problems.append("needs at least one negative test (legs 'absent' from a call, or 'legs: []')")
    return problems


def run_rule_tests(rules: RuleSet, files: Iterable[LoadedRule]) -> list[TestOutcome]:
    """Run the inline tests of ``files`` against the whole loaded rule set (overrides included)."""
    classifier = Classifier(Posture.BALANCED, rules)
    active = {id(r) for r in rules.active}
    outcomes: list[TestOutcome] = []
    for loaded in files:
        source = str(loaded.path)
        if id(loaded) not in active:
            outcomes.append(TestOutcome(source, None, True, "not run: overridden by another rule file"))
            continue
        for problem in check_test_coverage(loaded):
            outcomes.append(TestOutcome(source, None, False, problem))
        for i, test in enumerate(loaded.rule.tests):
            outcomes.append(_run_one(rules, classifier, loaded, i, test))
    return outcomes


def _run_one(rules: RuleSet, classifier: Classifier, loaded: LoadedRule, index: int, test: RuleTest) -> TestOutcome:
    source = str(loaded.path)
    label = f"tests[{index}] {test.tool}" + (f" ({test.description})" if test.description else "")
    server = test.server or loaded.rule.server
    if GLOB_CHARS & set(server):
        return TestOutcome(source, index, False, f"{label}: the file's server is a glob; give the test a 'server'")
    definition = None
    if test.definition is not None:
        definition, _ = parse_tool(test.definition)
    elif "definition" not in test.model_fields_set:
        # No definition given: the session listed the one the covering entry was reviewed against.
        found = rules.find(server, test.tool)
        if found is not None and found[1].pins:
            definition = ToolDefinition(name=test.tool, definition_hash=found[1].pins[0])
    facts = ContentIndex()
    if test.seen:
        facts.add_result("seen", test.seen, private=False, untrusted=False)
    context = ToolContext(server, test.tool, definition, classifier.trust_for(server, False), test.arguments, facts)
    got = classifier.classify(context).classification.legs
    failures = []
    if test.legs is not None and got != set(test.legs):
        failures.append(f"expected legs {_fmt(test.legs)}, got {_fmt(got)}")
    if test.absent is not None and got & set(test.absent):
        failures.append(f"expected {_fmt(got & set(test.absent))} to be absent, got {_fmt(got)}")
    if failures:
        return TestOutcome(source, index, False, f"{label}: " + "; ".join(failures))
    return TestOutcome(source, index, True, f"{label}: {_fmt(got)}")


def _fmt(legs: Iterable[Leg]) -> str:
    return "[" + ", ".join(leg.value for leg in sort_legs(legs)) + "]"
