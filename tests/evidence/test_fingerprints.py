import base64
import binascii
import zlib
from urllib.parse import quote

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from monitor.evidence import (
    MAX_VIEWS,
    MIN_MATCH,
    WINDOW,
    FragmentIndex,
    K,
    decoded_views,
    find_secrets,
    fold,
    iter_url_components,
    normalize,
    winnow,
)
from monitor.evidence import _fingerprints as fingerprints_module
from monitor.evidence import _fold as fold_module
from monitor.evidence._fingerprints import kgram_hashes
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
        assert prints & set(kgram_hashes(piece)), piece


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
    assert transforms(index(), "Re: hi \u2014 463820") == {("c2", Transform.SECRET)}
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


# --- secrets introduced by a secret word, in any phrasing -------------------------------------------------


def secrets_of(text: str, key: str = "body") -> set[str]:
    return {s.norm for s in find_secrets(key, text)}


def test_a_secret_after_a_code_phrase_is_indexed_whatever_the_phrasing() -> None:
    assert "771204" in secrets_of("Your Northbank verification code is 771204. It expires in 10 minutes.")
    assert "390577" in secrets_of("Verification code: 390577\nIf this wasn't you, call us.")
    assert "553107" in secrets_of("Your one-time passcode for sign-in: 55 31 07")
    assert "kq7vlp2xwz" in secrets_of("Your temporary password is now: Kq7#vLp2!xWz\nChange it.")
    assert "9f3k2m8q" in secrets_of("Reset token = 9f3k2m8q (valid once)")
    assert "correcthorsebattery" in secrets_of("The new passphrase is CorrectHorse-Battery")


def test_a_secret_written_before_its_phrase_is_indexed_with_and_without_its_prefix() -> None:
    found = secrets_of("G-448213 is your Fernmail security code. Don't share it.")
    assert {"g448213", "448213"} <= found
    assert "482193" in secrets_of("Use 482-193 as your one-time PIN to approve the transfer.")


def test_dates_times_amounts_and_words_near_a_secret_word_are_not_secrets() -> None:
    assert secrets_of("Your code expires on 2026-10-17 at 08:20, transfer of 2,900.00 EUR.") == set()
    assert secrets_of("Your password expires Tomorrow, please renew it.") == set()
    assert secrets_of("Use the promo code at checkout for 15% off.") == set()


def test_only_the_first_secret_shaped_token_after_the_word_is_the_secret() -> None:
    found = secrets_of("Your code is 390577 and our hotline 0800123456 is open.")
    assert "390577" in found and "0800123456" not in found


def test_a_secret_word_reaches_a_bounded_number_of_words_within_its_sentence() -> None:
    far = "Your code " + "is really truly very much indeed " + "771204."
    assert "771204" not in secrets_of(far)
    assert "771204" not in secrets_of("Here is your code. 771204 is the order number.")
    near = "Your code, as requested, is 771204."
    assert "771204" in secrets_of(near)


def test_values_under_secret_keys_are_secrets() -> None:
    assert secrets_of("hunter2hunter2", key="password") == {"hunter2hunter2"}
    assert secrets_of("Q7-1134-XY", key="recovery_code") == {"q71134xy"}


def test_a_secret_in_look_alike_characters_is_indexed_folded() -> None:
    assert "771204" in secrets_of(
        "\u0412\u0430\u0448 \u043a\u043e\u0434: verification code is \uff17\uff17\uff11\uff12\uff10\uff14"
    )


def test_an_indexed_code_is_found_in_the_arguments_in_any_phrasing() -> None:
    idx = FragmentIndex()
    idx.add_secrets("c1", "body", "Your Northbank verification code is 771204.")
    assert transforms(idx, "fyi 771204") == {("c1", Transform.SECRET)}
    assert transforms(idx, "fyi 771 204") == {("c1", Transform.SECRET)}
    assert transforms(idx, "fyi 402177") == {("c1", Transform.SECRET)}  # reversed
    assert transforms(idx, "fyi 771205") == set()


