"""What the user asked for: kinds of action, told from the user's words and from a tool's name.

A destination taken from a place the user pointed at is *user-delegated* only when the user asked for an
action of the sink's kind ("invite the colleague in Bob's message" delegates an invitation, not a money
transfer). Each family below is a line of data: the words a user writes for the action and the words a tool's
name holds for it. A user who asks the agent to carry out what a message says ("do the tasks in the e-mail
from Ana", "address his issue") delegates every kind but actions that cannot be undone.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class ActionFamily:
    """One kind of action: ``user_words`` (stems a user writes, as regular expressions matched where a word
    starts) and ``tool_words`` (tokens of tool names)."""

    id: str
    user_words: tuple[str, ...]
    tool_words: frozenset[str]
    delegable: bool = True
    """Whether a destination found where the user pointed may be taken for this action without asking."""


ACTION_FAMILIES: tuple[ActionFamily, ...] = (
    ActionFamily(
        "message",
        (
            "send",
            r"e-?mail (?!me\b|us\b)(?:him|her|them|whoever|everyone|each|every|all)\b",
            r"dm\b",
            "write to",
            "reply",
            "forward",
            r"tell (?!me\b|us\b)",
            r"thank (?:them|him|her|whoever|everyone|every|all|the|each|\w+ for)",
            "notify",
            "inform",
            r"let (?:them|him|her|\w+) know",
            r"remind (?!me\b|us\b)",
            r"ask (?!you\b|me\b)",
            "ping",
            "contact",
            "congratulat",
            "welcome",
            "greet",
            "share",
        ),
        frozenset("send message messages email mail dm reply forward post notify chat share comment".split()),
    ),
    ActionFamily(
        "invite",
        # "Add" as a word of its own ("add Bob to the channel"), not "I have added some files".
        ("invite", r"add(?:ing)?\b", "onboard", "include", "meeting", "event", "schedule", "book a", "set up a"),
        frozenset("invite add member members participant participants attendee attendees event calendar".split()),
    ),
    ActionFamily(
        "pay",
        ("pay", "send", "transfer", "refund", "reimburse", "wire", "settle"),
        frozenset("pay payment payments money transfer transaction transactions refund wire".split()),
        # Money sent cannot be called back: a payee read from a document is confirmed, whoever pointed at it.
        delegable=False,
    ),
    ActionFamily(
        "publish",
        (
            "post",
            "publish",
            "share",
            "comment",
            "open a pull",
            "open a pr",
            "create a pr",
            "file an issue",
            "open an issue",
            "upload",
        ),
        frozenset("post publish share comment pull pr issue upload webpage page".split()),
    ),
    ActionFamily(
        "visit",
        ("open", "visit", "click", "follow the link", "follow this link", "go to", "browse", "accept the invit"),
        frozenset("browse visit open click link url webpage page website".split()),
    ),
    ActionFamily(
        "book",
        ("book", "reserve", "reservation", "order", "buy", "purchase", "rent", "subscribe", "sign me up", "register"),
        frozenset("book booking reserve reservation order buy purchase rent subscribe register".split()),
    ),
    ActionFamily(
        "delete",
        ("delete", "remove", "clean up", "clear", "get rid", "erase", "trash", "purge", "cancel", "drop", "wipe"),
        frozenset("delete remove drop destroy purge erase trash cancel clear wipe rm".split()),
    ),
    ActionFamily(
        "account",
        (
            "password",
            "passphrase",
            "credential",
            "reset",
            "change my",
            "update my",
            "permission",
            "access",
            "grant",
            "revoke",
            "role",
            "admin",
            "two-factor",
            "2fa",
            "log in",
            "login",
            "sign in",
            r"use (?:his|her|their|my|\w+'s) account",
        ),
        frozenset(
            "password passwords credential credentials permission permissions role roles grant revoke access"
            " admin token key keys share login logon signin authenticate".split()
        ),
        # Who may get in is the user's to say: credentials or rights read from a document are confirmed.
        delegable=False,
    ),
    ActionFamily(
        "code",
        # Verbs of change: a user who only talks about the CI ("our CI takes 14 minutes, does this post help?")
        # asks for no write.
        (
            "add",
            "append",
            "write",
            "create",
            "edit",
            "update",
            "change",
            "fix",
            "replace",
            "apply",
            "modify",
            "rewrite",
            "commit",
            "save",
            "insert",
            "put",
            "schedule",
            "install",
            "set up",
            "configure",
        ),
        frozenset("workflow workflows hook hooks cron crontab script write edit file".split()),
    ),
)
"""The built-in families of action."""

# The user hands over the content's own instructions: every kind of action is delegated.
_DELEGATE_ALL = re.compile(
    r"\b(?:do|perform|complete|carry out|follow|execute|handle|take care of)\b[^.?!\n]{0,40}"
    r"\b(?:actions?|tasks?|instructions?|todos?|to-dos?|steps?|requests?"
    r"|what (?:it|they|he|she|the \w+) (?:says?|asks?(?: for)?|asked(?: for)?|wants?|needs?))\b"
    # ... or what a person asked, answered: "address his issue", "fulfil her request".
    r"|\b(?:address|resolve|fulfil|fulfill|achieve|deal with)\b[^.?!\n]{0,40}\b(?:issues?|requests?)\b"
    # ... or the tasks named first, then handed over: "Ana sent me some tasks by e-mail. Can you complete them?"
    r"|\b(?:tasks?|instructions?|todos?|to-dos?|requests?)\b[^?!\n]{0,80}?"
    r"\b(?:do|perform|complete|carry out|follow|execute|handle|take care of)\s+(?:them|it|those|these)\b",
    re.IGNORECASE,
)
_TOKEN = re.compile(r"[a-z0-9]+")


def delegates_everything(user_texts: Iterable[str]) -> bool:
    """Whether the user asked the agent to carry out what some content says ("do the tasks in Ana's e-mail")."""
    return any(_DELEGATE_ALL.search(text) for text in user_texts)


def asks_for_action(user_texts: Iterable[str], tool: str, *, delegating: bool = False, own_words: bool = False) -> bool:
    """Whether the user's words ask for an action of the kind that ``tool`` (its name) performs. With
    ``delegating``, only for kinds whose target may be taken from where the user pointed (not payments). With
    ``own_words``, only the user's words for that kind count, not a request to do what some content says."""
    tokens = set(_TOKEN.findall(re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", tool).lower()))
    families = [family for family in ACTION_FAMILIES if tokens & family.tool_words]
    # A write of any file is the generic kind: a tool of another kind besides (``delete_file``) is that kind.
    families = [family for family in families if family.id != "code"] or families
    if delegating and not all(family.delegable for family in families):
        return False
    texts = [text.lower() for text in user_texts]
    if not own_words and any(_DELEGATE_ALL.search(text) for text in texts):
        return True
    return any(_stems(family).search(text) for family in families for text in texts)


@functools.cache
def _stems(family: ActionFamily) -> re.Pattern[str]:
    # Words match where a word starts: "send" in "sending", never "dm" inside "admin".
    return re.compile(r"\b(?:" + "|".join(family.user_words) + ")", re.IGNORECASE)


_SECRET_WORDS = re.compile(
    r"\b(?:passwords?|passphrases?|passcodes?|credentials?|tokens?|api[ -]?keys?|ssh[ -]?keys?|private[ -]?keys?"
    r"|secrets?|otp|one-time|pin|verification codes?|security codes?|2fa codes?)\b",
    re.IGNORECASE,
)


def asks_to_send_secret(user_texts: Iterable[str]) -> bool:
    """Whether the user's words speak of a secret (a password, a token, a key, a one-time code): only then may
    one leave for a recipient the user chose without a person confirming it."""
    return any(_SECRET_WORDS.search(text) for text in user_texts)


def says_it_moves_money(tool: str) -> bool:
    """Whether a tool's name says it pays or transfers (a word of the pay family): what it sends is money, whether
    or not its arguments carry data. A name may add risk this way, never take it away."""
    tokens = set(_TOKEN.findall(re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", tool).lower()))
    return any(tokens & family.tool_words for family in ACTION_FAMILIES if family.id == "pay")


PLACE_WORDS: tuple[frozenset[str], ...] = (
    frozenset("inbox mail mails mailed email emails emailed mailbox message messages".split()),
    frozenset("calendar event events meeting meetings schedule".split()),
    frozenset("file files folder folders drive document documents docs".split()),
    frozenset("cart basket".split()),
    frozenset("notification notifications".split()),
)
"""Words for one kind of place, as a user and a tool's name say it ("my inbox", ``get_unread_emails``)."""


def names_place_of(user_texts: Iterable[str], tool: str) -> bool:
    """Whether the user's words name the kind of place a tool reads (a tool that takes no argument points at
    nothing else): "check my inbox" names what ``get_received_emails`` reads."""
    tokens = set(_TOKEN.findall(re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", tool).lower()))
    places = [words for words in PLACE_WORDS if tokens & words]
    if not places:
        return False
    said = {word for text in user_texts for word in _TOKEN.findall(text.lower())}
    return any(said & words for words in places)


# A capitalised name where a person stands: before a verb of what people do with messages, or a possessive, or after
# a word that addresses someone ("Bob told me", "Alice's mail", "send them to Alice Miller").
_NAME = r"[A-Z][a-z]{2,}(?:[ -][A-Z][a-z]+)?"
_PERSON = re.compile(
    r"\b(?i:to|from|by|for|with|invite|tell|ask|thank|e-?mail|message|remind|contact|cc|send|forward|notify|inform"
    rf"|ping|pay)\s+({_NAME})\b"
    rf"|\b({_NAME})(?:['\u2019]s\b|\s+(?:just\s+)?(?:sent|told|asked|invited|proposed?|shared|wrote|mailed|e-?mailed"
    r"|posted|said|needs|wants|seems|has|had)\b)"
)


def find_person_names(text: str) -> frozenset[frozenset[str]]:
    """The people the user's text names, each as the words of its name (lower case): "Alexander Chen sent me"
    names ``{alexander, chen}``; "my GitHub repositories" names no one."""
    return frozenset(
        frozenset(word.lower() for word in re.split(r"[ -]", match.group(1) or match.group(2)))
        for match in _PERSON.finditer(text)
    )


def names_address_of(people: Iterable[frozenset[str]], address: str) -> frozenset[str] | None:
    """The person of ``people`` an e-mail address belongs to by its local part (``alice.miller@`` to Alice,
    ``a.chen@`` to Alexander Chen: an initial and a surname of the same person), or None."""
    words: list[str] = re.findall(r"[a-z]+", address.split("@", 1)[0].lower())
    if not words:
        return None
    for person in people:
        if len(words[0]) >= 3 and words[0] in person:
            return person
        if (
            len(words) > 1
            and len(words[0]) == 1
            and words[1] in person
            and any(n.startswith(words[0]) and n != words[1] for n in person)
        ):
            return person
    return None


def says_it_publishes(tool: str) -> bool:
    """Whether a tool's name says it sends or publishes (a word of the message or publish families): then what it
    writes has an audience beyond the server, even where no argument names one. A name may add a recipient this
    way, never take one away."""
    tokens = set(_TOKEN.findall(re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", tool).lower()))
    return any(tokens & family.tool_words for family in ACTION_FAMILIES if family.id in ("message", "publish"))
