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


def test_user_text_names_destinations_as_whole_tokens_never_substrings() -> None:
    from monitor.evidence import mentions_destination

    def named(text: str, kind: DestinationKind, value: str) -> bool:
        return mentions_destination(text, Destination(kind, value, "/to"))

    assert not named("our portal is corp.com", DestinationKind.DOMAIN, "p.com")
    assert not named("send it to bob@corp-mail.com", DestinationKind.EMAIL, "b@corp-mail.com")
    assert named("send it to bob@corp-mail.com.", DestinationKind.EMAIL, "bob@corp-mail.com")
    assert not named("text +44 20 7946 0123", DestinationKind.PHONE, "+44207946012")
    assert named("text +44 20 7946 0123", DestinationKind.PHONE, "+442079460123")
    assert named("load http://1481646427/status", DestinationKind.DOMAIN, "88.80.33.91")  # same host, spelled otherwise
    assert named("mail legal@northwind.example", DestinationKind.DOMAIN, "northwind.example")
    assert not named("post in #finance-close-2026", DestinationKind.NAME, "finance-close")
    assert named("post in #finance-close.", DestinationKind.NAME, "finance-close")


def test_images_and_src_urls_in_content_are_destinations_of_their_own() -> None:
    from monitor.evidence import extract_embedded_urls

    found = extract_embedded_urls(
        {"channel_id": "C1", "text": "status ![s](https://img.a.example/s.png?d=x) <img src='https://b.example/p?q'>"}
    )
    assert [(d.value, d.keyed, url) for d, url in found] == [
        ("img.a.example", False, "https://img.a.example/s.png?d=x"),
        ("b.example", False, "https://b.example/p?q"),
    ]
    assert extract_embedded_urls({"text": "a [link](https://a.example/x) is clicked, not fetched"}) == []


def test_sender_fields_are_the_senders_choice() -> None:
    from monitor.evidence import is_outsider_field

    assert all(is_outsider_field(k) for k in ("from", "From", "reply-to", "reply_to", "author", "organizer"))
    assert not any(is_outsider_field(k) for k in ("to", "email", "name", "contacts", "id"))
