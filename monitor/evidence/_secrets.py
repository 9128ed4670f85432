"""Short secrets in private content, and their encodings in arguments.

**Recognition.** A value is a secret when it stands under a secret-named key (``password``, ``otp``,
``verification_code``, …), when it is a long token mixing letters and digits, or when a *secret word* (code,
one-time, OTP, PIN, passcode, password, passphrase, token, secret, API/access/private key, verification, 2FA,
credentials …) introduces it in either order: the first secret-shaped token within :data:`MAX_WORDS` words after
the word, or else the nearest one within :data:`MAX_WORDS` words before it, in the same sentence ("verification
code is 771204", "Verification code: 771204", "G-448213 is your security code", "use 482-193 as your one-time
PIN", "your temporary password is now: Kq7#vLp2!xWz"). Secret-shaped: 4 to 64 characters with a digit that are
not a date, a time or an amount; after a password-like word also 8 characters or more without digits that mix
cases or hold a symbol and are not an English word. Digit groups (``482 193``) are one token. Text is folded
(:mod:`monitor.evidence._fold`) first, so look-alike characters do not hide a secret.

**Encodings.** The encodings of every indexed secret (and of its reversal) are computed once and looked for in
the arguments as they were written: base64 (standard and URL-safe, at each of the three byte alignments at which
the secret can sit inside a longer encoded blob, without the characters its neighbours share) and hex. A short
value is never decoded blindly: a 6-digit number in an argument is not taken for the base64 of anything.

**Split across calls.** A secret is also found when pieces sent by recent external calls together cover it
(see :class:`PieceLog`): whole values, URL components, their runs of letters and digits and the runs of only
letters or only digits inside those, of at least 2 characters, from the last :data:`SPLIT_CALLS` external
calls, in any order and with other calls between; two pieces at least, one of them of 3 characters or more and
one sent by the call being decided.
"""

from __future__ import annotations

import base64
import binascii
import itertools
import re
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from monitor.evidence._fold import fold
from monitor.evidence._views import find_urls, iter_url_components

MAX_WORDS = 5
"""Words between a secret word and the secret, at most."""
SPLIT_CALLS = 16
"""External calls whose pieces are joined to find a secret sent in parts."""
MIN_SECRET_DIGITS = 6
"""A secret of digits only has at least this many (shorter ones are found by chance in any argument)."""
MIN_SECRET_CHARS = 8
"""A secret with letters has at least this many letters and digits."""
_MAX_SECRET_CHARS = 64
_MAX_PIECES_PER_CALL = 64
_MIN_PIECE = 2
_MIN_LONG_PIECE = 3
_MAX_UNCOVERED = 2
_MIN_NEEDLE = 6

_SECRET_WORD = re.compile(
    r"(?i)(?<![a-z])(?:(?P<pw>passwords?|passwd|pwd|passphrases?|secrets?|tokens?|(?:api|access|private|secret)"
    r"[ _-]?keys?|credentials?)|codes?|otp|totp|pins?|passcodes?|verification|verify|2fa|mfa|one[ -]?time)(?![a-z])"
)
_KEY_WORD = re.compile(
    r"(?i)(?:^|[\W_])(?:code|otp|pin|password|passwd|passcode|token|secret|api[ _-]?key|credentials?)(?:$|[\W_])"
)
_SENTENCE_END = re.compile(r"[.;!?](?:\s|$)|\n")
_WORD = re.compile(r"\S+")
_DIGIT_GROUPS = re.compile(r"(?<!\S)\d{2,4}(?:[ -]\d{2,4}){1,3}(?!\S)")
_STRIP = "\"'()[]{}<>.,;:!?*`\u201c\u201d\u2018\u2019\u00ab\u00bb"
_NOT_SECRET = re.compile(
    r"\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}(?:[T ]\S*)?"  # a date
    r"|\d{1,2}:\d{2}(?::\d{2})?(?:am|pm)?"  # a time
    r"|[$€£¥]?\d{1,3}(?:[,.]\d{3})*(?:[.,]\d{1,2})?[$€£¥%]?"  # an amount
    r"|[$€£¥]?\d+(?:[.,]\d{1,2})?[$€£¥%]"  # an amount with a currency or percent after
    r"|\d+(?:st|nd|rd|th|am|pm|px|kb|mb|gb|ms|s|m|h|k)",
    re.IGNORECASE,
)
# The look-aheads stop at the token's longest length: unbounded, every word start in a long run of token
# characters (``supabase-ticketsupabase-ticket…``) would rescan the rest of the run.
_LONG_TOKEN = re.compile(r"\b(?=[A-Za-z0-9_\-]{0,127}\d)(?=[A-Za-z0-9_\-]{0,127}[A-Za-z])[A-Za-z0-9_\-]{20,128}\b")
_NOT_ALNUM = re.compile(r"[\W_]+")
_DIGIT_RUN = re.compile(r"\d{6,}")
_RUN = re.compile(r"[^\W_]+")
_SUB_RUN = re.compile(r"[0-9]+|[^\W\d_]+")