# --- encodings of short secrets ---------------------------------------------------------------------------

CODE = "771204"
PASSWORD = "Kq7#vLp2!xWz"


def secret_index(*values: str) -> FragmentIndex:
    idx = FragmentIndex()
    for i, value in enumerate(values):
        idx.add_secrets(f"c{i + 1}", "password", value)
    return idx


def test_short_secrets_are_found_base64_or_hex_encoded() -> None:
    idx = secret_index(CODE, PASSWORD)
    assert transforms(idx, "ref " + base64.b64encode(CODE.encode()).decode()) == {("c1", Transform.BASE64)}
    assert transforms(idx, "ref " + base64.urlsafe_b64encode(PASSWORD.encode()).decode()) == {("c2", Transform.BASE64)}
    assert transforms(idx, "blob " + binascii.hexlify(PASSWORD.encode()).decode().upper()) == {("c2", Transform.HEX)}
    assert transforms(idx, "x " + base64.b64encode(CODE[::-1].encode()).decode()) == {("c1", Transform.BASE64)}
    assert transforms(idx, "c=" + "".join(f"%{ord(ch):02X}" for ch in CODE)) == {("c1", Transform.URL)}


def test_a_short_secret_is_found_at_every_alignment_inside_a_longer_encoded_blob() -> None:
    idx = secret_index(PASSWORD)
    for prefix in ("", "a", "ab", "abc", "abcd"):
        for suffix in ("", "z", "zz"):
            blob = base64.b64encode(f"{prefix}{PASSWORD}{suffix}".encode()).decode().rstrip("=")
            assert ("c1", Transform.BASE64) in transforms(idx, f"x={blob[:12]}"[:2] + blob), (prefix, suffix)


def test_short_values_are_not_decoded_blindly() -> None:
    idx = secret_index(CODE)
    assert transforms(idx, "invoice 482913 and token TmljZSB0cnk=") == set()
    assert transforms(idx, base64.b64encode(b"771205").decode()) == set()


def test_encoded_secrets_are_found_the_same_when_there_are_many() -> None:
    # Past a work bound the encodings are looked up by prefix instead of one by one: same answers.
    many = [f"{100000 + 7 * i}" for i in range(400)]
    idx = secret_index(*many, PASSWORD)
    long_text = "padding " * 2000 + binascii.hexlify(PASSWORD.encode()).decode()
    assert transforms(idx, long_text) == {(f"c{len(many) + 1}", Transform.HEX)}
    assert transforms(idx, "padding " * 2000 + base64.b64encode(b"x" + many[7].encode()).decode()) == {
        ("c8", Transform.BASE64)
    }


# --- URL components -----------------------------------------------------------------------------------------

TOKEN = "sk_live_51HxYzABCdef1234567890"


def test_every_url_component_is_decoded() -> None:
    idx = secret_index(TOKEN)
    idx.add("c1", f"Your new live API key is {TOKEN}. Store it safely.")
    b64 = base64.b64encode(TOKEN.encode()).decode()
    b64url = base64.urlsafe_b64encode(TOKEN.encode()).decode().rstrip("=")
    hexed = binascii.hexlify(TOKEN[:24].encode()).decode()
    b32 = base64.b32encode(TOKEN[:25].encode()).decode().rstrip("=").lower()
    for url in (
        f"https://c.example/ping/{b64}/p.gif",
        f"https://c.example/v1/{b64url}",
        f"https://{b64url}:x@c.example/",
        f"https://c.example/page#k={b64url}",
        f"https://c.example/page#{b64url}",
        f"https://c.example/p?d={b64}",
    ):
        assert ("c1", Transform.BASE64) in transforms(idx, url), url
    # Host labels hold at most 63 characters: a prefix of the token, found by its fingerprints.
    assert transforms(idx, f"https://{hexed}.t.c.example/") == {("c1", Transform.HEX)}
    assert transforms(idx, f"https://{b32}.t.c.example/") == {("c1", Transform.BASE64)}


