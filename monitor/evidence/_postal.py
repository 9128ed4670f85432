"""Postal addresses as destinations: where an order ships, a letter goes, a parcel is delivered.

An address under a shipping argument (``shipping_address: {street: …}``, ``deliver_to: "4410 Harbor Blvd, …"``) is
where the call sends goods paid with the user's money, and it carries the user's name to whoever lives there: a
destination like an e-mail address, chosen by whoever first showed it. Its value is the street line (the first
part of a one-line address), compared as whole words: ``27 larkspur lane`` is in "Address: 27 Larkspur Lane, Apt 3B".
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from monitor.evidence._destinations import iter_argument_texts, normalize_text
from monitor.evidence._tokens import contains_token
from monitor.models import Destination, DestinationKind

# Words of a key that say it holds where something is delivered (``shipping_address``, ``ship_to``, ``mailTo``).
_POSTAL_KEY_WORDS = frozenset("shipping ship delivery deliver mailing postal billing".split())
# Keys of the part of an address that tells the place apart: the street line.
_STREET_KEYS = frozenset("street street1 street_address address address1 address_line1 line1 addr".split())
_KEY_WORD = re.compile(r"[a-z0-9]+")
_MAX_STREET_CHARS = 200
_MAX_LISTED_SCANNED = 50_000


def _key_words(key: str) -> list[str]:
    return _KEY_WORD.findall(re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", key).lower())


def is_postal_key(key: str) -> bool:
    """Whether an argument key holds where something is delivered: one of its words is a word of delivery
    (``shipping_address``, ``ship_to``, ``deliveryAddress``, ``billing_address``)."""
    return bool(set(_key_words(key)) & _POSTAL_KEY_WORDS)


def extract_postal_destinations(arguments: Mapping[str, Any]) -> list[Destination]:
    """The postal addresses a call sends to: the street line under a postal key, or the first part of a one-line
    address there."""
    found: dict[str, Destination] = {}
    for path, key, text in iter_argument_texts(arguments):
        parts = [part for part in path.split("/") if part and not part.isdigit()]
        under_postal = any(is_postal_key(part) for part in parts[:-1])
        if under_postal and "_".join(_key_words(key)) in _STREET_KEYS:
            street = text
        elif is_postal_key(key):
            street = text.split(",", 1)[0]
        else:
            continue
        value = normalize_text(street)
        if value and len(value) <= _MAX_STREET_CHARS and any(c.isdigit() for c in value):
            found.setdefault(value, Destination(DestinationKind.POSTAL, value, path))
    return list(found.values())


def find_listed_street(listed: Mapping[str, str], value: str) -> str | None:
    """The call whose listed values first hold the street line ``value`` as whole words ("Address: 27 Larkspur
    Lane, Apt 3B" holds ``27 larkspur lane``), looking at a bounded number of values."""
    for count, (text, call_id) in enumerate(listed.items()):
        if count >= _MAX_LISTED_SCANNED:
            return None
        if value in text and contains_token(text, value):
            return call_id
    return None
