"""Finding private content restated in other words (paraphrase evidence, docs/evidence.md).

Verbatim and encoded copies are found by fingerprints; a restatement ("Nightingale budget is 2.4M, ref
ACC-88412" for "Project Nightingale, budget $2.4M, contact ref ACC-88412") shares no long run of characters
with its source, but it shares its *salient tokens*: identifiers, amounts and other specific numbers, dates,
rare words and key phrases. :class:`SalientIndex` keeps the salient tokens of private text and scores, per
source call, the ones found again in a call's arguments.

Token kinds and weights (the weight of a match is the weaker of the private and the argument form):

- identifier (3): letters and digits mixed, at least 5 of them (``ACC-88412``, ``a1b2c3d4``, an IBAN), or a
  card, account or phone number written in digit groups; 1 when it has a single digit (``python3``). The
  numbers of 4 digits or more inside an identifier are also tokens, found when the identifier is not.
- number: at least 2 significant digits. 3 with 3 significant digits or more (``1,250.75``, ``88412``); 2
  with 2 and a mark of an amount (currency, ``k``/``M``/``bn``/``million``, percent, decimal point, thousands
  separators: ``$45``, ``4.5%``, ``2.4M``); 1 bare (``45``, ``1500``) or a year (1900 to 2099). A range
  (``180-240k``) is one token weighing one more than its stronger end (at most 3), when both ends are
  tokens; its ends are also tokens. Times of day (``14:30``) give no token.
- date (2): a full date with its year, in ISO, day/month/year (both readings when ambiguous) or month-name
  form.
- word (1): a word of 6 letters or more that is not a common English word.
- phrase (1): two adjacent words of 3 letters or more, neither a function word, both capitalised (a name:
  ``Acme Corp``) or at least one outside the thousand most common words (``salary bands``).

Normalisation: NFKC, invisible characters removed, keys casefolded; identifiers lose their ``-``/``_``
separators and digit groups their spaces and hyphens; numbers lose thousands separators and currency and
have multipliers applied (``180k``, ``180,000`` and ``180 thousand`` are one token; ``2.4M`` is ``2400000``);
dates become ISO. Email addresses give no tokens (their local parts are names, not content).

Score: the sum of the weights of the distinct tokens of one source found in the arguments, each fact counted
once (a phrase and its words, a range and its ends, an identifier and its numbers). A source is evidence
when the score is at least ``MIN_SCORE`` (4) and one of its tokens weighs 2 or more. No token weighs more
than 3, so one token alone, however strong, is never enough (it may be a coincidence); one identifier and
one more token pass, two amounts pass, a date and a rare word do not, and weak tokens alone never pass,
however many.
"""

from __future__ import annotations

import re
import unicodedata
from collections import OrderedDict
from collections.abc import Container, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date
from decimal import Context, Decimal
from enum import StrEnum
from functools import cache
from importlib import resources

from monitor.evidence._memo import memoize_text
from monitor.evidence._tables import add_first
from monitor.evidence._views import decoded_views
from monitor.models import FragmentMatch, Transform

MAX_EXAMINED_CHARS = 200_000
"""Characters of one private (or excluded) text that are examined; past that, ``truncated`` is set."""
MIN_SCORE = 4
"""The score a source needs for its tokens in the arguments to be evidence."""
WEAK, MEDIUM, STRONG = 1, 2, 3

_MAX_SOURCES = 8
_MAX_WORD = 40
_MAX_RUN = 100
_MAX_GAP = 3
_MIN_RARE_LETTERS = 6
_MIN_PHRASE_LETTERS = 3
_MIN_IDENTIFIER_CHARS = 5
_DECIMAL = Context(prec=120)
_MULTIPLIERS = {
    "k": Decimal(10**3),
    "thousand": Decimal(10**3),
    "m": Decimal(10**6),
    "mn": Decimal(10**6),
    "million": Decimal(10**6),
    "bn": Decimal(10**9),
    "billion": Decimal(10**9),
    "trillion": Decimal(10**12),
}
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_FUNCTION_WORDS = frozenset(
    """about above across after again against all also although among and any are around because been before
    being below beside between both but can cannot could did does doing done down during each either else even
    ever every few for from had has have having her here hers herself him himself his how however into its itself
    just may might mine more most much must myself neither nor not now off once only onto other others our ours
    ourselves out over own per same shall she should since some such than that the their theirs them themselves
    then there these they this those though through thus till too toward towards under unless until upon very via
    was were what whatever when where whether which while who whom whose why will with within without would yet
    you your yours yourself yourselves hello dear thanks thank regards cheers please etc""".split()
)