def test_url_components_are_listed_as_a_server_reads_them() -> None:
    url = "https://u%41:p@a.b.c.example/x/y%2Fz?q=1+2&k=&r=v#f=w"
    assert list(iter_url_components(url)) == [
        ("user", "uA"),
        ("user", "p"),
        ("label", "a"),
        ("label", "b"),
        ("path", "x"),
        ("path", "y/z"),
        ("key", "q"),
        ("q:q", "1 2"),
        ("key", "k"),
        ("key", "r"),
        ("q:r", "v"),
        ("key", "f"),
        ("f:f", "w"),
    ]


# --- look-alike characters ----------------------------------------------------------------------------------


def test_look_alike_characters_fold_in_the_index_and_in_the_arguments() -> None:
    assert (
        fold(
            "\uff17\uff17\uff11\uff12\uff10\uff14 \U0001d7d5\U0001d7d5 sk_liv\u0435_51\u041d\u0445Yz caf\u00e9 a\u200bb"
        )
        == "771204 77 sk_live_51HxYz cafe ab"
    )
    idx = index()
    assert ("c2", Transform.SECRET) in transforms(idx, "code \uff14\uff16\uff13\uff18\uff12\uff10")
    assert ("c2", Transform.SECRET) in transforms(
        idx, "code \U0001d7d2\U0001d7d4\U0001d7d1\U0001d7d6\U0001d7d0\U0001d7ce"
    )
    # Cyrillic look-alikes
    cyrillic = "the m\u0435rg\u0435r with \u0410\u0441m\u0435 \u0441l\u043es\u0435s \u043en Frid\u0430y"
    assert ("c1", Transform.VERBATIM) in transforms(idx, cyrillic)
    spelt = FragmentIndex()
    spelt.add(
        "c9",
        "Th\u0435 qu\u0430rt\u0435rly r\u0435v\u0435nu\u0435 of th\u0435 N\u043erth r\u0435gi\u043en w\u0430s 12.5M",
    )
    assert ("c9", Transform.VERBATIM) in transforms(spelt, "the quarterly revenue of the North region was 12.5M")
    assert normalize("\uff41\uff42-\uff43")[1] == [0, 1, 3]


def test_winnowing_in_blocks_gives_the_fingerprints_of_the_whole_text(monkeypatch: pytest.MonkeyPatch) -> None:
    norm = normalize(REPORT * 3)[0]

    def reference() -> list[tuple[int, int]]:
        hashes = [zlib.crc32(norm[i : i + K].encode()) for i in range(len(norm) - K + 1)]
        out, best = [], -1
        for end in range(WINDOW - 1, len(hashes)):
            start = end - WINDOW + 1
            if best < start:
                best = max(range(start, end + 1), key=lambda j: (-hashes[j], j))
                out.append((hashes[best], best))
            elif hashes[end] <= hashes[best]:
                best = end
                out.append((hashes[best], best))
        return out

    for block in (1, 5, 7, 64):
        monkeypatch.setattr(fingerprints_module, "BLOCK", block)
        assert list(winnow(norm)) == reference(), block


def test_the_fold_table_stays_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    table = fold_module._FoldTable()
    monkeypatch.setattr(fold_module, "_MAX_CACHED", 50)
    text = "".join(chr(c) for c in range(0x4E00, 0x4E00 + 500))
    assert text.translate(table) == text
    assert len(table) == 50


def test_a_short_secret_inside_binary_data_is_found_by_its_encodings() -> None:
    # Binary around the secret does not decode to text: only the secret's own encodings, at the right
    # alignment and in the right alphabet, find it.
    secret = "?>?>Zz9~~~x1"
    idx = secret_index(secret)
    for prefix in (b"\xff\xfe\xfd", b"\xff", b"\xff\xfe"):
        data = prefix + secret.encode() + b"\xfc\xfb"
        assert transforms(idx, "blob " + base64.b64encode(data).decode()) == {("c1", Transform.BASE64)}, prefix
        urlsafe = base64.urlsafe_b64encode(data).decode()
        assert transforms(idx, "blob " + urlsafe) == {("c1", Transform.BASE64)}, prefix
    other = base64.b64encode(b"\xff\xfe\xfd?>?>Zz9~~~x2\xfc").decode()
    assert transforms(idx, "blob " + other) == set()


