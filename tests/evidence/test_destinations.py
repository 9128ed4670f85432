"""Where a call sends to: addresses and names under destination arguments."""

from monitor.evidence import extract_destinations, find_addresses
from monitor.models import Destination, DestinationKind


def test_find_addresses_kinds() -> None:
    text = (
        "mail a.b@x.example, see https://www.evil.example/p?q=1 or my-site.com; "
        "IBAN DE89370400440532013000; +1 (555) 123-4567"
    )
    found = set(find_addresses(text))
    assert (DestinationKind.EMAIL, "a.b@x.example") in found
    assert (DestinationKind.DOMAIN, "evil.example") in found
    assert (DestinationKind.DOMAIN, "my-site.com") in found
    assert (DestinationKind.IBAN, "DE89370400440532013000") in found
    assert (DestinationKind.PHONE, "+15551234567") in found
    assert not any(kind is DestinationKind.DOMAIN and value == "x.example" for kind, value in found)


def test_extract_destinations_includes_names_under_destination_keys() -> None:
    dests = extract_destinations({"recipient": "Alice", "body": "hi", "cc": ["bob@x.example"]})
    assert Destination(DestinationKind.NAME, "alice", "/recipient") in dests
    assert Destination(DestinationKind.EMAIL, "bob@x.example", "/cc/0") in dests
    assert len(dests) == 2
