"""Loading rule files: each load-error kind gives its exact message with file and line."""

from pathlib import Path

import pytest

from monitor.classify._loader import builtin_rules_dir, hash_rules, load_rules
from monitor.errors import RuleLoadError

HEADER = """\
id: {id}
title: Test rules
status: test
author: tests
date: 2026-11-29
server: {server}
"""
TOOLS = """\
tools:
  - match: read_thing
    legs: [private_data]
    reason: reads the user's things
"""
ID_A = "11111111-1111-4111-8111-111111111111"
ID_B = "22222222-2222-4222-8222-222222222222"


def write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text)
    return path


def problems(*dirs: Path) -> list[str]:
    with pytest.raises(RuleLoadError) as info:
        load_rules(dirs, builtin=False)
    return info.value.problems


def test_a_valid_file_loads(tmp_path: Path) -> None:
    write(tmp_path, "a.yaml", HEADER.format(id=ID_A, server="srv") + TOOLS)
    rules = load_rules([tmp_path], builtin=False)
    assert len(rules) == 1
    found = rules.find("srv", "read_thing")
    assert found is not None and found[1].reason == "reads the user's things"


def test_unknown_key(tmp_path: Path) -> None:
    path = write(tmp_path, "a.yaml", HEADER.format(id=ID_A, server="srv") + TOOLS + "    colour: red\n")
    assert problems(tmp_path) == [f"{path}:11: tools.0.colour: unknown key 'colour'"]


def test_unknown_leg(tmp_path: Path) -> None:
    text = HEADER.format(id=ID_A, server="srv") + TOOLS.replace("[private_data]", "[private_data, telepathy]")
    path = write(tmp_path, "a.yaml", text)
    [problem] = problems(tmp_path)
    assert problem.startswith(f"{path}:9: tools.0.legs.1: Input should be 'private_data', 'untrusted_content'")


def test_bad_glob(tmp_path: Path) -> None:
    path = write(tmp_path, "a.yaml", HEADER.format(id=ID_A, server="srv") + TOOLS.replace("read_thing", "read_[thing"))
    assert problems(tmp_path) == [f"{path}:8: tools.0.match: bad glob 'read_[thing': unclosed '['"]


def test_unsafe_regex(tmp_path: Path) -> None:
    text = (
        HEADER.format(id=ID_A, server="srv")
        + TOOLS
        + ("    when:\n      - arg: q\n        regex: '(a+)+\\1'\n        add: [external_communication]\n")
    )
    path = write(tmp_path, "a.yaml", text)
    [problem] = problems(tmp_path)
    assert problem.startswith(f"{path}:13: tools.0.when.0.regex: unsafe or invalid regex '(a+)+\\\\1'")
    assert "RE2" in problem


def test_duplicate_id(tmp_path: Path) -> None:
    write(tmp_path, "a.yaml", HEADER.format(id=ID_A, server="one") + TOOLS)
    second = write(tmp_path, "b.yaml", HEADER.format(id=ID_A, server="two") + TOOLS)
    assert problems(tmp_path) == [f"{second}:1: duplicate rule id {ID_A} (also {tmp_path / 'a.yaml'}:1)"]


def test_second_file_for_a_server_must_say_overrides(tmp_path: Path) -> None:
    write(tmp_path, "a.yaml", HEADER.format(id=ID_A, server="srv") + TOOLS)
    second = write(tmp_path, "b.yaml", HEADER.format(id=ID_B, server="srv") + TOOLS)
    assert problems(tmp_path) == [
        f"{second}:6: server 'srv' is already covered by rule {ID_A} ({tmp_path / 'a.yaml'}:1); "
        f"to replace it, say 'overrides: {ID_A}'"
    ]


def test_overrides_replaces_another_packs_file(tmp_path: Path) -> None:
    write(tmp_path / "pack1", "a.yaml", HEADER.format(id=ID_A, server="srv") + TOOLS)
    text = HEADER.format(id=ID_B, server="srv") + f"overrides: {ID_A}\n" + TOOLS.replace("[private_data]", "[]")
    write(tmp_path / "pack2", "b.yaml", text)
    rules = load_rules([tmp_path / "pack1", tmp_path / "pack2"], builtin=False)
    found = rules.find("srv", "read_thing")
    assert found is not None and str(found[0].rule.id) == ID_B and found[1].legs == []


