"""Questions for the engine, and the replies: ``check_tool_call``, a session's report, the sessions held, a flush.

A question is queued behind every record written before it (:meth:`~monitor.otel._delivery.Delivery.put_request`),
so the engine answers it once it has analysed every span that ended before; the asking thread waits for the
reply (:data:`~monitor.otel._records.OUT_REPLY`), which the reader or delivery thread hands over. A question
that could not be delivered, or whose engine died, is answered as failed at once.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Mapping
from typing import Any

from monitor.models import Decision, SessionReport, split_mcp_name
from monitor.otel import _records as rec
from monitor.otel._config import ProcessorConfig
from monitor.otel._delivery import Delivery
from monitor.otel._links import CallPlace
from monitor.spans import UNKNOWN_SERVER


class _Reply:
    __slots__ = ("answer", "done", "failed", "number")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.answer: Any = None
        self.failed = False
        self.number = 0  # the request's record number: its answer acknowledges every record up to it


class Requests:
    """The questions in flight, by request number. Asking raises on a timeout or a failure (the processor
    turns that into its documented answer)."""

    def __init__(self, config: ProcessorConfig, clock: Callable[[], float], delivery: Delivery) -> None:
        self._config = config
        self._clock = clock
        self._delivery = delivery
        self._numbers = itertools.count(1)
        self._replies: dict[int, _Reply] = {}

    def clear(self) -> None:
        """Forget the questions in flight (in a forked child: their answers go to the parent)."""
        self._replies = {}

    # -- asking -------------------------------------------------------------------------------------

    def flush(self, timeout: float) -> bool:
        """Wait until every record queued so far was handled; False on timeout, on failure, or when asked from
        the processor's own thread (whose engine would never answer)."""
        reply = self._send(rec.ASK_FLUSH, None)
        return reply is not None and reply.done.wait(timeout) and not reply.failed

    def ask(self, what: str, argument: Any, timeout: float) -> Any:
        """The engine's answer to a question (raises RuntimeError when asked from the processor's own thread or
        the engine stopped first, TimeoutError after ``timeout`` seconds)."""
        reply = self._send(what, argument)
        if reply is None:
            raise RuntimeError(f"{what}: asked from the processor's own thread")
        if not reply.done.wait(timeout):
            raise TimeoutError(f"{what}: no answer from the engine within {timeout} s")
        if reply.failed:
            raise RuntimeError(f"{what}: the engine stopped before it answered")
        return reply.answer

    def ask_report(self, what: str, session_id: str, timeout: float) -> SessionReport | None:
        """A session's report (:data:`~monitor.otel._records.ASK_SESSION` or ``ASK_END``); None when the engine
        does not know the session. Raises as :meth:`ask`."""
        answer = self.ask(what, session_id, timeout)
        return rec.read_model(SessionReport, answer) if answer is not None else None

    def check(
        self,
        place: CallPlace,
        tool: str,
        arguments: Mapping[str, Any] | None,
        server: str | None,
        call_id: str | None,
    ) -> Decision:
        """The engine's decision on a call about to run at ``place`` (``server`` defaults to the
        ``mcp__<server>__`` prefix of ``tool``). Raises TimeoutError after ``check_timeout`` seconds, and
        RuntimeError when the engine stopped first."""
        if server is None:
            split = split_mcp_name(tool)
            server, tool = split if split else (UNKNOWN_SERVER, tool)
        request = next(self._numbers)
        reply = self._replies[request] = _Reply()
        record = rec.make_check(
            self._clock(),
            request,
            place.session,
            place.own_span,
            place.up,
            place.trace_id,
            place.span_id,
            server,
            tool,
            arguments,
            call_id,
        )
        self._delivery.put_request(record, reply, place.session)
        timeout = self._config.check_timeout
        if not reply.done.wait(timeout):
            self._replies.pop(request, None)
            raise TimeoutError(f"check_tool_call: no answer from the engine within {timeout} s")
        if reply.failed or reply.answer is None:
            raise RuntimeError("check_tool_call: the engine stopped before it answered")
        decision: Decision = rec.read_model(Decision, reply.answer)
        return decision

    def _send(self, what: str, argument: Any) -> _Reply | None:
        if threading.get_ident() in self._delivery.own_threads:
            return None  # the engine answers on this very thread: waiting would never end
        request = next(self._numbers)
        reply = self._replies[request] = _Reply()
        self._delivery.put_request((rec.REQUEST, request, what, argument), reply)
        return reply

    # -- replies ------------------------------------------------------------------------------------

    def answer(self, request: int, answer: Any, acknowledge: Callable[[int], None] | None = None) -> None:
        """The engine answered a question: wake whoever waits for it, once ``acknowledge`` was given the
        question's number (the engine handled every record up to it)."""
        reply = self._replies.pop(request, None)
        if reply is not None:
            if acknowledge is not None and reply.number:
                acknowledge(reply.number)
            reply.answer = answer
            reply.done.set()

    def fail_pending(self) -> None:
        """The engine died: every question in flight is answered as failed."""
        for reply in list(self._replies.values()):
            reply.failed = True
            reply.done.set()
        self._replies.clear()

    def fail_lost(self, lines: list[bytes]) -> None:
        """Records could not be delivered: the questions among them are answered as failed at once."""
        for line in lines:
            request = rec.read_request_id(line)
            reply = self._replies.pop(request, None) if request is not None else None
            if reply is not None:
                reply.failed = True
                reply.done.set()