_INVISIBLE = re.compile("[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]")
_MONTH = r"jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?"
_MONTH += r"|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?"
_NUMBER = r"(?:[0-9]{1,3}(?:,[0-9]{3})++(?![0-9])|[0-9]{1,40}+(?![0-9]))(?:\.[0-9]{1,40}+(?![0-9]))?"
_MULTIPLIER = r"[ ]?(?i:thousand|million|billion|trillion)(?![^\W\d_])|(?i:k|m|mn|bn)(?!\w)"
_END = r"(?!(?!T[0-9])\w|[-/.][0-9])"
# One pass over the text. Every alternative that may scan far starts only where no shorter match of the
# same kind could (its look-behind), and the last one consumes whole runs, so the pass is linear.
_PATTERN = re.compile(
    rf"""
    (?P<email>(?<![\w.+-])[\w.+-]{{1,64}}@[\w-]{{1,63}}(?:\.[\w-]{{1,63}}){{1,8}})
  | (?P<iban>(?<!\w)[A-Z]{{2}}[0-9]{{2}}(?:[ ]?[A-Z0-9]{{4}}){{2,7}}(?:[ ]?[A-Z0-9]{{1,3}})?(?!\w))
  | (?P<mdy>(?<!\w)(?i:(?P<mdy_m>{_MONTH}))\.?[ ](?P<mdy_d>[0-9]{{1,2}})(?i:st|nd|rd|th)?,?[ ]
        (?P<mdy_y>[0-9]{{4}})(?!\w))
  | (?P<dmy_name>(?<![\w.-])(?P<dn_d>[0-9]{{1,2}})(?i:st|nd|rd|th)?[ ](?i:of[ ])?(?i:(?P<dn_m>{_MONTH}))\.?,?[ ]
        (?P<dn_y>[0-9]{{4}})(?!\w))
  | (?P<iso>(?<![\w.-])(?P<iso_y>[0-9]{{4}})(?P<iso_s>[-/.])(?P<iso_m>[0-9]{{1,2}})(?P=iso_s)
        (?P<iso_d>[0-9]{{1,2}}){_END})
  | (?P<dmy>(?<![\w.-])(?P<dmy_a>[0-9]{{1,2}})(?P<dmy_s>[-/.])(?P<dmy_b>[0-9]{{1,2}})(?P=dmy_s)
        (?P<dmy_y>[0-9]{{4}}){_END})
  | (?P<card>(?<![\w.-])[0-9]{{4}}(?:[ ][0-9]{{4}}){{3}}(?![\w]|[ ][0-9]))
  | (?P<chain>(?<![\w.-])[0-9]++(?:-[0-9]++){{2,}}+(?!\w))
  | (?P<time>(?<![\w.:])[0-9]{{1,2}}:[0-9]{{2}}(?::[0-9]{{2}})?(?:[ ]?(?i:am|pm))?(?![\w:]))
  | (?P<dotted>(?<![\w.])[0-9]{{1,10}}+(?:\.[0-9]{{1,10}}+){{2,}}+(?![\w.]))
  | (?P<num>(?<![\w.])(?P<cur>[$€£¥₹][ ]?)?(?P<a>{_NUMBER})(?P<am>{_MULTIPLIER})?
        (?:[ ]?[-\u2013\u2014][ ]?[$€£¥₹]?(?P<b>{_NUMBER})(?P<bm>{_MULTIPLIER})?(?![-\u2013\u2014.]?[0-9]))?
        (?P<pct>[ ]?(?:%|(?i:percent|pct)(?!\w)))?(?P<ccy>[ ](?i:usd|eur|gbp|chf|jpy|dollars?|euros?)(?!\w))?
        (?:[^\W\d_]{{1,4}}+)?(?!\w))
  | (?P<run>(?<![\w-])[^\W_]++(?:[-_][^\W_]++)*+)
    """,
    re.VERBOSE,
)
_DIGIT_PART = re.compile(r"[0-9]{4,40}")


