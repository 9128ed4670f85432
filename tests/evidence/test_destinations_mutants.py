"""Where a call sends to, pinned case by case: each test fixes one behaviour a reviewer reads in a decision."""

from __future__ import annotations

from typing import Any

from monitor.evidence import (
    MAX_ARGUMENT_DEPTH,
    MAX_ARGUMENT_NODES,
    extract_destinations,
    extract_embedded_urls,
    extract_shell_effects,
    extract_targets,
    find_addresses,
    is_allowlisted,
    is_local_path,
    is_outsider_field,
    is_own_store_write,
    iter_argument_texts,
    mentions_destination,
)
from monitor.models import Destination, DestinationKind


def _named(text: str, kind: DestinationKind, value: str) -> bool:
    return mentions_destination(text, Destination(kind, value, "/to"))


def _name(text: str, value: str) -> bool:
    return _named(text, DestinationKind.NAME, value)


# Sender fields


def test_hyphenated_sender_fields_are_the_senders_choice() -> None:
    """A sender field spelled with hyphens (``Return-Path``, ``From-Address``) is the sender's choice."""
    assert all(is_outsider_field(k) for k in ("Return-Path", "from-address", "author-email", "posted-by"))


def test_a_writers_role_and_identity_in_one_key_is_the_writers_choice() -> None:
    """``owner_username`` of an issue, ``creator_email``, ``Author Login``: the role of whoever wrote the object and
    what identifies them. A bare ``owner`` (a repository's, a file's: often the user) or a role with other words
    (``owner_team_members``) is not."""
    assert all(is_outsider_field(k) for k in ("owner_username", "creator_email", "Author Login", "submitter-id"))
    assert not any(is_outsider_field(k) for k in ("owner", "username", "owner_team_members", "recipient_email"))


# Addresses with letters beyond ASCII


def test_an_address_with_accented_letters_is_read_whole() -> None:
    """An address whose local part has letters beyond ASCII is one address: naming ``jürgen@`` names no
    ``rgen@`` of the same domain."""
    assert list(find_addresses("mail jürgen@x.example or straße@x.example")) == [
        (DestinationKind.EMAIL, "jürgen@x.example"),
        (DestinationKind.EMAIL, "straße@x.example"),
    ]
    assert not _named("mail jürgen@x.example", DestinationKind.EMAIL, "rgen@x.example")
    assert _named("mail jürgen@x.example", DestinationKind.EMAIL, "jürgen@x.example")
    # Scripts written without spaces between words do not glue their text to the address.
    assert list(find_addresses("请发给bob@x.example")) == [(DestinationKind.EMAIL, "bob@x.example")]


# Names as whole words


def test_an_empty_destination_is_never_named() -> None:
    """A destination with no value is named by no text."""
    assert not _name("anything at all", "")
    assert not _named("mail a@x.example", DestinationKind.EMAIL, "")


def test_a_name_at_either_end_of_the_text_is_named() -> None:
    """A name that opens or closes the text is named."""
    assert _name("alice wrote it", "alice")
    assert _name("send it to alice", "alice")
    assert _name("alice", "alice")


def test_a_name_glued_to_a_word_is_not_named() -> None:
    """A name with letters, digits or ``_@`` glued on either side is part of another word."""
    assert not _name("send to xalice", "alice")
    assert not _name("send to alicex", "alice")
    assert not _name("send to alice_x", "alice")
    assert not _name("send to a@alice", "alice")
    assert not _name("post in #team-finance-close", "finance-close")


def test_a_name_followed_by_a_dot_and_a_word_is_not_named() -> None:
    """``alice.b`` is another name than ``alice``; ``alice. b`` ends a sentence on it."""
    assert not _name("open alice.b now", "alice")
    assert not _name("open alice-b now", "alice")
    assert _name("ask alice. b is out", "alice")


def test_every_copy_of_a_name_is_tried() -> None:
    """A name is found at any of its copies, not only the first or the last."""
    assert _name("post in #finance-close. not #finance-close-2026", "finance-close")
    assert _name("xalice alice alicex", "alice")
    assert _name("x### ##", "##")
    assert _name("x###", "##")  # the copy glued to the letter fails, the one after it stands alone


# Addresses of other kinds


def test_an_iban_is_named_in_lower_case() -> None:
    """An IBAN written in lower case names the account."""
    assert _named("pay de89 3704 0044 0532 0130 00 today", DestinationKind.IBAN, "DE89370400440532013000")