def test_overrides_an_unknown_id(tmp_path: Path) -> None:
    path = write(tmp_path, "a.yaml", HEADER.format(id=ID_A, server="srv") + f"overrides: {ID_B}\n" + TOOLS)
    assert problems(tmp_path) == [f"{path}:1: overrides {ID_B}, which no loaded rule file has as its id"]


def test_yaml_syntax_error_and_duplicate_keys(tmp_path: Path) -> None:
    bad = write(tmp_path, "a.yaml", "id: [unclosed\n")
    dup = write(tmp_path, "b.yaml", HEADER.format(id=ID_B, server="srv") + "server: again\n" + TOOLS)
    found = problems(tmp_path)
    assert found[0].startswith(f"{bad}:2: not valid YAML")
    assert found[1] == f"{dup}:7: duplicate key 'server'"


def test_duplicate_match_in_one_file(tmp_path: Path) -> None:
    path = write(tmp_path, "a.yaml", HEADER.format(id=ID_A, server="srv") + TOOLS + TOOLS.removeprefix("tools:\n"))
    assert problems(tmp_path) == [
        f"{path}:11: tools.1.match: 'read_thing' appears twice; the first entry would always win"
    ]


def test_condition_needs_one_operator_and_an_effect(tmp_path: Path) -> None:
    text = (
        HEADER.format(id=ID_A, server="srv")
        + TOOLS
        + (
            "    when:\n      - arg: q\n        equals: a\n        glob: b*\n        add: [private_data]\n"
            "      - arg: q\n        equals: a\n"
        )
    )
    path = write(tmp_path, "a.yaml", text)
    assert problems(tmp_path) == [
        f"{path}:12: tools.0.when.0: a condition has exactly one operator of equals, in, glob, domain_in, regex, "
        "seen_with, internal_host; got 2",
        f"{path}:16: tools.0.when.1: a condition must 'add' or 'remove' at least one leg",
    ]


def test_missing_folder_is_a_problem(tmp_path: Path) -> None:
    assert problems(tmp_path / "nope") == [f"{tmp_path / 'nope'}: no such rules folder"]


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    write(tmp_path, "a.yaml", HEADER.format(id=ID_A, server="srv") + TOOLS + "    colour: red\n")
    write(tmp_path, "b.yaml", "id: [unclosed\n")
    assert len(problems(tmp_path)) == 2


def test_ruleset_hash_changes_with_the_rules(tmp_path: Path) -> None:
    write(tmp_path, "a.yaml", HEADER.format(id=ID_A, server="srv") + TOOLS)
    first = load_rules([tmp_path], builtin=False)
    write(tmp_path, "a.yaml", HEADER.format(id=ID_A, server="srv") + TOOLS.replace("[private_data]", "[]"))
    second = load_rules([tmp_path], builtin=False)
    assert first.sha256 != second.sha256
    assert first.sha256 == hash_rules(first.rules)


def test_builtin_packs_are_found_and_load() -> None:
    assert builtin_rules_dir().is_dir()
    rules = load_rules()
    assert len(rules) >= 1


def test_a_billion_laughs_rule_file_is_a_line_not_a_hang(tmp_path: Path) -> None:
    levels = ["a0: &a0 [" + ", ".join(["lol"] * 9) + "]"]
    levels += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 12)]
    bomb = write(tmp_path, "bomb.yaml", "\n".join(levels) + "\n")
    good = write(tmp_path, "good.yaml", HEADER.format(id=ID_A, server="srv") + TOOLS + "  - match: x\n")
    assert problems(tmp_path) == [
        f"{bomb}:6: aliases expand to more than 100000 nodes (an alias bomb?)",
        f"{good}:11: tools.1.legs: Field required",  # the next file is still read and checked
        f"{good}:11: tools.1.reason: Field required",
    ]


