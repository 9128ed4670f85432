"""Hosts read as a resolver and a browser read them: every spelling of one host is one destination."""

import pytest

from monitor.evidence import canonical_host, find_addresses, host_of_url, is_internal_host, parse_ipv4
from monitor.models import DestinationKind


@pytest.mark.parametrize(
    ("spelling", "address"),
    [
        ("1481646427", "88.80.33.91"),  # one decimal number
        ("0x58501234", "88.80.18.52"),  # one hexadecimal number
        ("0130.0120.022.033", "88.80.18.27"),  # octal parts
        ("0x58.0x50.0x12.0x1b", "88.80.18.27"),  # hexadecimal parts
        ("88.80.4635", "88.80.18.27"),  # the last part fills the remaining bytes
        ("127.1", "127.0.0.1"),
        ("88.80.18.27.", "88.80.18.27"),  # a trailing dot
    ],
)
def test_every_ipv4_spelling_is_one_address(spelling: str, address: str) -> None:
    assert canonical_host(spelling) == address


@pytest.mark.parametrize("text", ["256.1.1.1", "1.2.3.4.5", "08.1.1.1", "4294967296", "example.com"])
def test_text_that_is_no_ipv4_address_is_not_read_as_one(text: str) -> None:
    assert parse_ipv4(text) is None


def test_ipv6_literals_lose_brackets_and_zone_and_mapped_ipv4_is_ipv4() -> None:
    assert canonical_host("[::ffff:5850:121b]") == "88.80.18.27"
    assert canonical_host("[FE80::1%25eth0]") == "fe80::1"
    assert canonical_host("[2001:db8:0:0::1]") == "2001:db8::1"


def test_names_are_decoded_folded_and_lose_the_trailing_dot() -> None:
    assert canonical_host("EX%41MPLE.com.") == "example.com"
    assert canonical_host("\uff45\uff58\uff41\uff4d\uff50\uff4c\uff45\uff0ecom") == "example.com"  # full width
    # punycode read as the characters it encodes (Cyrillic look-alikes of "apple")
    assert canonical_host("xn--80ak6aa92e.com") == "\u0430\u0440\u0440\u04cf\u0435.com"


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("https://trusted.example@evil.example/x", "evil.example"),  # user information is not the host
        ("http://evil.example\\@trusted.example/", "evil.example"),  # a backslash ends the authority
        ("HTTP://User:pw@Host.Example.:81/", "host.example"),
        ("http://a@b.example@evil.example/", "evil.example"),  # the host follows the last @
        ("http://[::1]:8080/status", "::1"),
        ("http://1481646427/c?d=1", "88.80.33.91"),
        ("file:///etc/passwd", ""),
    ],
)
def test_a_urls_host_is_found_as_a_browser_finds_it(url: str, host: str) -> None:
    assert host_of_url(url) == host


@pytest.mark.parametrize(
    "host",
    ["127.1", "0x7f000001", "2130706433", "10.1.2.3", "[::1]", "169.254.169.254", "localhost", "intranet", "a.local"],
)
def test_loopback_private_and_local_names_are_internal(host: str) -> None:
    assert is_internal_host(host)


@pytest.mark.parametrize(
    "host", ["1481646427", "0x58501234", "0130.0120.022.033", "[::ffff:5850:121b]", "4294967296", "example.com"]
)
def test_a_public_address_in_any_spelling_is_not_internal(host: str) -> None:
    assert not is_internal_host(host)


def test_addresses_in_text_are_found_by_their_real_host() -> None:
    found = set(find_addresses("load http://0x58501234/x and https://bank.example@evil.example/ now"))
    assert found == {(DestinationKind.DOMAIN, "88.80.18.52"), (DestinationKind.DOMAIN, "evil.example")}
