"""Finding private content in a call's arguments: k-gram fingerprints with winnowing, decoded views of the
arguments (base64, hex, URL-encoding), and short secrets.

Text is normalised before fingerprinting: lowercase, letters and digits only, so copies that were re-wrapped,
re-punctuated or re-cased still match. Fingerprints use CRC-32, so the same input gives the same evidence in
every process (a live host and an offline replay agree).
"""

from __future__ import annotations

import base64
import binascii
import re
import zlib
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from urllib.parse import unquote_plus

from monitor.models import FragmentMatch, Transform

K = 20
"""k-gram length, in normalised characters: one shared k-gram is evidence."""
WINDOW = 8
"""Winnowing window: every shared run of at least ``MIN_MATCH`` characters is found (shorter ones may be)."""
MIN_MATCH = K + WINDOW - 1

_NOT_ALNUM = re.compile(r"[\W_]+")
_B64 = re.compile(r"[A-Za-z0-9+/]{16,}={0,2}|[A-Za-z0-9_-]{16,}={0,2}")
_HEX = re.compile(r"(?:[0-9a-fA-F]{2}){8,}")
_SECRET_CONTEXT = re.compile(
    r"(?i)\b(?:code|otp|pin|password|passcode|passphrase|token|secret|api[ _-]?key|verification)\b"
    r"[^A-Za-z0-9\n]{0,12}(?:\w+\W{1,3}){0,3}?([A-Za-z0-9][A-Za-z0-9_\-]{3,63})\b"
)
_SECRET_WORD = re.compile(r"(?i)(?:^|[\W_])(?:code|otp|pin|password|passcode|token|secret|api[ _-]?key)(?:$|[\W_])")
_TOKEN = re.compile(r"\b(?=[A-Za-z0-9_\-]*\d)(?=[A-Za-z0-9_\-]*[A-Za-z])[A-Za-z0-9_\-]{20,128}\b")
SECRET_KEYS = frozenset(
    [
        "password",
        "passwd",
        "pass",
        "secret",
        "token",
        "api_key",
        "apikey",
        "access_token",
        "refresh_token",
        "private_key",
        "client_secret",
        "code",
        "otp",
        "pin",
        "ssn",
        "iban",
        "account_number",
        "bank_account_number",
        "card_number",
        "cvv",
        "passport_number",
        "id_number",
        "security_code",
        "verification_code",
    ]
)


def normalize(text: str) -> tuple[str, list[int]]:
    """Lowercase letters and digits only, with each kept character's position in ``text``."""
    kept: list[str] = []
    positions: list[int] = []
    for i, ch in enumerate(text):
        if ch.isalnum():
            kept.append(ch.lower())
            positions.append(i)
    return "".join(kept), positions


def squash(text: str) -> str:
    """:func:`normalize` without the positions (fast)."""
    return _NOT_ALNUM.sub("", text.lower())


def kgram_hashes(norm: str) -> list[int]:
    """The CRC-32 of every k-gram of normalised text."""
    return [zlib.crc32(norm[i : i + K].encode()) for i in range(len(norm) - K + 1)]


def winnow(norm: str) -> Iterator[tuple[int, int]]:
    """Yield ``(hash, position)`` of the winnowed k-gram fingerprints of normalised text: in every window
    of ``WINDOW`` consecutive k-grams, the rightmost minimal hash (Schleimer, Wilkerson and Aiken)."""
    hashes = kgram_hashes(norm)
    n = len(hashes)
    if n == 0:
        return
    if n <= WINDOW:
        best = min(range(n), key=lambda j: (hashes[j], -j))
        yield hashes[best], best
        return
    best = -1
    for end in range(WINDOW - 1, n):
        start = end - WINDOW + 1
        if best < start:
            # The minimum left the window: find the rightmost minimum of the new window.
            best = start
            for j in range(start + 1, end + 1):
                if hashes[j] <= hashes[best]:
                    best = j
            yield hashes[best], best
        elif hashes[end] <= hashes[best]:
            best = end
            yield hashes[best], best


def all_kgrams(norm: str) -> Iterator[tuple[int, int]]:
    """Every k-gram's hash and position (the query side: a sink is checked at every position)."""
    for i in range(len(norm) - K + 1):
        yield zlib.crc32(norm[i : i + K].encode()), i


def decoded_views(text: str) -> Iterator[tuple[Transform, str]]:
    """Decoded substrings of an argument: base64, hex and URL-encoding, when they decode to text."""
    if "%" in text:
        unquoted = unquote_plus(text)
        if unquoted != text:
            yield Transform.URL, unquoted
    for m in _HEX.finditer(text):
        decoded = _as_text(binascii.unhexlify(m.group(0)))
        if decoded:
            yield Transform.HEX, decoded
    for m in _B64.finditer(text):
        raw = m.group(0)
        if _HEX.fullmatch(raw):
            continue
        padded = raw + "=" * (-len(raw) % 4)
        try:
            data = base64.b64decode(padded, altchars=b"-_" if ("-" in raw or "_" in raw) else None, validate=True)
        except (binascii.Error, ValueError):
            continue
        decoded = _as_text(data)
        if decoded:
            yield Transform.BASE64, decoded


def _as_text(data: bytes) -> str | None:
    if len(data) < 8:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    printable = sum(ch.isprintable() or ch.isspace() for ch in text)
    return text if printable >= 0.9 * len(text) else None