def test_a_letter_that_upper_cases_to_ascii_does_not_spell_an_address() -> None:
    """``b\u0131ll@x.example`` (dotless i) is not ``bill@x.example``: only IBANs are read case-blind."""
    assert not _named("mail b\u0131ll@x.example", DestinationKind.EMAIL, "bill@x.example")


def test_a_phone_number_is_named_after_an_address_of_another_kind() -> None:
    """An address of another kind earlier in the text does not hide a phone number or IBAN after it."""
    text = "mail a@x.example, see corp.com, or call +44 20 7946 0123"
    assert _named(text, DestinationKind.PHONE, "+442079460123")
    assert _named("mail a@x.example or pay DE89370400440532013000", DestinationKind.IBAN, "DE89370400440532013000")


def test_a_later_address_of_the_same_kind_is_named() -> None:
    """Every address of the destination's kind is compared, not only the first."""
    assert _named("mail a@x.example or b@x.example", DestinationKind.EMAIL, "b@x.example")
    assert _named("call +1 555 123 4567 or +44 20 7946 0123", DestinationKind.PHONE, "+442079460123")


# Domains


def test_a_domain_is_named_by_its_subdomains() -> None:
    """A URL or an address on a subdomain names its registrable domain."""
    assert _named("see https://files.evil.com/x", DestinationKind.DOMAIN, "evil.com")
    assert _named("see https://files.evil.com/x", DestinationKind.DOMAIN, "files.evil.com")
    assert _named("mail a@mx.evil.com", DestinationKind.DOMAIN, "evil.com")


def test_a_url_glued_to_a_word_does_not_make_an_address() -> None:
    """A URL right after ``bob@evil.`` leaves ``bob@evil.`` an unfinished address, naming no host."""
    assert not _named("write to bob@evil.https://files.example/", DestinationKind.DOMAIN, "evil.xx")
    assert _named("write to bob@evil.https://files.example/", DestinationKind.DOMAIN, "files.example")


def test_a_host_spelled_with_a_foreign_letter_before_an_address_is_named() -> None:
    """``evil.co.uK`` (Kelvin sign) before an e-mail address is the host evil.co.uk; glued to the address, the
    letter is part of the address's local part, as a mail client reads it."""
    assert _named("see evil.co.u\u212a bob@x.example", DestinationKind.DOMAIN, "evil.co.uk")
    assert _named("see evil.co.u\u212a,bob@x.example", DestinationKind.DOMAIN, "evil.co.uk")
    assert not _named("see evil.co.u\u212abob@x.example", DestinationKind.DOMAIN, "evil.co.uk")


# Embedded URLs


def test_shell_commands_carry_no_embedded_images() -> None:
    """A command that writes markdown is run, not rendered: its images are not fetched by a renderer."""
    assert extract_embedded_urls({"command": "echo '![x](https://img.evil.example/a.png)' > README.md"}) == []
    assert extract_embedded_urls({"Command": "echo '<img src=https://img.evil.example/a.png>'"}) == []


def _embedded(text: str) -> list[tuple[str, str, str, bool, str]]:
    return [(d.kind, d.value, d.path, d.keyed, url) for d, url in extract_embedded_urls({"text": text})]


def test_each_kind_of_embedded_url_is_found_alone() -> None:
    """A markdown image, an HTML ``src`` and a CSS ``url()`` are each fetched on their own."""
    md = "https://img.a.example/s.png?d=x"
    assert _embedded(f"status ![s]({md})") == [("domain", "img.a.example", "/text", False, md)]
    src = "https://b.example/p?q"
    assert _embedded(f"<img SRC='{src}'>") == [("domain", "b.example", "/text", False, src)]
    css = "https://t.evil.example/p?d=1"
    assert _embedded(f"<div style=\"background:URL('{css}')\">") == [("domain", "t.evil.example", "/text", False, css)]


def test_an_embedded_url_is_reported_once_under_its_first_argument() -> None:
    """The same image in two arguments is one fetch, reported under the first argument that has it."""
    found = extract_embedded_urls(
        {"title": "plain", "a": "![x](https://img.e.example/p.png)", "b": "![y](https://img.e.example/p.png)"}
    )
    assert [(d.path, url) for d, url in found] == [("/a", "https://img.e.example/p.png")]


def test_embedded_urls_with_no_host_reach_nobody() -> None:
    """An inline ``data:`` image names no host: nothing is fetched from anyone."""
    assert extract_embedded_urls({"text": "![x](data:image/png;base64,AAAA) <img src='data:,x'>"}) == []


