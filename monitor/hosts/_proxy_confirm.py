"""How the proxy asks the user before a call, and the answers it makes up itself.

A ``confirm`` decision becomes a question to the user through MCP elicitation, in the form the client speaks:

- **Handshake-era clients** (protocol versions before 2026-07-28, with ``initialize``) declare the
  ``elicitation`` capability once, in the ``initialize`` request. The proxy sends them an
  ``elicitation/create`` request of its own, with an id no other message uses.
- **2026-07-28 clients** have no protocol session: every request carries the client's capabilities in
  ``_meta`` (``io.modelcontextprotocol/clientCapabilities``), and a server asks for input by answering the
  request with an ``InputRequiredResult`` (``resultType: "input_required"``) whose ``inputRequests`` hold the
  ``elicitation/create``; the client asks the user and sends the request again with ``inputResponses`` and the
  opaque ``requestState``. The proxy answers a ``tools/call`` that way, and recognises the retry by its state.

The form has one boolean field, ``accept``; the call runs only when the user accepts *and* ticks it. Anything
else (decline, cancel, a missing or false field, an error, no answer in time) leaves the call unrun, and the
client gets a ``CallToolResult`` with ``isError: true`` that says why.
"""

from __future__ import annotations

from typing import Any

from monitor.models import (
    CLIENT_CAPABILITIES_META_KEY,
    PROTOCOL_VERSION_META_KEY,
    RESULT_TYPE_COMPLETE,
    RESULT_TYPE_INPUT_REQUIRED,
    infer_protocol_version,
)

CONFIRM_FIELD = "accept"
"""The boolean field of the confirmation form."""

CONFIRM_KEY = "trifecta-confirm"
"""The key of the proxy's elicitation in an ``InputRequiredResult``'s ``inputRequests``."""


def speaks(version: str | None, feature: str) -> bool:
    """Whether a client of this protocol version has ``feature`` (a boolean field of
    :class:`~monitor.models.ProtocolVersion`: ``elicitation``, ``elicitation_modes``…); a version that is not a
    date has none."""
    entry = infer_protocol_version(version)
    return entry is not None and getattr(entry, feature) is True


def request_meta(params: Any) -> dict[str, Any]:
    """Return a request's ``_meta`` (empty when it has none)."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    return meta if isinstance(meta, dict) else {}


def is_stateless_request(params: Any) -> bool:
    """True when a request comes from a 2026-07-28 client: it names its protocol version in ``_meta``."""
    return isinstance(request_meta(params).get(PROTOCOL_VERSION_META_KEY), str)


def declares_elicitation(capabilities: Any) -> bool:
    """True when client capabilities include form elicitation (an empty ``elicitation`` object means form)."""
    if not isinstance(capabilities, dict):
        return False
    elicitation = capabilities.get("elicitation")
    if not isinstance(elicitation, dict):
        return False
    return not elicitation or isinstance(elicitation.get("form"), dict)


def request_declares_elicitation(params: Any) -> bool:
    """True when a 2026-07-28 request's ``_meta`` declares form elicitation."""
    return declares_elicitation(request_meta(params).get(CLIENT_CAPABILITIES_META_KEY))


def build_form(message: str, *, with_mode: bool) -> dict[str, Any]:
    """The params of the confirmation ``elicitation/create``: the message and a one-field boolean form.
    ``with_mode`` adds ``mode: "form"`` (protocol 2025-11-25 and later)."""
    params: dict[str, Any] = {
        "message": message,
        "requestedSchema": {
            "type": "object",
            "properties": {
                CONFIRM_FIELD: {
                    "type": "boolean",
                    "title": "Run this call",
                    "description": "Tick to let the call run; leave it unticked or decline to stop it.",
                    "default": False,
                }
            },
            "required": [CONFIRM_FIELD],
        },
    }
    if with_mode:
        params = {"mode": "form", **params}
    return params


def build_input_required(message: str, state: str) -> dict[str, Any]:
    """An ``InputRequiredResult`` that asks for the confirmation, for a 2026-07-28 client."""
    return {
        "resultType": RESULT_TYPE_INPUT_REQUIRED,
        "inputRequests": {CONFIRM_KEY: {"method": "elicitation/create", "params": build_form(message, with_mode=True)}},
        "requestState": state,
    }


def read_answer(answer: Any) -> tuple[bool, str]:
    """Read an elicitation result: (accepted, what the user did, in words)."""
    if not isinstance(answer, dict):
        return False, "the confirmation got no usable answer"
    action = answer.get("action")
    if action != "accept":
        word = {"decline": "declined", "cancel": "dismissed"}.get(str(action), f"answered {action!r} to")
        return False, f"the user {word} the confirmation"
    content = answer.get("content")
    if isinstance(content, dict) and content.get(CONFIRM_FIELD) is True:
        return True, "the user accepted"
    return False, f"the user did not tick '{CONFIRM_FIELD}' in the confirmation"


def build_error_result(text: str, *, stateless: bool) -> dict[str, Any]:
    """A ``CallToolResult`` with ``isError: true`` whose text is ``text``."""
    result: dict[str, Any] = {"content": [{"type": "text", "text": text}], "isError": True}
    if stateless:
        result["resultType"] = RESULT_TYPE_COMPLETE
    return result