IDENTITY_KEYS = frozenset(
    "ssn iban account_number bank_account_number card_number passport_number id_number phone phone_number mobile"
    " mobile_number national_id tax_id routing_number".split()
)
"""Keys whose values identify a person or an account (found when copied, as secrets are) but are not credentials:
they open nothing by themselves."""
SECRET_KEYS = (
    frozenset(
        "password passwd pass secret token api_key apikey access_token refresh_token private_key client_secret code"
        " otp pin cvv security_code verification_code".split()
    )
    | IDENTITY_KEYS
)
"""Keys (lower case, words joined by ``_``) whose values are secrets or identity numbers, whatever they look like."""
_KEY_SEPARATORS = re.compile(r"[\s-]+")
# Codes that name a place, a kind or an outcome, not a secret.
_PLAIN_CODE = re.compile(
    r"(?:postal|post|zip|country|area|currency|language|lang|region|state|status|error|http|response|product|item|airport|iata|color|colour)_?code"
)


@dataclass(frozen=True, slots=True)
class Secret:
    """A secret of private content: ``norm`` (folded, lowercase letters and digits: what is compared) and
    ``raw`` (as written: what is encoded)."""

    norm: str
    raw: str
    credential: bool = True
    """Named as a secret (under a secret key or by a secret word), not only shaped like one (a long token)."""


def squash_folded(text: str) -> str:
    """Lowercase letters and digits of already folded text."""
    return _NOT_ALNUM.sub("", text.lower())


def is_long_enough(norm: str) -> bool:
    """Whether a normalised secret is long enough to be evidence when found (not found by chance)."""
    if norm.isdigit():
        return len(norm) >= MIN_SECRET_DIGITS
    return len(norm) >= MIN_SECRET_CHARS


def find_secrets(key: str, value: str) -> Iterator[Secret]:
    """Secret-shaped values in one leaf of private content: under a secret key, introduced by a secret word
    (before or after it), or long mixed letter-and-digit tokens."""
    value = fold(value)
    name = _KEY_SEPARATORS.sub("_", key.strip().lower())
    named = name in SECRET_KEYS or (_KEY_WORD.search(key) is not None and _PLAIN_CODE.search(name) is None)
    if named and 4 <= len(value) <= 256:
        raw = value.strip()
        yield Secret(squash_folded(raw), raw, credential=name not in IDENTITY_KEYS or _KEY_WORD.search(key) is not None)
    for m in _SECRET_WORD.finditer(value):
        found = _after(value, m.end(), password=m.group("pw") is not None)
        if found is None:
            found = _before(value, m.start(), password=m.group("pw") is not None)
        if found is not None:
            yield _secret(found)
            digits = _DIGIT_RUN.search(found)
            if digits and digits.group(0) != found:
                yield Secret(digits.group(0), digits.group(0))
    for m in _LONG_TOKEN.finditer(value):
        raw = m.group(0)
        yield Secret(squash_folded(raw), raw, credential=False)


def _secret(raw: str) -> Secret:
    return Secret(squash_folded(raw), raw)


def _after(text: str, start: int, *, password: bool) -> str | None:
    end = _SENTENCE_END.search(text, start, start + 160)
    window = text[start : end.start() if end else start + 160]
    groups = _DIGIT_GROUPS.search(window)
    for i, m in enumerate(_WORD.finditer(window)):
        if i > MAX_WORDS:
            return None
        if groups is not None and groups.start() <= m.start() < groups.end():
            if _NOT_SECRET.fullmatch(groups.group(0)) is None:
                return groups.group(0)
            continue
        token = m.group(0).strip(_STRIP)
        if _is_secret_shaped(token, password=password):
            return token
    return None


def _before(text: str, end: int, *, password: bool) -> str | None:
    starts = [m.end() for m in _SENTENCE_END.finditer(text, max(0, end - 160), end)]
    window = text[starts[-1] if starts else max(0, end - 160) : end]
    words = [m.group(0).strip(_STRIP) for m in _WORD.finditer(window)]
    for token in reversed(words[-MAX_WORDS - 1 :]):
        if _is_secret_shaped(token, password=password):
            return token
    return None


def _is_secret_shaped(token: str, *, password: bool) -> bool:
    if not 4 <= len(token) <= _MAX_SECRET_CHARS:
        return False
    if any(ch.isdigit() for ch in token):
        return _NOT_SECRET.fullmatch(token) is None
    if not password or len(token) < MIN_SECRET_CHARS:
        return False
    symbol = any(not ch.isalnum() for ch in token)
    camel = any(a.islower() and b.isupper() for a, b in itertools.pairwise(token))
    return symbol or camel