def test_user_information_in_a_url_is_no_address() -> None:
    """``https://bank.example@evil.example`` reaches evil.example; ``bank.example@evil.example`` is no mailbox."""
    assert list(find_addresses("open https://bank.example@evil.example/login")) == [
        (DestinationKind.DOMAIN, "evil.example")
    ]


def test_an_iban_written_in_groups_is_one_account() -> None:
    """An IBAN written in groups of four is the account number without its spaces."""
    assert list(find_addresses("IBAN DE89 3704 0044 0532 0130 00.")) == [
        (DestinationKind.IBAN, "DE89370400440532013000")
    ]


def test_a_host_spelled_with_a_foreign_letter_before_an_address_is_found() -> None:
    """``evil.co.uK`` (Kelvin sign) before an e-mail address is found as the domain evil.co.uk."""
    found = list(find_addresses("see evil.co.u\u212a,bob@x.example"))
    assert found == [(DestinationKind.EMAIL, "bob@x.example"), (DestinationKind.DOMAIN, "evil.co.uk")]


def test_a_url_with_no_host_names_no_domain() -> None:
    """``https://`` with nothing after it names no domain."""
    assert list(find_addresses("see https:// for details")) == []


# Where a call sends to


def _dest(kind: DestinationKind, value: str, path: str, keyed: bool = True) -> Destination:
    return Destination(kind, value, path, keyed)


def test_a_rule_names_where_a_call_sends_by_argument_path() -> None:
    """Values under a rule's destination path (dotted or slashed) are destinations; a look-alike sibling is not."""
    arguments = {"payload": {"target": {"addr": "x@evil.example"}, "targets": "y@evil.example"}, "body": "a@b.example"}
    expected = [_dest(DestinationKind.EMAIL, "x@evil.example", "/payload/target/addr")]
    for extra in ("payload.target", "/payload/target/", "payload.target.addr", "payload//target"):
        assert extract_destinations(arguments, [extra]) == expected, extra


def test_a_command_sends_to_the_hosts_it_reaches() -> None:
    """A command sends to the registrable domains of the hosts it reaches; later arguments are still read."""
    arguments = {"Command": "curl https://api.evil.com/x", "to": "bob@x.example", "note": "c@d.example"}
    assert extract_destinations(arguments) == [
        _dest(DestinationKind.DOMAIN, "evil.com", "/Command"),
        _dest(DestinationKind.EMAIL, "bob@x.example", "/to"),
    ]


def test_every_host_address_and_name_is_a_destination_of_its_own() -> None:
    """Each host of a command and each address or name in a call is a destination of its own."""
    command = extract_destinations({"command": "curl https://a.evil.com/x && wget https://b.other.com/y"})
    assert [d.value for d in command] == ["evil.com", "other.com"]
    assert [d.value for d in extract_destinations({"to": ["a@x.example", "b@y.example"]})] == [
        "a@x.example",
        "b@y.example",
    ]
    assert [d.value for d in extract_destinations({"to": ["Alice", "Bob"]})] == ["alice", "bob"]
    assert [d.value for d in extract_destinations({"body": "a@x.example, b@y.example"})] == [
        "a@x.example",
        "b@y.example",
    ]


def test_a_recipient_with_no_address_is_a_name() -> None:
    """A recipient value with no address in it is a name, its white space folded; a blank one is nothing."""
    assert extract_destinations({"to": " Alice \n Smith ", "cc": "  "}) == [
        _dest(DestinationKind.NAME, "alice smith", "/to")
    ]
    assert extract_destinations({"to": "  "}) == []


def test_addresses_in_content_are_reported_unkeyed_once() -> None:
    """With no recipient argument, content addresses are unkeyed destinations, each once, at their first path."""
    arguments = {"body": "see https://files.evil.com/x or https://files.evil.com/y", "note": "https://evil.com"}
    assert extract_destinations(arguments) == [_dest(DestinationKind.DOMAIN, "evil.com", "/body", keyed=False)]
    assert extract_destinations({"to": "a@x.example", "cc": ["A@x.example"]}) == [
        _dest(DestinationKind.EMAIL, "a@x.example", "/to")
    ]


# Allowlists


def _allowed(kind: DestinationKind, value: str, *allowlist: str) -> bool:
    return is_allowlisted(Destination(kind, value, "/to"), allowlist)


def test_an_allowlisted_domain_covers_its_addresses_and_subdomains() -> None:
    """An allowlisted domain covers e-mail addresses at it and its subdomains, written with or without www."""
    assert _allowed(DestinationKind.EMAIL, "bob@corp.com", "corp.com")
    assert _allowed(DestinationKind.EMAIL, "bob@mail.corp.com", "Corp.com")
    assert _allowed(DestinationKind.EMAIL, "bob@corp.com", "www.corp.com")
    assert _allowed(DestinationKind.DOMAIN, "corp.com", "WWW.corp.com")
    assert not _allowed(DestinationKind.EMAIL, "bob@evilcorp.com", "corp.com")