def find_secrets(key: str, value: str) -> Iterator[str]:
    """Secret-shaped values in one leaf of private content: under a secret key, after a word like "code",
    or long mixed letter-and-digit tokens. Returned normalised."""
    if (key.lower() in SECRET_KEYS or _SECRET_WORD.search(key)) and 4 <= len(value) <= 256:
        yield squash(value)
    for m in _SECRET_CONTEXT.finditer(value):
        if any(ch.isdigit() for ch in m.group(1)):
            yield squash(m.group(1))
    for m in _TOKEN.finditer(value):
        yield squash(m.group(0))


def _long_enough_secret(secret: str) -> bool:
    return len(secret) >= (6 if secret.isdigit() else 8)


class FragmentIndex:
    """Winnowed fingerprints of the private content of a session, bounded to ``max_fingerprints``.

    Past the bound the oldest fingerprints go and ``truncated`` is set.
    """

    def __init__(self, max_fingerprints: int = 50_000, max_secrets: int = 2_000) -> None:
        self.max_fingerprints = max_fingerprints
        self.max_secrets = max_secrets
        self._prints: OrderedDict[int, str] = OrderedDict()
        self._secrets: OrderedDict[str, str] = OrderedDict()
        self._known: dict[int, int] = {}
        self._user_typed: set[int] = set()
        self._user_text: list[str] = []
        self.truncated = False

    def __len__(self) -> int:
        return len(self._prints)

    def exclude(self, text: str, *, typed_by_user: bool, at: int = 0) -> None:
        """Text that is not evidence of a leak: what the user typed (never evidence), or values the agent
        sent at time ``at`` (not evidence against private content that arrives later)."""
        norm = squash(text)
        if typed_by_user:
            self._user_typed.update(kgram_hashes(norm))
            self._user_text.append(norm)
        elif len(self._known) < 4 * self.max_fingerprints:
            for h in kgram_hashes(norm):
                self._known.setdefault(h, at)

    def add(self, call_id: str, text: str, at: int = 0) -> None:
        """Index private content that ``call_id`` returned at time ``at``."""
        known = self._known
        for h, _pos in winnow(squash(text)):
            if known.get(h, at) >= at:
                self._prints.setdefault(h, call_id)
        while len(self._prints) > self.max_fingerprints:
            self._prints.popitem(last=False)
            self.truncated = True

    def add_secrets(self, call_id: str, key: str, value: str) -> None:
        """Index secret-shaped values of a private leaf."""
        for secret in find_secrets(key, value):
            if _long_enough_secret(secret):
                self._secrets.setdefault(secret, call_id)
        while len(self._secrets) > self.max_secrets:
            self._secrets.popitem(last=False)
            self.truncated = True

    def search(self, texts: Iterable[str], previous: str = "") -> list[FragmentMatch]:
        """Private content in ``texts`` (a call's argument strings): verbatim, decoded, as secrets, and
        split across calls (``previous`` is the normalised tail of earlier external calls' arguments)."""
        matches: list[FragmentMatch] = []
        texts = list(texts)
        for text in texts:
            matches.extend(self._search_one(text, Transform.VERBATIM))
            for transform, decoded in decoded_views(text):
                matches.extend(self._search_one(decoded, transform))
        joined = "".join(squash(t) for t in texts)
        if previous:
            matches.extend(self._search_norm(previous + joined, None, Transform.SPLIT, boundary=len(previous)))
        for secret, call_id in self._secrets.items():
            if (
                secret in joined
                and not any(secret in typed for typed in self._user_text)
                and not any(secret in normalize(m.text)[0] for m in matches)
            ):
                matches.append(FragmentMatch(call_id, secret, Transform.SECRET))
        return _dedupe(matches)

    def _search_one(self, text: str, transform: Transform) -> list[FragmentMatch]:
        norm, positions = normalize(text)
        return self._search_norm(norm, (text, positions), transform)

    def _search_norm(
        self, norm: str, original: tuple[str, list[int]] | None, transform: Transform, boundary: int = 0
    ) -> list[FragmentMatch]:
        if len(norm) < K or not self._prints:
            return []
        hits: list[tuple[int, str]] = []
        for h, pos in all_kgrams(norm):
            call_id = self._prints.get(h)
            if call_id is not None and h not in self._user_typed:
                hits.append((pos, call_id))
        spans: list[tuple[int, int, str]] = []
        for pos, call_id in hits:
            if spans and pos <= spans[-1][1] and spans[-1][2] == call_id:
                spans[-1] = (spans[-1][0], pos + K, call_id)
            else:
                spans.append((pos, pos + K, call_id))
        found = []
        for start, end, call_id in spans:
            if end <= boundary:
                continue
            if original is not None:
                text, positions = original
                snippet = _whole_words(text, positions[start], positions[end - 1] + 1)
            else:
                snippet = norm[start:end]
            found.append(FragmentMatch(call_id, snippet, transform))
        return found


def _whole_words(text: str, start: int, end: int) -> str:
    """The matched text widened to whole words (fingerprints mark where a match is, not its exact ends)."""
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    while end < len(text) and not text[end].isspace():
        end += 1
    return text[start:end]


def _dedupe(matches: list[FragmentMatch]) -> list[FragmentMatch]:
    seen: set[tuple[str, str, Transform]] = set()
    out = []
    for m in matches:
        key = (m.from_call, m.text, m.transform)
        if key not in seen:
            seen.add(key)
            out.append(m)
    return out
