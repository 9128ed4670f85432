"""The vocabulary of tool words: the words by which a tool's name or description says it reads, writes, destroys,
sends or runs code, held once, as data, and the sets each reader builds from them.

A word is one line of data: it goes in the one *part* below that says what it means (``ERASE_VERBS``,
``SEND_VERBS``, ...); no word is in two parts. The readers build their sets from the parts, as a union of parts or
as a pick among them (:func:`pick_words` fails at import on a word the parts lack), and list no words of their own:
the heuristics (:mod:`monitor.classify._heuristics`) and the effects (:mod:`monitor.classify._effects`) read a
tool's *name*, split into words; lint (:mod:`monitor.lint`) reads the name and the lead of a *description*, where a
verb is inflected (``deletes``, ``deleting``): :func:`inflect_words` adds those forms. The sets two readers both
need under one meaning (what reads, destroys, writes, sends) are named here side by side; where they differ, a
comment says why.

Words about what a tool touches (stores, credentials, paths, schema properties) are not tool words: they stay with
the reader that uses them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable


def split_words(text: str) -> frozenset[str]:
    """Return the words of ``text``, split on white space."""
    return frozenset(text.split())


def pick_words(part: frozenset[str], text: str) -> frozenset[str]:
    """Return the words of ``text``, each of which must be a word of ``part`` (a reader picks among the
    vocabulary's words, never adds one: a word missing from ``part`` raises :class:`ValueError`)."""
    picked = split_words(text)
    if not picked <= part:
        raise ValueError(f"not words of the vocabulary part: {' '.join(sorted(picked - part))}")
    return picked


_VOWELS = "aeiou"
_CVC = re.compile(r"[^aeiou][aeiou][^aeiouwxy]$")
_VOWEL_GROUPS = re.compile(r"[aeiouy]+")


def _third_person(word: str) -> str:
    if word.endswith(("s", "x", "z", "ch", "sh")):
        return word + "es"
    if word.endswith("y") and len(word) > 1 and word[-2] not in _VOWELS:
        return word[:-1] + "ies"
    return word + "s"


def _present_participles(word: str) -> set[str]:
    if word.endswith("ie"):
        return {word[:-2] + "ying"}
    if word.endswith("e") and not word.endswith("ee"):
        return {word[:-1] + "ing"}
    if _CVC.search(word):
        if len(_VOWEL_GROUPS.findall(word)) == 1:
            return {word + word[-1] + "ing"}  # drop: dropping
        if word.endswith("l"):
            return {word + "ing", word + "ling"}  # cancel: canceling, cancelling
    return {word + "ing"}


def inflect_words(words: Iterable[str], *, ing: Iterable[str] = (), bare: Iterable[str] = ()) -> frozenset[str]:
    """Return ``words`` with the forms a description uses: the -s form of each word (``deletes``, ``searches``,
    ``applies``, ``urls``) but those in ``bare``, and the -ing form of each word also in ``ing`` (``deleting``,
    ``dropping``, ``canceling`` and ``cancelling``)."""
    base = frozenset(words)
    skip, progressive = frozenset(bare), frozenset(ing)
    forms = set(base)
    forms.update(_third_person(w) for w in base - skip)
    for w in base & progressive:
        forms |= _present_participles(w)
    return frozenset(forms)


# -- the parts: each word once -------------------------------------------------------------------------------

# reading
READ_VERBS = split_words("get list read search find lookup describe show view retrieve inspect")
"""Verbs that say nothing but reading."""
QUERY_VERBS = split_words("query count check preview explain")
"""Verbs that ask about a thing without changing it."""
COMPUTE_VERBS = split_words("convert calculate compute echo")
"""Verbs that work out an answer from the input alone."""
REPORT_NOUNS = split_words("status info details stats summary tree diff logs")
"""Nouns of the report a reading tool returns."""

# destroying
ERASE_VERBS = split_words("delete destroy drop purge erase wipe truncate overwrite shred rmdir unlink")
"""Verbs that erase data for good."""
REMOVE_VERBS = split_words("remove rm del trash clear prune evict")
"""Verbs that take a thing out of where it was (a cart, a list, a cache): it may come back."""
UNDO_VERBS = split_words("cancel revoke refund reset revert uninstall unpublish unresolve")
"""Verbs that undo something done before: an order, a grant, a payment, a change, a release."""
END_VERBS = split_words("kill terminate")
"""Verbs that end a process or a job."""

# writing and acting
CREATE_VERBS = split_words("create add insert upsert generate register import")
"""Verbs that make a new thing."""
CHANGE_VERBS = split_words("update set put patch edit modify change write append replace save rotate")
"""Verbs that change or write a thing's content."""
MOVE_VERBS = split_words("move rename copy clone")
"""Verbs that move or copy a thing."""
VERSION_VERBS = split_words("rebase checkout sync upgrade")
"""Verbs of a version history or a release."""
DEPLOY_VERBS = split_words("apply deploy install scale")
"""Verbs that put software or configuration in place."""
GRANT_VERBS = split_words("grant assign unassign approve reject")
"""Verbs that give or refuse someone a right or a task."""
SWITCH_VERBS = split_words(
    "stop pause resume restart restore toggle enable disable lock unlock archive unarchive unstar mark dismiss"
    " subscribe unsubscribe follow unfollow close"
)
"""Verbs that switch a thing's state and carry no content."""
TASK_VERBS = split_words("book reserve dispatch reschedule trigger prioritize reprioritize lifecycle")
"""Verbs of booking, scheduling and running a task."""
UI_VERBS = split_words("click press fill select drag hover navigate")
"""Verbs of a user interface driven by the tool (a browser)."""
VERB_OR_NOUN = split_words(
    "commit comment post reply push merge fork star schedule order record request manage resolve run start store"
)
"""Words that act when no read word comes with them (``git_commit``) and name a thing read when one does
(``get_commit``, ``get_run_details``, ``start_search``)."""

# sending
SEND_VERBS = split_words("send publish share upload invite notify forward submit transfer pay tweet")
"""Verbs that send data or value to someone else."""
MESSAGE_NOUNS = split_words("message email mail")
"""Nouns of a message: sent when the tool does not read or remove it."""
OPEN_WEB_WORDS = split_words(
    "web internet online websearch webpage webpages website websites http https url browse crawl scrape google"
    " bing duckduckgo serp"
)
"""Words of the open web: a query or a page of it leaves the account's closed world."""
FETCH_VERBS = split_words("fetch download")
"""Verbs that bring content from elsewhere."""
OUTBOUND_NOUNS = split_words("webhook sms")
"""Channels data leaves by."""
SEND_NAMES = split_words("create_pull_request")
"""Whole tool names that send (a name is also matched whole)."""

# running code
EXECUTE_VERBS = split_words("exec execute eval evaluate")
"""Verbs that run code or a command."""
LAUNCH_VERBS = split_words("launch spawn")
"""Verbs that start a process."""
EXECUTE_NOUNS = split_words("shell terminal repl script")
"""Nouns of a place code runs in."""

READING = READ_VERBS | QUERY_VERBS | COMPUTE_VERBS | REPORT_NOUNS
"""Every word that says a tool reads, asks or computes."""
DESTROYING = ERASE_VERBS | REMOVE_VERBS | UNDO_VERBS | END_VERBS
"""Every word that says a tool destroys, removes or undoes something."""
WRITING = (
    CREATE_VERBS
    | CHANGE_VERBS
    | MOVE_VERBS
    | VERSION_VERBS
    | DEPLOY_VERBS
    | GRANT_VERBS
    | SWITCH_VERBS
    | TASK_VERBS
    | UI_VERBS
    | VERB_OR_NOUN
)
"""Every word that says a tool writes or acts (destroying and sending apart)."""
SENDING = SEND_VERBS | MESSAGE_NOUNS | OPEN_WEB_WORDS | FETCH_VERBS | OUTBOUND_NOUNS | SEND_NAMES
"""Every word that says a tool sends or reaches beyond the account."""
EXECUTING = EXECUTE_VERBS | LAUNCH_VERBS | EXECUTE_NOUNS
"""Every word that says a tool runs code."""
TOOL_WORDS = READING | DESTROYING | WRITING | SENDING | EXECUTING
"""The whole vocabulary: every reader's set is drawn from it (lint's with inflections)."""

# -- what lint reads in a description's lead ----------------------------------------------------------------

LINT_UNINFLECTED = split_words(
    "rm del http https internet web website webpage sms lookup patch dismiss unpublish browse navigate tweet"
)
"""Words lint reads only as they are: abbreviations and nouns without a verb form, then verbs whose -s form lint
has not read so far (adding it would change findings)."""

# -- the readers' sets ----------------------------------------------------------------------------------------

READ_NAME_WORDS = READING
"""Name words of a tool that reads, lists or computes: its verb, or the report it returns (heuristics)."""
# lint differs: it flags readOnlyHint false on plain reading verbs only; "check", "count", "status" name writers too.
LINT_READ_WORDS = inflect_words(READ_VERBS, bare=LINT_UNINFLECTED)
"""Words that say a call only reads (lint, in a name or a description's lead)."""

IRREVERSIBLE_VERBS = ERASE_VERBS
"""Name words of a destructive action that cannot be undone (a removal from a cart or a list can)."""
DESTRUCTIVE_VERBS = ERASE_VERBS | pick_words(REMOVE_VERBS, "remove rm trash")
"""Name words of a tool that destroys data (effects: asked of the user once untrusted content is in the context)."""
# lint differs: it asks for destructiveHint, which MCP gives any destructive update (a refund, a revoked grant).
LINT_DESTRUCTIVE_WORDS = inflect_words(
    # not read so far (adding "unresolve" adds a finding on the shared servers: unresolve_review_thread)
    DESTROYING - pick_words(DESTROYING, "shred rmdir unlink trash clear revert unresolve"),
    ing=pick_words(DESTROYING, "delete remove drop cancel revoke overwrite refund"),  # -ing forms read so far
    bare=LINT_UNINFLECTED,
)
"""Words that say a call destroys or undoes something (lint, in a name or a description's lead)."""

# The picks and gaps below are the heuristics' words so far: "generate" would veto P on generate_typescript_types.
WRITE_NAME_VERBS = (
    pick_words(ERASE_VERBS, "delete destroy drop purge")
    | pick_words(REMOVE_VERBS, "remove clear")
    | (UNDO_VERBS - pick_words(UNDO_VERBS, "refund unpublish"))
    | END_VERBS
    | (WRITING - VERB_OR_NOUN - pick_words(WRITING, "generate register replace unarchive"))
    | (SEND_VERBS - pick_words(SEND_VERBS, "tweet"))
    | EXECUTE_VERBS
)
"""Name words of a tool that changes something or acts, whatever else its name says (heuristics)."""
# effects differ: only a verb that puts content at a path makes it run later; deleting a workflow file runs nothing.
PATH_WRITE_VERBS = pick_words(
    WRITING | SEND_VERBS, "write create edit update append put save upload commit push replace patch set add install"
)
"""Name words of a tool that writes what it is handed to a path (effects)."""
# lint differs: these only silence its read check next to a read word; the heuristics' wider set vetoes legs.
LINT_WRITE_WORDS = LINT_DESTRUCTIVE_WORDS | inflect_words(
    pick_words(
        WRITING | SEND_VERBS | EXECUTE_VERBS,
        "create update write set edit add insert put patch modify move rename upload send post save apply execute"
        " run merge replace append assign mark start stop trigger submit commit push dismiss",
    ),
    bare=LINT_UNINFLECTED,
)
"""Words that, next to a read word, say the call also writes: lint's read check stays quiet."""

SEND_NAME_WORDS = (
    SEND_VERBS
    | pick_words(VERB_OR_NOUN, "reply push")
    | pick_words(OUTBOUND_NOUNS, "webhook")
    | pick_words(OPEN_WEB_WORDS, "http")
    | SEND_NAMES
)
"""Name words that send data out, whatever else the name says (heuristics)."""
# lint differs: openWorldHint covers sending and the open web alike; the heuristics tell the two apart.
LINT_NETWORK_WORDS = inflect_words(
    pick_words(
        SENDING | VERB_OR_NOUN | UI_VERBS,
        "send post publish fetch http https url webhook email mail upload download browse navigate tweet internet"
        " web website webpage sms",
    ),
    ing=pick_words(SENDING | VERB_OR_NOUN, "send post fetch"),  # -ing forms read so far
    bare=LINT_UNINFLECTED,
)
"""Words that say a call reaches beyond the server's own closed world (lint)."""
