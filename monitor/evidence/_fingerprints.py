"""Finding private content in a call's arguments: k-gram fingerprints with winnowing, decoded views of the
arguments (base64, hex, URL-encoding, URL components), short secrets and their encodings, and content split
across calls.

Text is normalised before fingerprinting: folded (NFKD, look-alike characters made Latin, see
:mod:`monitor.evidence._fold`), lowercase, letters and digits only, so copies that were re-wrapped,
re-punctuated, re-cased or re-spelt with look-alikes still match. Fingerprints use CRC-32, so the same input
gives the same evidence in every process (a live host and an offline replay agree). Fingerprinting streams over
the text in blocks of :data:`BLOCK` k-grams: its memory does not grow with the text.
"""

from __future__ import annotations

import itertools
import re
import zlib
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence

from monitor.evidence._fold import fold, fold_table
from monitor.evidence._memo import memoize_text
from monitor.evidence._secrets import (
    MIN_SECRET_CHARS,
    PieceLog,
    Secret,
    find_secrets,
    is_long_enough,
    secret_needles,
)
from monitor.evidence._tables import add_first
from monitor.evidence._views import decoded_views
from monitor.models import FragmentMatch, Transform

K = 20
"""k-gram length, in normalised characters: one shared k-gram is evidence."""
WINDOW = 8
"""Winnowing window: every shared run of at least ``MIN_MATCH`` characters is found (shorter ones may be)."""
MIN_MATCH = K + WINDOW - 1
BLOCK = 65_536
"""k-grams hashed at a time when fingerprinting: the memory fingerprinting needs, whatever the text's size."""

_NOT_ALNUM = re.compile(r"[\W_]+")
_ASCII_NOT_ALNUM = re.compile(r"[^A-Za-z0-9]+")
_NEEDLE_PREFIX = 6
_RAW_KEY = "\0"
# Above this much work (needles times characters), encoded secrets are looked up by prefix instead of one by one.
_DIRECT_NEEDLE_WORK = 4_000_000


def normalize(text: str) -> tuple[str, list[int]]:
    """Folded, lowercase letters and digits only, with each kept character's position in ``text``."""
    kept: list[str] = []
    positions: list[int] = []
    if text.isascii():
        for i, ch in enumerate(text):
            if ch.isalnum():
                kept.append(ch.lower())
                positions.append(i)
        return "".join(kept), positions
    table = fold_table()
    for i, ch in enumerate(text):
        for part in ch if ch.isascii() else table[ord(ch)]:
            if part.isalnum():
                kept.append(part.lower())
                positions.append(i)
    return "".join(kept), positions


def fold_alnum(text: str) -> str:
    """:func:`normalize` without the positions: for ASCII text the letters and digits lowercased, in C."""
    if text.isascii():
        return _ASCII_NOT_ALNUM.sub("", text).lower()
    return normalize(text)[0]


def squash(text: str) -> str:
    """:func:`normalize` without the positions (fast)."""
    return _NOT_ALNUM.sub("", fold(text).lower())


def kgram_hashes(norm: str, start: int = 0, stop: int | None = None) -> list[int]:
    """The CRC-32 of every k-gram of normalised text (of those starting in ``start:stop``)."""
    stop = len(norm) - K + 1 if stop is None else stop
    if norm.isascii():  # one character a byte: the k-grams are cut from the text encoded once
        data = norm.encode()
        return [zlib.crc32(data[i : i + K]) for i in range(start, stop)]
    return [zlib.crc32(norm[i : i + K].encode()) for i in range(start, stop)]


def winnow(norm: str) -> Iterator[tuple[int, int]]:
    """Yield ``(hash, position)`` of the winnowed k-gram fingerprints of normalised text: in every window
    of ``WINDOW`` consecutive k-grams, the rightmost minimal hash (Schleimer, Wilkerson and Aiken). The hashes
    are computed :data:`BLOCK` at a time."""
    n = len(norm) - K + 1
    if n <= 0:
        return
    if n <= WINDOW:
        hashes = kgram_hashes(norm)
        best = min(range(n), key=lambda j: (hashes[j], -j))
        yield hashes[best], best
        return
    best = -1
    buf: list[int] = []
    for block_start in range(0, n, BLOCK):
        block_end = min(n, block_start + BLOCK)
        keep = buf[-(WINDOW - 1) :]
        buf = keep + kgram_hashes(norm, block_start, block_end)
        base = block_start - len(keep)
        for end in range(max(WINDOW - 1, block_start), block_end):
            start = end - WINDOW + 1
            if best < start:
                # The minimum left the window: find the rightmost minimum of the new window.
                best = start
                for j in range(start + 1, end + 1):
                    if buf[j - base] <= buf[best - base]:
                        best = j
                yield buf[best - base], best
            elif buf[end - base] <= buf[best - base]:
                best = end
                yield buf[best - base], best


