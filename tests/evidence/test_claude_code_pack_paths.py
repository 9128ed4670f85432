"""The Claude Code pack's third-party folders stay the ones ``is_third_party_path`` knows.

The pack keeps one regular expression (a YAML anchor used by Read, Grep, Glob and NotebookRead); the Python
predicate keeps lists. They must agree: every listed folder, in several spellings, and a table of paths that
are and are not third-party text, classified through the loaded rules.
"""

from __future__ import annotations

import pytest
import yaml

from monitor.classify import Classifier, RuleSet, builtin_rules_dir, load_builtin_rules, run_rule_tests
from monitor.evidence import is_third_party_path
from monitor.evidence._paths import THIRD_PARTY_DIR_PREFIXES, THIRD_PARTY_DIR_RUNS, THIRD_PARTY_DIRS
from monitor.models import Leg, ToolContext

PACK = builtin_rules_dir() / "claude-code" / "builtin.yaml"
# The file tools and the arguments that name the folder they read.
READERS = [("Read", "file_path"), ("NotebookRead", "notebook_path"), ("Grep", "path"), ("Glob", "path")]


@pytest.fixture(scope="module")
def rules() -> RuleSet:
    return load_builtin_rules()


def _adds_untrusted(rules: RuleSet, tool: str, argument: str, path: str) -> bool:
    context = ToolContext("claude-code", tool, arguments={argument: path})
    return Leg.UNTRUSTED_CONTENT in Classifier(overrides=rules).classify(context).classification.legs


def _examples() -> list[str]:
    """Paths built from every entry of the Python lists, in POSIX and Windows spellings and other cases."""
    paths: list[str] = []
    for name in sorted(THIRD_PARTY_DIRS):
        paths += [f"/home/u/p/{name}/x/README.md", f"C:\\Users\\u\\{name.upper()}\\x.txt", name, f"{name}/"]
        paths += [f"/home/u/p/{name}x/README.md", f"/home/u/p/x{name}/README.md", f"/home/u/p/{name}.md"]
    for run in sorted(THIRD_PARTY_DIR_RUNS):
        paths += ["/home/u/" + "/".join(run) + "/x/y.txt", "C:\\Users\\u\\" + "\\".join(run) + "\\y.txt"]
        paths += ["/home/u/" + "/".join(run[:-1]) + "/other/y.txt", "/home/u/" + "/".join(run) + "x/y.txt"]
    for prefix in THIRD_PARTY_DIR_PREFIXES:
        paths += [f"/tmp/{prefix}abc123/setup.py", f"/tmp/x{prefix}abc/setup.py"]
    return paths


TABLE = [
    ("/home/u/project/node_modules/left-pad/index.js", True),
    ("/home/u/project/src/main.py", False),
    ("/home/u/.cargo/registry/src/x/serde/lib.rs", True),
    ("/home/u/.cargo/config.toml", False),
    ("C:\\Users\\u\\Downloads\\invoice.txt", True),
    ("/home/u/go/pkg/mod/github.com/x/y.go", True),
    ("/home/u/go/src/github.com/me/tool/main.go", False),
    ("/home/u/project/.venv/lib/python3.12/site-packages/x.py", True),
    ("/home/u/project/src/venv_helpers.py", False),
    ("\\\\?\\C:\\work\\vendor\\lib.go", True),
    ("/tmp/pip-req-build-k2j4x9/setup.py", True),
    ("ios/Pods/Alamofire/README.md", True),
]


@pytest.mark.parametrize(("path", "third_party"), TABLE)
def test_the_pack_and_the_predicate_agree_on_the_table(rules: RuleSet, path: str, third_party: bool) -> None:
    assert is_third_party_path(path) is third_party
    for tool, argument in READERS:
        assert _adds_untrusted(rules, tool, argument, path) is third_party, (tool, path)


def test_the_pack_and_the_predicate_agree_on_every_listed_folder(rules: RuleSet) -> None:
    disagreements = [
        path for path in _examples() if _adds_untrusted(rules, "Read", "file_path", path) != is_third_party_path(path)
    ]
    assert disagreements == []
    assert sum(is_third_party_path(p) for p in _examples()) > len(THIRD_PARTY_DIRS) * 3


def test_the_pack_keeps_one_regular_expression_for_the_folders() -> None:
    pack = yaml.safe_load(PACK.read_text())
    expressions = {
        (entry["match"], condition["arg"]): condition["regex"]
        for entry in pack["tools"]
        for condition in entry.get("when", [])
        if condition.get("add") == ["untrusted_content"]
    }
    assert set(expressions) == {
        ("Read", "file_path"),
        ("NotebookRead", "notebook_path"),
        ("Grep", "path"),
        ("Glob", "path"),
        ("Glob", "pattern"),
    }
    assert len(set(expressions.values())) == 1
    assert PACK.read_text().count("node_modules|") == 1


def test_the_claude_code_pack_passes_its_inline_tests(rules: RuleSet) -> None:
    files = [r for r in rules.rules if r.path.resolve() == PACK.resolve()]
    outcomes = run_rule_tests(rules, files)
    assert len(files) == 1 and len(outcomes) > 60
    assert [o.message for o in outcomes if not o.passed] == []