def test_python_tags_are_a_line_not_a_traceback(tmp_path: Path) -> None:
    text = HEADER.format(id=ID_A, server="srv") + "description: !!python/object/apply:os.system ['true']\n" + TOOLS
    path = write(tmp_path, "a.yaml", text)
    assert problems(tmp_path) == [
        f"{path}:7: tag !!python/object/apply:os.system is not allowed (only the core tags: !!str, !!int, !!map, ...)"
    ]


SILENCER = """\
trust: trusted
tools:
  - match: "*"
    legs: []
    reason: everything is fine
"""


def test_a_wildcard_server_that_lowers_risk_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "a.yaml", HEADER.format(id=ID_A, server='"*"') + SILENCER)
    assert problems(tmp_path) == [
        f"{path}:6: server '*' is a glob, and this file lowers risk for every server it matches (trust: trusted; "
        "tools.0 '*' leaves out private_data, untrusted_content, external_communication without a pin); pin "
        "those entries, name the server exactly, or say 'allow_wildcard: true' to accept it"
    ]


@pytest.mark.parametrize(
    ("server", "body", "risk"),
    [
        (
            "mail-*",
            "trust: trusted\n"
            + TOOLS.replace("[private_data]", "[private_data, untrusted_content, external_communication]"),
            "trust: trusted",
        ),
        ("srv?", TOOLS, "tools.0 'read_thing' leaves out untrusted_content, external_communication without a pin"),
        (
            "[ab]srv",
            TOOLS.replace("[private_data]", "[private_data, untrusted_content, external_communication]")
            + "    when:\n      - arg: q\n        equals: a\n        remove: [private_data]\n",
            "tools.0 'read_thing' removes private_data without a pin",
        ),
    ],
)
def test_each_way_a_wildcard_lowers_risk_is_named(tmp_path: Path, server: str, body: str, risk: str) -> None:
    write(tmp_path, "a.yaml", HEADER.format(id=ID_A, server=f'"{server}"') + body)
    [problem] = problems(tmp_path)
    assert f"({risk})" in problem


def test_wildcards_that_only_add_or_are_pinned_or_opt_in_load(tmp_path: Path) -> None:
    all_legs = TOOLS.replace("[private_data]", "[private_data, untrusted_content, external_communication]")
    write(tmp_path, "a.yaml", HEADER.format(id=ID_A, server='"*"') + "trust: untrusted\n" + all_legs)
    pinned = TOOLS.replace("    legs:", f"    pin: {'a' * 64}\n    legs:")
    write(tmp_path, "b.yaml", HEADER.format(id=ID_B, server='"srv-*"') + pinned)
    opted = "33333333-3333-4333-8333-333333333333"
    write(tmp_path, "0.yaml", HEADER.format(id=opted, server='"corp-*"') + "allow_wildcard: true\n" + SILENCER)
    rules = load_rules([tmp_path], builtin=False)
    assert len(rules) == 3
    assert rules.trust_for("corp-mail") is True


def test_allow_wildcard_false_hashes_as_before(tmp_path: Path) -> None:
    write(tmp_path, "a.yaml", HEADER.format(id=ID_A, server="srv") + TOOLS)
    plain = load_rules([tmp_path], builtin=False).sha256
    write(tmp_path, "a.yaml", HEADER.format(id=ID_A, server="srv") + "allow_wildcard: false\n" + TOOLS)
    assert load_rules([tmp_path], builtin=False).sha256 == plain
    write(tmp_path, "a.yaml", HEADER.format(id=ID_A, server="srv") + "allow_wildcard: true\n" + TOOLS)
    assert load_rules([tmp_path], builtin=False).sha256 != plain


def test_a_file_reached_twice_loads_once(tmp_path: Path) -> None:
    path = write(tmp_path, "a.yaml", HEADER.format(id=ID_A, server="srv") + TOOLS)
    assert len(load_rules([tmp_path, tmp_path, path], builtin=False)) == 1
    builtin = load_rules()
    assert len(load_rules([builtin_rules_dir()])) == len(builtin)  # the built-in packs named again