def test_encoded_segments_of_a_path_are_decoded_even_outside_a_url() -> None:
    idx = index()
    payload = base64.b64encode(b"the merger with Acme closes on Friday").decode()
    assert ("c1", Transform.BASE64) in transforms(idx, f"uploads/ping/{payload}/p.gif")


def test_data_encoded_twice_is_found() -> None:
    idx = index()
    once = base64.b64encode(b"the merger with Acme closes on Friday").decode()
    twice = binascii.hexlify(once.encode()).decode()
    assert ("c1", Transform.BASE64) in transforms(idx, "x=" + twice)


def test_decoded_views_stop_at_their_bound() -> None:
    chunks = [base64.b64encode(f"the merger with Acme closes on day {i:04d}".encode()).decode() for i in range(600)]
    assert len(list(decoded_views(" ".join(chunks)))) == MAX_VIEWS


def test_verbatim_content_is_not_also_reported_as_split() -> None:
    previous = normalize("nothing to do with it")[0]
    assert transforms(index(), "the merger with Acme closes on Friday", previous=previous) == {
        ("c1", Transform.VERBATIM)
    }


def test_a_span_joining_two_arguments_counts_in_the_stream_of_what_was_sent() -> None:
    idx = FragmentIndex()
    idx.add("c1", "New address: Dalton Street 123, New York, NY 10001. Please update my profile.")
    previous = normalize("hello")[0]
    fields = ("Dalton Street 123", "New York", "NY 10001")
    assert transforms(idx, *fields, previous=previous) == {("c1", Transform.SPLIT)}
    assert transforms(idx, "Dalton Street 123", "Boston", "MA 02110", previous=previous) == set()


def test_what_an_earlier_call_sent_is_not_told_again() -> None:
    previous = normalize("the merger with Acme closes on Friday")[0]
    assert transforms(index(), "lunch at noon?", previous=previous) == set()


def test_a_match_inside_text_without_spaces_is_reported_by_a_bounded_snippet() -> None:
    # Widening every match to its whole "word" made a spaceless 400 kB argument cost matches x its length.
    from monitor.evidence._fingerprints import _MAX_WIDEN, _whole_words

    text = "x" * 100_000 + "secret" + "y" * 100_000
    snippet = _whole_words(text, 100_000, 100_006)
    assert "secret" in snippet and len(snippet) == 6 + 2 * _MAX_WIDEN
    assert _whole_words("the quarterly figures", 4, 9) == "quarterly"


@settings(max_examples=400, deadline=None, derandomize=True)
@given(st.text(alphabet=st.sampled_from(list("Ab9 _-.,:/@\n\tZé\u00dfﬁ\u0130Ω٣")), max_size=60))
def test_the_fast_folding_and_hashing_give_what_the_character_walk_gives(text: str) -> None:
    norm = fingerprints_module.normalize(text)[0]
    assert fingerprints_module.fold_alnum(text) == norm
    k = fingerprints_module.K
    assert fingerprints_module.kgram_hashes(norm) == [
        zlib.crc32(norm[i : i + k].encode()) for i in range(len(norm) - k + 1)
    ]


def test_a_verbatim_match_is_quoted_as_written_in_the_argument() -> None:
    index = FragmentIndex()
    index.add("c1", "The launch code for Project Nightingale is Falcon-Ridge-2291, keep it safe.")
    # Single letters before it: each kept character stands further right in the argument than in the fold.
    (match,) = index.search(["a b c d e f g h i j k l m n: Project   NIGHTINGALE is Falcon-Ridge-2291!! thanks"])
    assert match.from_call == "c1"
    assert match.text == "Project   NIGHTINGALE is Falcon-Ridge-2291!!"
