"""Attribute keys of Langfuse (langfuse.com, "OpenTelemetry" docs, property mapping): the one Langfuse reads a
trace's session from besides ``session.id``."""

from __future__ import annotations

LANGFUSE_SESSION_ID = "langfuse.session.id"  # trace attribute: the session the trace belongs to