class SalientKind(StrEnum):
    """The kinds of salient token."""

    IDENTIFIER = "identifier"
    NUMBER = "number"
    DATE = "date"
    WORD = "word"
    PHRASE = "phrase"


@dataclass(frozen=True, slots=True)
class SalientToken:
    """A salient token: its kind, its normalised ``key`` (what is compared), its weight in the score, and
    the text it was read from."""

    kind: SalientKind
    key: str
    weight: int
    surface: str


@dataclass(frozen=True, slots=True)
class _Fact:
    """One fact of a text: its tokens, best first (the later ones are looked for only when the first is not
    found), and the keys a match of the first one covers (counted once with it)."""

    tokens: tuple[SalientToken, ...]
    covers: tuple[str, ...] = ()


@dataclass(slots=True)
class _Entry:
    weight: int
    sources: list[str] = field(default_factory=list)


@cache
def _read_word_lists() -> tuple[frozenset[str], frozenset[str]]:
    """The common English words and, among them, the very common ones (package data)."""
    text = resources.files("monitor.evidence").joinpath("_common_words.txt").read_text(encoding="utf-8")
    sections: dict[str, list[str]] = {}
    current = sections.setdefault("", [])
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("["):
            current = sections.setdefault(line.strip("[]"), [])
        elif line and not line.startswith("#"):
            current.append(line)
    very_common = frozenset(sections.get("very-common", []))
    return very_common | frozenset(sections.get("common", [])), very_common


def _prepare_text(text: str) -> str:
    """NFKC with invisible characters (zero-width, soft hyphen, direction marks) removed."""
    return _INVISIBLE.sub("", unicodedata.normalize("NFKC", text))


def extract_salient_tokens(text: str) -> list[SalientToken]:
    """The salient tokens private ``text`` would be indexed by (its first ``MAX_EXAMINED_CHARS`` characters),
    one per key, with the largest weight the key was seen with."""
    found: dict[str, SalientToken] = {}
    for fact in _scan(_prepare_text(text[:MAX_EXAMINED_CHARS]), lookup=False):
        for token in fact.tokens:
            if token.key not in found or found[token.key].weight < token.weight:
                found[token.key] = token
    return list(found.values())


