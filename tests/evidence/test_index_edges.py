"""The content index at the edges of its bounds: a value of exactly the longest length it records, a result that
fits its budget exactly, the snippet of a record copied field by field, and addresses whose case does not fold
back to themselves."""

from __future__ import annotations

import pytest

from monitor.evidence import ContentIndex
from monitor.evidence import _index as index_module
from monitor.models import Destination, DestinationKind, Origin


def _email(value: str) -> Destination:
    return Destination(DestinationKind.EMAIL, value, "/to")


def test_an_argument_of_the_longest_recorded_length_still_counts_as_sent_before_a_result_echoed_it() -> None:
    """An address the agent sent inside a 200-character argument is the agent's own, even when a lookup echoes
    it afterwards: it is unseen, not a listing."""
    address = "made.up@nowhere.example"
    argument = f"Please reach {address} " + "x" * 200
    argument = argument[:200]
    assert len(argument) == 200 and address in argument
    index = ContentIndex()
    index.add_call_arguments({"note": argument}, external=False)
    index.add_result("c1", [{"email": address, "name": "Made Up"}], private=False, untrusted=False)
    assert index.label(_email(address)).origin is Origin.UNSEEN
    longer = ContentIndex()
    longer.add_call_arguments({"note": argument + "x"}, external=False)
    longer.add_result("c1", [{"email": address, "name": "Made Up"}], private=False, untrusted=False)
    assert longer.label(_email(address)).origin is Origin.LISTING


def test_a_result_that_fits_its_budget_exactly_is_examined_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """A result exactly as long as the index's budget is read whole (nothing counts as unexamined); one
    character more is not."""
    monkeypatch.setattr(index_module, "MAX_RESULT_CHARS", 1_000)
    fits = {"a": "p" * 999, "b": "q"}
    index = ContentIndex()
    index.add_result("c1", fits, private=True, untrusted=False)
    assert not index.truncated
    over = ContentIndex()
    over.add_result("c1", {"a": "p" * 999, "b": "qq"}, private=True, untrusted=False)
    assert over.truncated


def test_the_snippet_of_a_record_copied_field_by_field_is_at_most_200_characters() -> None:
    """Fields of a private record sent whole, one per argument, are reported as one copy; its snippet is cut at 200
    characters (fields mostly of symbols: no fingerprint finds them first)."""
    fields = {f"f{i}": f"#{i}" + "-+" * 38 for i in range(4)}
    assert all(len(v) < 80 for v in fields.values())
    index = ContentIndex()
    index.add_result("c1", fields, private=True, untrusted=False)
    found = index.find_private({f"arg{i}": v for i, v in enumerate(fields.values())})
    [copy] = [f for f in found if f.from_call == "c1"]
    assert len(copy.text) == 200
    assert copy.text.startswith(fields["f0"] + ", " + fields["f1"])


def test_an_address_whose_upper_case_is_another_address_is_delegated_as_written() -> None:
    """The one address shown in the place the user pointed at is compared as written: ``straße@`` (whose capitals
    spell ``STRASSE@``) is still that one address, and delegated."""
    index = ContentIndex()
    index.add_user_text("Send the invoice to the contact named in vendor-note.txt")
    index.add_place("c1", {"path": "vendor-note.txt"})
    index.add_result("c1", "Please send the invoice to straße@vendor.example, thanks", private=False, untrusted=True)
    labelled = index.label(_email("straße@vendor.example"), tool="send_invoice")
    assert (labelled.origin, labelled.from_call) == (Origin.DELEGATED, "c1")