def test_an_allowlisted_address_covers_itself_only() -> None:
    """An allowlisted e-mail address covers that address, not others at its domain."""
    assert _allowed(DestinationKind.EMAIL, "bob@corp.com", "bob@corp.com")
    assert not _allowed(DestinationKind.EMAIL, "eve@corp.com", "bob@corp.com")


def test_the_domain_of_an_address_follows_its_last_at_sign() -> None:
    """``"x@corp.com"@evil.example`` is delivered by evil.example, not corp.com."""
    assert not _allowed(DestinationKind.EMAIL, '"x@corp.com"@evil.example', "corp.com")
    assert _allowed(DestinationKind.EMAIL, '"x@evil.example"@corp.com', "corp.com")


def test_an_allowlisted_domain_does_not_cover_a_name_with_an_at_sign() -> None:
    """A plain name such as ``team@corp`` is no address at the allowlisted domain ``corp``."""
    assert not _allowed(DestinationKind.NAME, "team@corp", "corp")


# Targets


def test_targets_are_read_under_target_keys_after_other_arguments() -> None:
    """A file path after other arguments is the place the call writes to, under its own argument path."""
    targets = extract_targets({"body": "hello", "Path": "notes/a.md", "title": "x"})
    assert targets == [Destination(DestinationKind.PATH, "notes/a.md", "/Path")]


def test_blank_and_overlong_target_values_are_no_targets() -> None:
    """A blank value, or one over 1024 characters, names no place; 1024 characters still do."""
    assert extract_targets({"path": "   "}) == []
    assert extract_targets({"path": "a" * 1025}) == []
    assert extract_targets({"path": "a" * 2000}) == []
    assert [t.value for t in extract_targets({"path": "a" * 1024})] == ["a" * 1024]


def test_text_over_several_lines_is_no_local_path() -> None:
    """A value with a line break is text, not a local path."""
    assert is_local_path("src/a.py")
    assert not is_local_path("src/a.py\nrm -rf /")


# Arguments read in bulk


def _deep(leaf: Any, key: str = "d", depth: int = MAX_ARGUMENT_DEPTH + 1) -> Any:
    for _ in range(depth):
        leaf = {key: leaf}
    return leaf


def test_containers_nested_too_deep_are_read_whole_in_bulk() -> None:
    """Past the depth bound, strings and numbers are read as one text, once per kind of key found inside."""
    leaf = {"to": ["a@evil.example", {"cc": "b@evil.example"}], "n": 7, "f": True, "z": None, "note": "hi", "path": "a"}
    texts = list(iter_argument_texts({"x": _deep(leaf)}))
    bulk = "a@evil.example\nb@evil.example\n7\nhi\na"
    path = texts[0][0]
    assert path.startswith("/x/d/d/d")
    assert texts == [(path, "d", bulk), (path, "to", bulk), (path, "path", bulk)]


def test_bulk_text_is_not_read_twice_under_keys_of_one_kind() -> None:
    """A bulk text under a recipient key is not read again under another recipient key inside it."""
    texts = list(iter_argument_texts(_deep({"cc": "b@evil.example"}, key="To")))
    assert [(key, text) for _, key, text in texts] == [("To", "b@evil.example")]


def test_top_level_arguments_past_the_node_budget_are_read_under_the_root() -> None:
    """Top-level arguments past the node budget are read in bulk under ``/``, recipients included."""
    arguments: dict[str, Any] = {f"k{i}": f"v{i}" for i in range(MAX_ARGUMENT_NODES + 10)}
    arguments["to"] = "evil@attacker.example"
    texts = list(iter_argument_texts(arguments))
    assert [(path, key) for path, key, _ in texts[-2:]] == [("/", ""), ("/", "to")]
    assert Destination(DestinationKind.EMAIL, "evil@attacker.example", "/") in extract_destinations(arguments)


# Own places and shell commands


def test_tools_that_write_the_users_own_things_are_told_apart() -> None:
    """Writing a file, note, event or draft is the user's own; reading, or writing what others read, is not."""
    for tool in ("create_file", "createNote", "CreateDraft", "CREATE_FILE", "calendar.addEvent"):
        assert is_own_store_write(tool), tool
    for tool in ("read_file", "list_files", "save_settings", "create_issue", "post_message", "add_comment_to_file"):
        assert not is_own_store_write(tool), tool