class SalientIndex:
    """The salient tokens of the private content of a session, bounded to ``max_tokens`` keys.

    Past the bound the oldest keys go; that, or a private text longer than
    ``MAX_EXAMINED_CHARS``, sets ``truncated``.
    """

    def __init__(self, max_tokens: int = 50_000) -> None:
        self.max_tokens = max_tokens
        self._tokens: OrderedDict[str, _Entry] = OrderedDict()
        self._typed: set[str] = set()
        self._known: dict[str, int] = {}
        self._truncated = False

    def __len__(self) -> int:
        return len(self._tokens)

    @property
    def truncated(self) -> bool:
        """Whether some private text was not examined or some of its tokens were dropped."""
        return self._truncated

    def add(self, call_id: str, text: str, *, at: int = 0) -> None:
        """Index the salient tokens of private text that ``call_id`` returned (at time ``at``)."""
        if len(text) > MAX_EXAMINED_CHARS:
            text = text[:MAX_EXAMINED_CHARS]
            self._truncated = True
        keys = _read_private_keys(text)
        if len(self._tokens) + len(keys) > self.max_tokens:
            # Keys may be let go while this text is read, and come back: read it token by token, in order.
            keys = tuple((t.key, t.weight) for fact in _scan(_prepare_text(text), lookup=False) for t in fact.tokens)
        tokens, known = self._tokens, self._known
        for key, weight in keys:
            if known.get(key, at) < at:
                continue
            entry = tokens.get(key)
            if entry is None:
                tokens[key] = _Entry(weight, [call_id])
                if len(tokens) > self.max_tokens:
                    tokens.popitem(last=False)
                    self._truncated = True
                continue
            entry.weight = max(entry.weight, weight)
            if call_id not in entry.sources and len(entry.sources) < _MAX_SOURCES:
                entry.sources.append(call_id)

    def exclude(self, text: str, *, at: int | None = None) -> None:
        """Tokens that are not evidence: with no ``at``, never (what the user typed); with ``at``, not against
        private content added after time ``at`` (what the agent sent before that content arrived)."""
        cap = 4 * self.max_tokens
        keys = _read_lookup_keys(text[:MAX_EXAMINED_CHARS])
        if at is None:
            if len(self._typed) + len(keys) <= cap:
                self._typed.update(keys)
                return
            for key in keys:
                if len(self._typed) < cap:
                    self._typed.add(key)
        elif len(self._known) + len(keys) <= cap:
            add_first(self._known, keys, at)
        else:
            for key in keys:
                if len(self._known) < cap:
                    self._known.setdefault(key, at)

    def search(self, texts: Iterable[str]) -> list[FragmentMatch]:
        """One ``PARAPHRASE`` match per source call whose salient tokens in ``texts`` (a call's argument
        strings, and what they decode to) score enough; its text lists the tokens as the arguments wrote them."""
        if not self._tokens:
            return []
        hits: dict[str, dict[str, tuple[int, str]]] = {}
        covered: dict[str, set[str]] = {}
        for text in texts:
            for view in _iter_views(text):
                for fact in _scan(_prepare_text(view), lookup=True, known=self._tokens):
                    self._match(fact, hits, covered)
        matches = []
        for call_id, found in hits.items():
            kept = [(weight, surface) for key, (weight, surface) in found.items() if key not in covered[call_id]]
            if _passes([weight for weight, _ in kept]):
                matches.append(FragmentMatch(call_id, ", ".join(s for _, s in kept), Transform.PARAPHRASE))
        return matches

    def _find(self, key: str) -> _Entry | None:
        return None if key in self._typed else self._tokens.get(key)

    def _match(self, fact: _Fact, hits: dict[str, dict[str, tuple[int, str]]], covered: dict[str, set[str]]) -> None:
        first, *rest = fact.tokens
        entry = self._find(first.key)
        if entry is not None:
            _record(first, entry, hits, covered)
            for call_id in entry.sources:
                covered[call_id].update(fact.covers)
            return
        for token in rest:
            entry = self._find(token.key)
            if entry is not None:
                _record(token, entry, hits, covered)


def _record(
    token: SalientToken, entry: _Entry, hits: dict[str, dict[str, tuple[int, str]]], covered: dict[str, set[str]]
) -> None:
    weight = min(token.weight, entry.weight)
    for call_id in entry.sources:
        found = hits.setdefault(call_id, {})
        covered.setdefault(call_id, set())
        if token.key not in found or found[token.key][0] < weight:
            found[token.key] = (weight, token.surface)


def _passes(weights: list[int]) -> bool:
    return bool(weights) and max(weights) >= MEDIUM and sum(weights) >= MIN_SCORE


def _iter_views(text: str) -> Iterator[str]:
    yield text
    for _, decoded in decoded_views(text):
        yield decoded


@memoize_text(chars=1_000, budget=1_000_000)
def _read_private_keys(text: str) -> tuple[tuple[str, int], ...]:
    """The keys of the salient tokens of private text, each once with the largest weight it was seen with, in
    the order they first appear: what indexing the text adds, when no key is let go meanwhile."""
    weights: dict[str, int] = {}
    for fact in _scan(_prepare_text(text), lookup=False):
        for token in fact.tokens:
            if token.key not in weights or weights[token.key] < token.weight:
                weights[token.key] = token.weight
    return tuple(weights.items())


@memoize_text(chars=1_000, budget=1_000_000)
def _read_lookup_keys(text: str) -> tuple[str, ...]:
    """The keys of the salient tokens of excluded text, each once, in the order they first appear."""
    return tuple(dict.fromkeys(token.key for fact in _scan(_prepare_text(text), lookup=True) for token in fact.tokens))


