"""The decision policy: from a call's facts to ``allow``, ``confirm`` or ``deny``, with reasons.

See docs/design.md, "Who may read it", and the table in docs/decisions.md.

The session engine gathers the facts (:class:`CallFacts`: what the context holds before the call, what the call
is, where it sends, what it carries, what the user's words ask for, and what ``reviewed-only`` reads, each a group
of its own); the policy only reads them, so the same facts always give the same decision. For a call that cannot
send out (no ``external_communication`` leg), or one made before the context is armed, the answer is ``allow``
(``no-external-communication``, ``not-armed``): order matters, a send before untrusted content arrived was not
steered by it. For an external call while armed (level ``trifecta``):

- ``confirm`` when a destination is attacker-suggested or appears nowhere the session has seen
  (``destination-unseen``), unless the call only fetches URLs exactly as the session saw them with nothing else
  that can carry data (``request-carries-nothing-new``); always when a destination imitates one the user
  sanctioned (``destination-lookalike``); when private content the user did not ask for is in the arguments:
  read by a call whose target untrusted content chose (``private-source-steered``), or put where outsiders read
  (``private-to-shared-place``; what the user pointed at and what that place itself returned may go back); when
  a URL in the content that rendering fetches (an image, ``src=``) carries private content to a host the user
  did not name (``private-in-embedded-url``), wherever the content is posted; and when the arguments carry
  private content in a call of a kind the user never asked for whose destinations only a listing showed
  (``private-in-unrequested-send``);
- ``allow`` when every named destination is sanctioned (the user's words, the allowlist, a listing of the
  user's own things, the user's private content, a place the user pointed at for an action of this kind:
  ``destination-user-delegated``), saying which;
- with no recipient, ``allow`` when the call writes a place of the user's own (a listed file, a local path:
  ``destination-local``, a note or an event of the user's: ``destination-own-account``); otherwise ``confirm``
  if the arguments carry private content (verbatim, encoded, split, copied record fields, or files a shell
  command uploads: ``private-file-sent``) or are unavailable, else ``allow`` (``no-destination``,
  ``no-private-fragment``). Paraphrase evidence (``private-paraphrase``) is weaker: it tells on a send somewhere
  suspect, never on its own on a send with no readable address.

What was not examined counts against the call, never for it (``evidence-truncated``): when a bound left part
of the session's private data or untrusted content unexamined (a result over a size bound, a walk cut short, an
index over its budget), a call that would be allowed is decided again as if that content were in it: private
content not examined as a private fragment of the call that returned it, untrusted content not examined as the
attacker's mention of every destination that only a listing, private text or a delegation sanctioned. If that
decision is not ``allow``, the call is confirmed. A send to a destination the user typed or allowlisted (not a
place outsiders read), or a write to the user's own places, stays allowed; a fetch of a URL exactly as the
session saw it does not, since its other arguments could carry what was not examined.

The level is ``exfiltration`` only for a call the policy asks about or blocks, when a destination is the
attacker's (suggested or a look-alike), when private content the user did not ask for is in the arguments or
rides in an embedded URL to a host the user did not name, or when private content goes to an unseen destination
or to none that can be read; in enforce mode an exfiltration
to the attacker's destination is ``deny``.

The ``reviewed-only`` policy (:attr:`Policy.mode`, off by default) adds the application policy of
docs/policy.md on top, never weakening what the rules above decided (the final action is the stricter): a call
outside the user's scope is ``deny`` (``out-of-scope``); a tool no reviewed rule covers is ``review``
(``tool-unreviewed``); a write with no approval on record is ``confirm`` (``approval-required``); a repeated
write whose earlier outcome is unknown is ``confirm`` (``reconcile``) unless the tool's rule declares a retry
contract; a tool whose action metadata says ``requiresReview`` is ``confirm`` (``review-requested``).

A *steered action* (``steered-action``, on by default, :attr:`Policy.hijack`): a destructive, privileged or
code-execution call whose target (or, for code execution, content) untrusted content chose gets at least
``confirm``, whether or not it sends. A baseline client profile (:class:`~monitor.clients.Client`) may add its
own confirmations: the stricter action wins and the monitor's own is kept in ``monitor_action``.
"""

from monitor.decide._decide import decide, decide_on_monitor_error, decide_trifecta
from monitor.decide._facts import (
    CallFacts,
    CargoFacts,
    ContextFacts,
    IntentFacts,
    RequestFacts,
    ReviewFacts,
    RouteFacts,
)
from monitor.decide._policy import Policy, PolicyMode, Scope, load_scope
from monitor.decide._table import FINDINGS, VERDICTS, CallView, Finding, Verdict, find_verdict, view_call

__all__ = [
    "CallFacts",
    "CallView",
    "CargoFacts",
    "ContextFacts",
    "FINDINGS",
    "Finding",
    "IntentFacts",
    "Policy",
    "PolicyMode",
    "RequestFacts",
    "ReviewFacts",
    "RouteFacts",
    "Scope",
    "VERDICTS",
    "Verdict",
    "decide",
    "decide_on_monitor_error",
    "decide_trifecta",
    "find_verdict",
    "load_scope",
    "view_call",
]
