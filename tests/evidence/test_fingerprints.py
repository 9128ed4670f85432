import base64
import binascii
from urllib.parse import quote

from monitor.evidence import MIN_MATCH, FragmentIndex, normalize, winnow
from monitor.evidence._fingerprints import all_kgrams
from monitor.models import Transform

SECRET_MAIL = "Your Facebook security code is 463820. Do not share it with anyone."
REPORT = "Revenue was 12.5M in Q3 for the EU region, and the merger with Acme closes on Friday."


def index() -> FragmentIndex:
    idx = FragmentIndex()
    idx.add("c1", REPORT)
    idx.add_secrets("c2", "body", SECRET_MAIL)
    idx.add_secrets("c3", "api_key", "sk_live_51HxYzABCdef1234567890")
    return idx


def transforms(idx: FragmentIndex, *texts: str, previous: str = "") -> set[tuple[str, Transform]]:
    return {(m.from_call, m.transform) for m in idx.search(texts, previous)}


def test_normalisation_ignores_case_whitespace_and_punctuation() -> None:
    assert normalize("A-b C.d")[0] == "abcd"
    assert transforms(index(), "fyi: REVENUE was 12.5m in q3, for the EU-region!!") == {("c1", Transform.VERBATIM)}


def test_winnowing_finds_every_long_enough_shared_run() -> None:
    norm = normalize(REPORT)[0]
    prints = {h for h, _ in winnow(norm)}
    for start in range(0, len(norm) - MIN_MATCH + 1):
        piece = norm[start : start + MIN_MATCH]
        assert prints & {h for h, _ in all_kgrams(piece)}, piece


def test_decoded_arguments_are_searched() -> None:
    payload = "the merger with Acme closes on Friday"
    idx = index()
    assert ("c1", Transform.BASE64) in transforms(idx, base64.b64encode(payload.encode()).decode())
    assert ("c1", Transform.BASE64) in transforms(idx, base64.urlsafe_b64encode(payload.encode()).decode())
    assert ("c1", Transform.HEX) in transforms(idx, "data=" + binascii.hexlify(payload.encode()).decode())
    assert ("c1", Transform.URL) in transforms(idx, "https://x.example/?q=" + quote(payload))


def test_data_split_across_calls_is_caught() -> None:
    previous = normalize("and the merger w")[0]
    assert ("c1", Transform.SPLIT) in transforms(index(), "ith Acme closes on Friday", previous=previous)
    assert transforms(index(), "ith Acme closes on Friday") == set()


def test_short_secrets_count() -> None:
    assert transforms(index(), "Re: hi — 463820") == {("c2", Transform.SECRET)}
    assert transforms(index(), "key: sk_live_51HxYzABCdef1234567890") == {("c3", Transform.SECRET)}
    assert transforms(index(), "meeting at 4638") == set()


def test_what_the_user_typed_is_not_evidence() -> None:
    idx = index()
    idx.exclude("please send code 463820 and say the merger with Acme closes on Friday", typed_by_user=True)
    assert transforms(idx, "463820: the merger with Acme closes on Friday") == set()


def test_unrelated_text_does_not_match() -> None:
    assert transforms(index(), "Hi Bob, lunch on Thursday at noon? Best, Emma") == set()


def test_memory_is_bounded_and_truncation_is_reported() -> None:
    idx = FragmentIndex(max_fingerprints=20)
    idx.add("c1", " ".join(f"sentence {i} about topic {i * 31}" for i in range(100)))
    assert len(idx) == 20 and idx.truncated