def _scan(text: str, *, lookup: bool, known: Container[str] | None = None) -> Iterator[_Fact]:
    """The facts of prepared text, in one pass. ``lookup`` (arguments, excluded text) pairs every two adjacent
    content words; otherwise (private text) only the pairs that make a phrase. ``known``, when given, keeps
    only the words and pairs it holds (a search needs no others)."""
    common = _read_word_lists()[0]
    previous: str | None = None
    previous_surface = ""
    previous_end = 0
    for m in _PATTERN.finditer(text):
        kind = m.lastgroup
        if kind == "run":
            run = m.group()
            if len(run) <= _MAX_WORD and run.isalpha():
                word = run.casefold()
                start = m.start()
                if previous is not None and 0 < start - previous_end <= _MAX_GAP and text[previous_end:start].isspace():
                    if known is None:
                        pair = _read_pair(previous_surface, run, lookup)
                        if pair is not None:
                            yield pair
                    elif (key := f"{previous} {word}") in known:
                        phrase = SalientToken(SalientKind.PHRASE, key, WEAK, f"{previous_surface} {run}")
                        yield _Fact((phrase,), (previous, word))
                if len(run) >= _MIN_RARE_LETTERS and (word not in common if known is None else word in known):
                    yield _Fact((SalientToken(SalientKind.WORD, word, WEAK, run),))
                previous, previous_surface, previous_end = word, run, m.end()
                continue
            yield from _read_run(run)
        elif kind == "num":
            fact = _read_number(m)
            if fact is not None:
                yield fact
        elif kind is not None and kind not in ("email", "time"):
            fact = _read_other(kind, m)
            if fact is not None:
                yield fact
        previous = None


def is_common_word(word: str) -> bool:
    """Whether ``word`` is a common English word (of the package's word list)."""
    return word.casefold() in _read_word_lists()[0]


def is_very_common_word(word: str) -> bool:
    """Whether ``word`` is among the thousand or so most common English words (of the package's word list)."""
    return word.casefold() in _read_word_lists()[1]


def _is_rare(word: str) -> bool:
    return len(word) >= _MIN_RARE_LETTERS and word.casefold() not in _read_word_lists()[0]


def _read_pair(first: str, second: str, lookup: bool) -> _Fact | None:
    a, b = first.casefold(), second.casefold()
    if min(len(a), len(b)) < _MIN_PHRASE_LETTERS or a in _FUNCTION_WORDS or b in _FUNCTION_WORDS:
        return None
    if not lookup:
        very_common = _read_word_lists()[1]
        if not (first[0].isupper() and second[0].isupper()) and a in very_common and b in very_common:
            return None
    return _Fact((SalientToken(SalientKind.PHRASE, f"{a} {b}", WEAK, f"{first} {second}"),), (a, b))


def _read_run(run: str) -> Iterator[_Fact]:
    """A run of letters and digits joined by ``-`` or ``_``: an identifier, or words."""
    if len(run) > _MAX_RUN:
        return
    compact = run.replace("-", "").replace("_", "")
    digits = sum(ch.isdigit() for ch in compact)
    if digits == 0:
        for word in re.split(r"[-_]", run):
            if len(word) <= _MAX_WORD and _is_rare(word):
                yield _Fact((SalientToken(SalientKind.WORD, word.casefold(), WEAK, word),))
        return
    if digits == len(compact) or len(compact) < _MIN_IDENTIFIER_CHARS:
        return
    parts = [t for p in _DIGIT_PART.findall(run) if (t := _make_number(p, p, marked=False)) is not None]
    weight = STRONG if digits >= 2 else WEAK
    token = SalientToken(SalientKind.IDENTIFIER, compact.casefold(), weight, run)
    yield _Fact((token, *parts), tuple(t.key for t in parts))


