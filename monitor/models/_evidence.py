"""Evidence values: where a call sends to, who chose it, and private content found in its arguments."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class DestinationKind(StrEnum):
    """What sort of address a destination is."""

    EMAIL = "email"
    DOMAIN = "domain"
    IBAN = "iban"
    PHONE = "phone"
    NAME = "name"
    PATH = "path"
    """A local file or folder path (not egress unless it names a remote share)."""
    POSTAL = "postal"
    """Where goods or letters are delivered: the street line of a shipping address."""


# Origin lists its members as DestinationKind does: two enumerations of one shape, not repeated code.
class Origin(StrEnum):
    """Who chose a destination, judged by where the session first saw it (strongest claim first)."""

    USER = "user-sanctioned"
    ALLOWLIST = "allowlisted"
    LISTING = "listing"
    PRIVATE_TEXT = "private-text"
    DELEGATED = "user-delegated"
    """Taken from a place the user pointed at, for an action of the kind the user asked for."""
    LOOKALIKE = "lookalike"
    """A near miss of a user-sanctioned destination (prefix, suffix, homoglyph, small edit): never sanctioned."""
    ATTACKER = "attacker-suggested"
    UNSEEN = "unseen"


@dataclass(frozen=True, slots=True)
class Destination:
    """An address a call sends to, with the argument path it was found under."""

    kind: DestinationKind
    value: str
    path: str
    keyed: bool = True
    """Found under a destination argument (True), or only as an address inside other content (False)."""


@dataclass(frozen=True, slots=True)
class LabelledDestination:
    """A destination and its origin; ``from_call`` is the call whose content first showed it, if any."""

    destination: Destination
    origin: Origin
    from_call: str | None


class Transform(StrEnum):
    """How private content was found in the arguments."""

    VERBATIM = "verbatim"
    BASE64 = "base64"
    HEX = "hex"
    URL = "url-encoded"
    SPLIT = "split-across-calls"
    SECRET = "secret"
    PARAPHRASE = "paraphrase"
    """Rare tokens, numbers and identifiers of private content, restated: weaker than the forms above."""
    FILE = "file-reference"
    """A file the call sends by reference (``curl -d @.env``): its content leaves, not its name."""


@dataclass(frozen=True, slots=True)
class FragmentMatch:
    """Private content of ``from_call`` found in a call's arguments, and how."""

    from_call: str
    text: str
    transform: Transform