def test_only_values_under_command_keys_are_run_as_commands() -> None:
    """A command under a command key (any case) is parsed for the hosts it reaches; prose and blanks are not."""
    effects = extract_shell_effects(
        {"body": "curl https://a.example", "Command": "curl https://b.example/x", "cmd": " "}
    )
    assert [(path, e.hosts) for path, e in effects] == [("/Command", ("b.example",))]


def test_scalar_arguments_are_read_under_the_root() -> None:
    """A lone string or number is read under ``/``; list items under their index; flags and nulls are skipped."""
    assert list(iter_argument_texts("hello")) == [("/", "", "hello")]
    assert list(iter_argument_texts(5)) == [("/", "", "5")]
    assert list(iter_argument_texts(["a", 1.5, True, None])) == [("/0", "", "a"), ("/1", "", "1.5")]
    assert list(iter_argument_texts({"n": [7]})) == [("/n/0", "n", "7")]


def test_the_depth_bound_is_exact() -> None:
    """Containers nested up to the depth bound are walked value by value; one level more is read in bulk."""
    walked = list(iter_argument_texts(_deep({"a": "x", "b": "y"}, depth=MAX_ARGUMENT_DEPTH - 1)))
    assert [(key, text) for _, key, text in walked] == [("a", "x"), ("b", "y")]
    bulk = list(iter_argument_texts(_deep({"a": "x", "b": "y"}, depth=MAX_ARGUMENT_DEPTH)))
    assert [(key, text) for _, key, text in bulk] == [("d", "x\ny")]


def test_the_node_budget_is_exact() -> None:
    """Arguments of exactly the node budget are walked value by value; one value more is read in bulk."""
    walked = list(iter_argument_texts({f"k{i}": "v" for i in range(MAX_ARGUMENT_NODES - 1)}))
    assert all(path == f"/{key}" for path, key, _ in walked)
    assert len(walked) == MAX_ARGUMENT_NODES - 1
    over = list(iter_argument_texts({f"k{i}": "v" for i in range(MAX_ARGUMENT_NODES)}))
    assert over[-1] == ("/", "", "v")
    assert len(over) == MAX_ARGUMENT_NODES


def test_nested_arguments_past_the_node_budget_are_read_under_their_container() -> None:
    """Values left over once the node budget is spent are read in bulk under the container that holds them."""
    texts = list(iter_argument_texts({"items": [{"note": f"n{i}"} for i in range(MAX_ARGUMENT_NODES)]}))
    path, key, bulk = texts[-1]
    assert (path, key) == ("/items", "items")
    assert f"n{MAX_ARGUMENT_NODES - 1}" in bulk.split("\n")


# Keys that name a recipient


def test_a_key_ending_in_a_recipient_word_names_a_recipient() -> None:
    """``collaborator_email``, ``reply_to``, ``callbackUrl``: the last word of a key says it names a recipient;
    a word inside a key does not (``email_subject``, ``url_count``), nor does a key of one other word."""
    found = extract_destinations(
        {"collaborator_email": "a@x.example", "reply_to": "b@y.example", "callbackUrl": "https://c.example/h"}
    )
    assert {(d.value, d.keyed) for d in found} == {("a@x.example", True), ("b@y.example", True), ("c.example", True)}
    found = extract_destinations({"email_subject": "see a@x.example", "url_count": "https://c.example/h"})
    assert all(not d.keyed for d in found)
    # The account the call acts as is not a recipient.
    found = extract_destinations({"user_google_email": "me@x.example", "sender_email": "me@x.example"})
    assert all(not d.keyed for d in found)
    assert [d.keyed for d in extract_destinations({"host": "db.corp.example"})] == [True]


# Account numbers


def test_an_account_number_is_named_whatever_its_case_and_the_words_after_it() -> None:
    """An IBAN is named by its characters in order, in groups or not, in any case; the words after it are not
    more of its groups, and a longer number is not it."""
    iban = "DE8937040044"
    assert _named("Bank Account Number: DE8937040044 Bank Account Password: x", DestinationKind.IBAN, iban)
    assert _named("bank account number: de8937040044 bank account password: x", DestinationKind.IBAN, iban)
    assert _named("pay to DE89 3704 0044 today", DestinationKind.IBAN, iban)
    assert not _named("pay to DE893704004412 today", DestinationKind.IBAN, iban)
    assert not _named("pay to XDE8937040044 today", DestinationKind.IBAN, iban)