def secret_needles(secret: Secret) -> Iterator[tuple[str, bool]]:
    """The encodings of a secret to look for in arguments, as ``(needle, case_sensitive)``: base64 (standard
    and URL-safe, at the three alignments, as much of it as the secret alone decides) and hex, of the secret
    and of its reversal."""
    for raw in dict.fromkeys((secret.raw, secret.raw[::-1])):
        data = raw.encode("utf-8")
        for offset in range(3):
            encoded = base64.b64encode(b"\0" * offset + data).decode().rstrip("=")
            skip = (0, 2, 3)[offset]
            whole = (offset + len(data)) * 8 // 6
            needle = encoded[skip:whole]
            if len(needle) >= _MIN_NEEDLE:
                yield needle, True
                urlsafe = needle.translate(str.maketrans("+/", "-_"))
                if urlsafe != needle:
                    yield urlsafe, True
        yield binascii.hexlify(data).decode(), False


class PieceLog:
    """Pieces of what recent external calls sent, to find a secret sent in parts.

    Pieces are whole argument values and URL components, their runs of letters and digits, and the runs of
    only letters or only digits inside those (at least 2 characters), folded and normalised; at most 64 per
    call, of at most 64 characters, from the last :data:`SPLIT_CALLS` external calls.
    """

    def __init__(self) -> None:
        self._calls: deque[frozenset[str]] = deque(maxlen=SPLIT_CALLS)

    def record(self, pieces: frozenset[str]) -> None:
        """Remember the pieces one external call sent."""
        self._calls.append(pieces)  # one slot per call, pieces or not: the window is counted in calls

    def covers(self, secret: str, current: frozenset[str]) -> bool:
        """Whether pieces of the current call together with earlier ones cover ``secret``, all but at most
        :data:`_MAX_UNCOVERED` characters of a long one (one in eight at most), and at least one piece of the current
        call is part of it, so that the call completing the secret is the one told."""
        mine = [p for p in current if p in secret and p != secret]
        if not mine:
            return False
        covered = bytearray(len(secret))
        used = 0
        longest = 0
        # A call that sent the secret whole was decided on it then: its parts are not a second sending.
        for pieces in (current, *(earlier for earlier in self._calls if secret not in earlier)):
            for piece in pieces:
                if piece == secret or piece not in secret:
                    continue
                used += 1
                longest = max(longest, len(piece))
                start = secret.find(piece)
                while start != -1:
                    covered[start : start + len(piece)] = b"\1" * len(piece)
                    start = secret.find(piece, start + 1)
        # A character or two left out (a last piece of one character, never recorded) does not hide the rest.
        missing = len(secret) - sum(covered)
        return used >= 2 and longest >= _MIN_LONG_PIECE and missing <= min(_MAX_UNCOVERED, len(secret) // 8)


def split_pieces(texts: Iterable[str], keep: Callable[[str], bool] | None = None) -> frozenset[str]:
    """The pieces of a call's argument values and URL components: each whole, its runs of letters and digits,
    and the runs of only letters or only digits inside those. With ``keep`` (whether a piece is part of a known
    secret), only those pieces, read from the whole of each text: a secret's pieces hidden in the middle of a
    long body are not crowded out by its other words."""
    pieces: set[str] = set()
    for text in texts:
        folded = fold(text if keep is not None else text[:4096]).lower()
        candidates = [squash_folded(folded)]
        for run in _RUN.findall(folded):
            candidates.append(run)
            candidates.extend(_SUB_RUN.findall(run))
        for piece in candidates:
            if len(pieces) >= _MAX_PIECES_PER_CALL:
                return frozenset(pieces)
            if _MIN_PIECE <= len(piece) <= _MAX_SECRET_CHARS and (keep is None or keep(piece)):
                pieces.add(piece)
    return frozenset(pieces)


_LIST_INDEX = re.compile(r"/\d+(?=/|$)")


def stream_pieces(texts: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """The streams a call's argument values continue, with what each adds: the value under its argument path
    (list positions ignored), and each kind of URL component of the URLs it holds, normalised."""
    pieces: list[tuple[str, str]] = []
    for path, text in texts:
        pieces.append(("arg:" + _LIST_INDEX.sub("/*", path), squash_folded(fold(text))))
        for url in find_urls(text):
            by_slot: dict[str, list[str]] = {}
            for slot, component in iter_url_components(url):
                by_slot.setdefault(slot, []).append(squash_folded(fold(component)))
            pieces.extend(("url:" + slot, "".join(parts)) for slot, parts in by_slot.items())
    return [(key, piece) for key, piece in pieces if piece]


def piece_texts(texts: Iterable[str]) -> list[str]:
    """Whole argument values and the components of their URLs, for :func:`split_pieces`."""
    out: list[str] = []
    for text in texts:
        out.append(text)
        out.extend(component for url in find_urls(text) for _, component in iter_url_components(url))
    return out