@memoize_text()
def _read_fingerprints(text: str) -> tuple[int, ...]:
    return tuple(h for h, _ in winnow(squash(text)))


@memoize_text()
def _read_kgrams(text: str) -> tuple[int, ...]:
    """The distinct k-gram hashes of a text, squashed (what an exclusion adds, in no order)."""
    return tuple(set(kgram_hashes(squash(text))))


@memoize_text()
def _read_secrets(value: str, key: str) -> tuple[tuple[Secret, tuple[tuple[str, bool], ...]], ...]:
    return tuple((secret, tuple(dict.fromkeys(secret_needles(secret)))) for secret in find_secrets(key, value))


class FragmentIndex:
    """Winnowed fingerprints and secrets of the private content of a session, bounded to ``max_fingerprints``
    fingerprints and ``max_secrets`` secrets.

    Past the bound the oldest fingerprints (or secrets) go and ``truncated`` is set.
    """

    def __init__(self, max_fingerprints: int = 50_000, max_secrets: int = 2_000) -> None:
        self.max_fingerprints = max_fingerprints
        self.max_secrets = max_secrets
        self._prints: OrderedDict[int, str] = OrderedDict()
        self._secrets: OrderedDict[str, tuple[str, tuple[tuple[str, bool], ...]]] = OrderedDict()
        self._credentials: set[str] = set()
        self.secrets_added = 0
        """How many secrets were indexed so far (a version: what is derived from them is stale once it grows)."""
        self._known: dict[int, int] = {}
        self._user_typed: set[int] = set()
        self._user_text: list[str] = []
        self.truncated = False

    def __len__(self) -> int:
        return len(self._prints)

    def exclude(self, text: str, *, typed_by_user: bool, at: int = 0) -> None:
        """Text that is not evidence of a leak: what the user typed (never evidence), or values the agent
        sent at time ``at`` (not evidence against private content that arrives later)."""
        if typed_by_user:
            self._user_typed.update(_read_kgrams(text))
            self._user_text.append(squash(text))
        elif len(self._known) < 4 * self.max_fingerprints:
            add_first(self._known, _read_kgrams(text), at)  # a hash known before keeps its first time

    def add(self, call_id: str, text: str, at: int = 0) -> None:
        """Index private content that ``call_id`` returned at time ``at``."""
        known, prints = self._known, self._prints
        hashes = _read_fingerprints(text)
        if len(prints) + len(hashes) <= self.max_fingerprints:  # none can be let go meanwhile: all at once
            add_first(prints, hashes, call_id, without=[h for h in known.keys() & hashes if known[h] < at])
            return
        for h in hashes:
            if known.get(h, at) >= at:
                prints.setdefault(h, call_id)
                if len(prints) > self.max_fingerprints:
                    prints.popitem(last=False)
                    self.truncated = True

    def find_private_grams(self, text: str) -> frozenset[int]:
        """The k-gram hashes of ``text`` that are fingerprints of private content (the user's own words aside):
        what makes a piece of ``text`` evidence."""
        prints, typed = self._prints, self._user_typed
        return frozenset(h for h in kgram_hashes(fold_alnum(text)) if h in prints and h not in typed)

    def add_secrets(self, call_id: str, key: str, value: str) -> None:
        """Index secret-shaped values of a private leaf, with their encodings."""
        for secret, needles in _read_secrets(value, key):
            self._add_secret(call_id, secret, needles)

    def _add_secret(self, call_id: str, secret: Secret, needles: tuple[tuple[str, bool], ...]) -> None:
        # A secret whose letters and digits are too few to compare (a password mostly of symbols) is still
        # looked for by its encodings, which are computed from all of it; it is known by what it was written as.
        if is_long_enough(secret.norm):
            key = secret.norm
        elif len(secret.raw) >= MIN_SECRET_CHARS:
            key = _RAW_KEY + secret.raw
        else:
            return
        if key not in self._secrets:
            self._secrets[key] = (call_id, needles)
            self.secrets_added += 1
        if secret.credential:
            self._credentials.add(key)
        if len(self._secrets) > self.max_secrets:
            dropped, _ = self._secrets.popitem(last=False)
            self._credentials.discard(dropped)
            self.truncated = True

    def find_secret_sources(self, matches: Iterable[FragmentMatch]) -> frozenset[str]:
        """The sources of ``matches`` that are, or hold, a credential of the private content: a secret named as
        one (under a secret key, or by a secret word such as password, token or one-time code), found as such
        or whole in a match's text. A long token that is only shaped like a secret (a file name with a date)
        is not one."""
        found: set[str] = set()
        for match in matches:
            if match.transform in (Transform.PARAPHRASE, Transform.FILE):
                continue
            text = fold_alnum(match.text)
            if any(
                (key.removeprefix(_RAW_KEY) in match.text) if key.startswith(_RAW_KEY) else (key in text)
                for key in self._credentials
            ):
                found.add(match.from_call)
        return frozenset(found)

    def secrets(self) -> list[str]:
        """The normalised secrets indexed, oldest first."""
        return [key.removeprefix(_RAW_KEY) for key in self._secrets]

    def search(
        self,
        texts: Iterable[str],
        previous: str = "",
        *,
        streams: Sequence[tuple[str, str]] = (),
        pieces: tuple[PieceLog, frozenset[str]] | None = None,
    ) -> list[FragmentMatch]:
        """Private content in ``texts`` (a call's argument strings): verbatim, decoded, as secrets (also
        encoded or reversed), and split across calls: ``streams`` pairs the normalised tail of what earlier
        external calls sent in one stream with what this call sends in it (``previous`` is the tail of all
        their arguments, joined to all of these), and ``pieces`` the log of recent external calls' pieces with
        this call's own."""
        matches: list[FragmentMatch] = []
        texts = list(texts)
        views: list[tuple[Transform, str]] = []
        for text in texts:
            matches.extend(self._search_one(text, Transform.VERBATIM))
            for transform, decoded in decoded_views(text):
                matches.extend(self._search_one(decoded, transform))
                views.append((transform, squash(decoded)))
        parts = [squash(t) for t in texts]
        joined = "".join(parts)
        if previous and joined:
            # Everything sent so far, joined: a span that joins what earlier calls sent with this call, or two
            # of this call's arguments.
            cuts = [len(previous) + n for n in itertools.accumulate(len(p) for p in parts[:-1])]
            matches.extend(self._search_norm(previous + joined, None, Transform.SPLIT, crossing=(len(previous), *cuts)))
        pairs = [(tail, current) for tail, current in streams if tail and current]
        for tail, current in pairs:
            matches.extend(self._search_norm(tail + current, None, Transform.SPLIT, crossing=(len(tail),)))
        if previous and joined:
            pairs.append((previous, joined))
        if self._secrets:
            matches.extend(self._search_secrets(texts, [(Transform.SECRET, joined), *views], pairs, pieces, matches))
        return _dedupe(matches)

    def _search_secrets(
        self,
        texts: list[str],
        views: list[tuple[Transform, str]],
        pairs: list[tuple[str, str]],
        pieces: tuple[PieceLog, frozenset[str]] | None,
        found: list[FragmentMatch],
    ) -> list[FragmentMatch]:
        matches: list[FragmentMatch] = []
        encoded = self._find_encoded(texts)
        matched_text = [fold_alnum(m.text) for m in found]
        for secret, (call_id, _needles) in self._secrets.items():
            if secret.startswith(_RAW_KEY):
                if secret in encoded:
                    matches.append(FragmentMatch(call_id, secret.removeprefix(_RAW_KEY), encoded[secret]))
                continue
            if any(secret in typed for typed in self._user_text) or any(secret in t for t in matched_text):
                continue
            reverse = secret[::-1]
            seen_in = next((t for t, view in views if secret in view or reverse in view), None)
            if seen_in is not None:
                matches.append(FragmentMatch(call_id, secret, seen_in))
            elif secret in encoded:
                matches.append(FragmentMatch(call_id, secret, encoded[secret]))
            elif any(_crosses(secret, tail, current) for tail, current in pairs) or (
                pieces is not None and pieces[0].covers(secret, pieces[1])
            ):
                matches.append(FragmentMatch(call_id, secret, Transform.SPLIT))
        return matches

    def _find_encoded(self, texts: list[str]) -> dict[str, Transform]:
        """Secrets whose base64 or hex encoding is in ``texts`` (as written), with the encoding."""
        found: dict[str, Transform] = {}
        total = sum(len(t) for t in texts)
        needles = sum(len(n) for _, n in self._secrets.values())
        if needles * total <= _DIRECT_NEEDLE_WORK:
            lowered = [t.lower() for t in texts]
            for secret, (_call, encodings) in self._secrets.items():
                for needle, case in encodings:
                    if any(needle in t for t in (texts if case else lowered)):
                        found[secret] = Transform.BASE64 if case else Transform.HEX
                        break
            return found
        by_prefix: dict[tuple[str, bool], list[tuple[str, str]]] = {}
        for secret, (_call, encodings) in self._secrets.items():
            for needle, case in encodings:
                by_prefix.setdefault((needle[:_NEEDLE_PREFIX], case), []).append((needle, secret))
        for text in texts:
            for case, haystack in ((True, text), (False, text.lower())):
                for i in range(len(haystack) - _NEEDLE_PREFIX + 1):
                    for needle, secret in by_prefix.get((haystack[i : i + _NEEDLE_PREFIX], case), ()):
                        if haystack.startswith(needle, i):
                            found.setdefault(secret, Transform.BASE64 if case else Transform.HEX)
        return found

    def _search_one(self, text: str, transform: Transform) -> list[FragmentMatch]:
        # Where each kept character stood is needed only to quote a match: worked out when one is found.
        return self._search_norm(fold_alnum(text), text, transform)

    def _search_norm(
        self,
        norm: str,
        original: str | None,
        transform: Transform,
        crossing: Sequence[int] = (),
    ) -> list[FragmentMatch]:
        if len(norm) < K or not self._prints:
            return []
        hashes = kgram_hashes(norm)
        prints, typed = self._prints, self._user_typed
        hits: list[tuple[int, str]] = []
        # Most positions hold no fingerprint: they are passed over in C, and only the others are looked at.
        for pos in itertools.compress(itertools.count(), map(prints.__contains__, hashes)):
            h = hashes[pos]
            if h not in typed:
                hits.append((pos, prints[h]))
        spans: list[tuple[int, int, str]] = []
        for pos, call_id in hits:
            if spans and pos <= spans[-1][1] and spans[-1][2] == call_id:
                spans[-1] = (spans[-1][0], pos + K, call_id)
            else:
                spans.append((pos, pos + K, call_id))
        found = []
        positions: list[int] | None = None
        for start, end, call_id in spans:
            if crossing and not any(start < cut < end for cut in crossing):
                continue  # only what joins two pieces: each piece alone is searched on its own
            if original is not None:
                positions = positions if positions is not None else normalize(original)[1]
                snippet = _whole_words(original, positions[start], positions[end - 1] + 1)
            else:
                snippet = norm[start:end]
            found.append(FragmentMatch(call_id, snippet, transform))
        return found


def _crosses(secret: str, tail: str, current: str) -> bool:
    """Whether ``secret`` starts in ``tail`` and ends in ``current`` once they are joined."""
    if not tail or not current:
        return False
    joined = tail[-(len(secret) - 1) :] + current[: len(secret) - 1]
    return secret in joined


def _whole_words(text: str, start: int, end: int) -> str:
    """The matched text widened to whole words (fingerprints mark where a match is, not its exact ends), by at
    most :data:`_MAX_WIDEN` characters each side: text without spaces is not one word to copy per match."""
    low, high = max(0, start - _MAX_WIDEN), min(len(text), end + _MAX_WIDEN)
    while start > low and not text[start - 1].isspace():
        start -= 1
    while end < high and not text[end].isspace():
        end += 1
    return text[start:end]


_MAX_WIDEN = 64


def _dedupe(matches: list[FragmentMatch]) -> list[FragmentMatch]:
    seen: set[tuple[str, str, Transform]] = set()
    out = []
    for m in matches:
        key = (m.from_call, m.text, m.transform)
        if key not in seen:
            seen.add(key)
            out.append(m)
    return out
