"""Reading YAML someone else wrote: bounded work, core tags only, every refusal a line and a message."""

from pathlib import Path

import pytest
import yaml

from monitor.classify._safe_yaml import YamlLimits, YamlProblem, load_yaml_text, read_yaml_file

DEFAULT = YamlLimits()


def refusal(text: str, limits: YamlLimits = DEFAULT) -> YamlProblem:
    with pytest.raises(YamlProblem) as info:
        load_yaml_text(text, limits)
    return info.value


def laughs(levels: int, width: int = 9) -> str:
    """A billion-laughs document: each level is ``width`` aliases of the one before."""
    lines = ["a0: &a0 [" + ", ".join(["lol"] * width) + "]"]
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


def test_plain_yaml_reads_with_its_lines() -> None:
    node, value = load_yaml_text("a: 1\nb: [x, 'y', !!str 3]\ndate: 2026-11-29\n")
    assert value["a"] == 1 and value["b"] == ["x", "y", "3"]
    assert str(value["date"]) == "2026-11-29"  # implicit types still resolve; only written tags are checked
    assert isinstance(node, yaml.MappingNode) and node.value[1][0].start_mark.line == 1


def test_a_few_aliases_are_fine() -> None:
    _, value = load_yaml_text("x: &p '(?i)secret'\ny: *p\nz: *p\n")
    assert value == {"x": "(?i)secret", "y": "(?i)secret", "z": "(?i)secret"}


@pytest.mark.parametrize("levels", [7, 12])
def test_a_billion_laughs_is_refused_before_it_is_built(levels: int) -> None:
    # 12 levels is the 600-byte file: 99 aliases, under the alias bound, that would expand to 9**12 nodes. The
    # expansion is counted on the node graph (each node once): the sixth level (9**6 nodes) is refused.
    problem = refusal(laughs(levels))
    assert (problem.line, problem.message) == (6, "aliases expand to more than 100000 nodes (an alias bomb?)")


def test_the_alias_count_is_bounded_on_the_event_stream() -> None:
    text = "x: &p a\nl: [" + ", ".join(["*p"] * 6) + "]\n"
    assert load_yaml_text(text, YamlLimits(max_aliases=6))[1]["l"] == ["a"] * 6
    problem = refusal(text, YamlLimits(max_aliases=5))
    assert (problem.line, problem.message) == (2, "more than 5 aliases (*name)")


def test_the_expansion_bound_counts_nodes_as_expanded() -> None:
    text = "x: &p [1, 2, 3]\ny: [*p, *p]\n"  # expanded: 1 map + 2 keys + (1 + 3) * 3 seq nodes + 1 outer seq
    assert load_yaml_text(text, YamlLimits(max_nodes=16))[1]["y"] == [[1, 2, 3], [1, 2, 3]]
    assert "more than 15 nodes" in refusal(text, YamlLimits(max_nodes=15)).message


def test_a_file_without_aliases_is_held_to_the_node_bound_too() -> None:
    """Without aliases the nodes are counted as they are parsed, and the graph is walked only when they are too
    many: the refusal is the same as the walk's."""
    text = "a: [1, 2, 3]\nb: [4, 5]\n"  # 1 map + 2 keys + 2 seqs + 5 items = 10 nodes
    assert load_yaml_text(text, YamlLimits(max_nodes=10))[1] == {"a": [1, 2, 3], "b": [4, 5]}
    problem = refusal(text, YamlLimits(max_nodes=9))
    assert (problem.line, problem.message) == (1, "aliases expand to more than 9 nodes (an alias bomb?)")


def test_a_recursive_alias_is_refused() -> None:
    problem = refusal("a: &a [1, *a]\n")
    assert (problem.line, problem.message) == (1, "an alias refers to a node that contains it")


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("a: !!python/object/apply:os.system ['true']\n", "!!python/object/apply:os.system"),
        ("a: !!python/name:os.system ''\n", "!!python/name:os.system"),
        ("a: !!binary aGVsbG8=\n", "!!binary"),
        ("a: !!set {x: null}\n", "!!set"),
        ("a: !!timestamp 2026-11-29\n", "!!timestamp"),
        ("a: !local value\n", "!local"),
        ("a: !<tag:example.com,2026:x> value\n", "tag:example.com,2026:x"),
    ],
)
def test_tags_other_than_the_core_ones_are_refused(text: str, shown: str) -> None:
    problem = refusal(text)
    assert problem.line == 1
    assert problem.message == f"tag {shown} is not allowed (only the core tags: !!str, !!int, !!map, ...)"


def test_size_is_checked_before_parsing(tmp_path: Path) -> None:
    text = "a: [" + "x, " * 400 + "]\n"
    assert refusal(text, YamlLimits(max_bytes=100)).message == f"file too large: {len(text)} bytes (at most 100)"
    path = tmp_path / "big.yaml"
    path.write_text("{{{{ not even YAML " * 10)  # never read: the size says no first
    with pytest.raises(YamlProblem) as info:
        read_yaml_file(path, YamlLimits(max_bytes=100))
    assert info.value.message == "file too large: 190 bytes (at most 100)"


def test_depth_is_bounded() -> None:
    assert refusal("a: " + "[" * 70 + "]" * 70 + "\n").message == "nested deeper than 64 levels"
    assert load_yaml_text("a: " + "[" * 60 + "]" * 60 + "\n")[1]["a"] is not None


@pytest.mark.parametrize(
    ("text", "line", "start"),
    [
        ("a: 1\n---\nb: 2\n", 2, "one document per file"),
        ("", 1, "empty file"),
        ("a: [1, 2\n", 2, "not valid YAML"),
        ("a: 1\nb: 2\na: 3\n", 3, "duplicate key 'a'"),
        ("date: 2026-02-30\n", 1, "a value cannot be read"),
    ],
)
def test_other_problems_name_a_line(text: str, line: int, start: str) -> None:
    problem = refusal(text)
    assert problem.line == line and problem.message.startswith(start)


def test_an_unreadable_file_is_a_problem_not_an_exception(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_bytes(b"a: \xff\xfe\n")
    with pytest.raises(YamlProblem) as info:
        read_yaml_file(path)
    assert info.value.line == 1 and info.value.message.startswith("cannot read:")