def _read_other(kind: str, m: re.Match[str]) -> _Fact | None:
    """Identifiers in digit groups, IBANs, dates and dotted numbers (versions, addresses)."""
    surface = m.group(kind)
    if kind == "iban":
        return _Fact((SalientToken(SalientKind.IDENTIFIER, surface.replace(" ", "").casefold(), STRONG, surface),))
    if kind == "dotted":
        return _Fact((SalientToken(SalientKind.NUMBER, surface, WEAK, surface),))
    if kind == "mdy":
        dates = [_make_date(m["mdy_y"], _MONTHS.index(m["mdy_m"][:3].lower()) + 1, m["mdy_d"])]
    elif kind == "dmy_name":
        dates = [_make_date(m["dn_y"], _MONTHS.index(m["dn_m"][:3].lower()) + 1, m["dn_d"])]
    elif kind == "iso":
        dates = [_make_date(m["iso_y"], int(m["iso_m"]), m["iso_d"])]
    elif kind == "dmy":
        dates = [
            _make_date(m["dmy_y"], int(m["dmy_b"]), m["dmy_a"]),
            _make_date(m["dmy_y"], int(m["dmy_a"]), m["dmy_b"]),
        ]
    else:
        dates = []
    keys = list(dict.fromkeys(d for d in dates if d is not None))
    if keys:
        tokens = tuple(SalientToken(SalientKind.DATE, key, MEDIUM, surface) for key in keys)
        return _Fact(tokens, tuple(keys[1:]))
    digits = "".join(ch for ch in surface if ch.isdigit())
    if len(digits) < 2 or len(digits) > 2 * _MAX_WORD:
        return None
    return _Fact((SalientToken(SalientKind.IDENTIFIER, digits, STRONG if len(digits) >= 6 else WEAK, surface),))


def _make_date(year: str, month: int, day: str) -> str | None:
    try:
        return date(int(year), month, int(day)).isoformat()
    except ValueError:
        return None


def _read_number(m: re.Match[str]) -> _Fact | None:
    """A number or a range; the multiplier, currency and percent of a range's far end apply to both ends."""
    surface = m.group("num").strip()
    marked = bool(m["cur"] or m["pct"] or m["ccy"])
    end_multiplier = m["bm"] if m["b"] is not None else None
    first = _make_number(m["a"], surface, marked=marked, multiplier=m["am"] or end_multiplier)
    if m["b"] is None:
        return None if first is None else _Fact((first,))
    second = _make_number(m["b"], surface, marked=marked, multiplier=end_multiplier)
    if first is None or second is None:
        end = first or second
        return None if end is None else _Fact((end,))
    ends = (first, second)
    if all(_is_year(t.key) and t.weight == WEAK for t in ends):
        weight = WEAK
    else:
        weight = min(STRONG, max(t.weight for t in ends) + 1)
    key = f"{_canonical(m['a'], m['am'] or end_multiplier)}-{_canonical(m['b'], end_multiplier)}"
    return _Fact((SalientToken(SalientKind.NUMBER, key, weight, surface), *ends), tuple(t.key for t in ends))


def _make_number(text: str, surface: str, *, marked: bool, multiplier: str | None = None) -> SalientToken | None:
    key = _canonical(text, multiplier)
    marked = marked or bool(multiplier) or "," in text or "." in text
    significant = key.replace(".", "").lstrip("0")
    if "." not in key:
        significant = significant.rstrip("0")
    if len(significant) < 2:
        return None
    if len(significant) >= 3 and not (not marked and _is_year(key)):
        weight = STRONG
    elif marked:
        weight = MEDIUM
    else:
        weight = WEAK
    return SalientToken(SalientKind.NUMBER, key, weight, surface)


def _canonical(text: str, multiplier: str | None) -> str:
    """Digits as written for a plain integer (leading zeros are part of an account number); otherwise the
    value, with thousands separators dropped and the multiplier applied."""
    plain = text.replace(",", "")
    if plain.isdigit() and not multiplier and "," not in text:
        return plain
    value = Decimal(plain)
    if multiplier:
        value = _DECIMAL.multiply(value, _MULTIPLIERS[multiplier.strip().lower()])
    return format(value.normalize(_DECIMAL), "f")


def _is_year(key: str) -> bool:
    return len(key) == 4 and key.isdigit() and 1900 <= int(key) <= 2099
