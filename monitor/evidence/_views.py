"""Decoded views of an argument: what it says once URL-encoding, hex or base64 is undone, and every component
of the URLs it holds.

A URL is taken apart as a server reads it: user name and password, each host label in front of the
registrable part, each path segment, each query key and value, and the fragment (itself read as a query when it
has ``=``). Each component is percent-decoded and then decoded like any other value, so a token is found in a
path segment or a subdomain as it is in a query. Base64 (standard and URL-safe, padded or not) is read in
every maximal run and, when a run also spans ``/`` separators, in each of its segments; hex in runs of at least
8 bytes; base32 in host labels. A decoded view is decoded again once (data encoded twice). The work is bounded:
at most :data:`MAX_VIEWS` views and :data:`MAX_VIEW_CHARS` decoded characters per argument.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator
from urllib.parse import parse_qsl, unquote, unquote_plus, urlsplit

from monitor.models import Transform

MAX_VIEWS = 256
"""Decoded views produced for one argument, at most."""
MAX_VIEW_CHARS = 1_000_000
"""Decoded characters produced for one argument, at most."""
_MAX_DEPTH = 2

_B64 = re.compile(r"[A-Za-z0-9+/]{16,}={0,2}|[A-Za-z0-9_-]{16,}={0,2}")
_HEX = re.compile(r"(?:[0-9a-fA-F]{2}){8,}")
_B32 = re.compile(r"[A-Za-z2-7]{16,}")
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]{1,15}://[^\s\"'<>`]+")
_MAX_URLS = 32


def iter_url_components(url: str) -> Iterator[tuple[str, str]]:
    """Yield ``(slot, text)`` for every component of ``url`` that can carry data: ``user``, ``label``, ``path``,
    ``q:<key>`` (a query value; its key comes as ``key``), ``fragment``; percent-decoded."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        userinfo = parts.netloc.rpartition("@")[0] if "@" in parts.netloc else ""
    except ValueError:
        return
    for piece in userinfo.split(":") if userinfo else ():
        if piece:
            yield "user", unquote(piece)
    labels = host.split(".")
    for label in labels[:-2]:
        if label and label != "www":
            yield "label", label
    for segment in parts.path.split("/"):
        if segment:
            yield "path", unquote(segment)
    yield from _query_components(parts.query, "q")
    if parts.fragment:
        if "=" in parts.fragment:
            yield from _query_components(parts.fragment, "f")
        else:
            yield "fragment", unquote(parts.fragment)


def _query_components(query: str, prefix: str) -> Iterator[tuple[str, str]]:
    for key, value in parse_qsl(query, keep_blank_values=True):
        if key:
            yield "key", key
        if value:
            yield f"{prefix}:{key}", value


def find_urls(text: str) -> list[str]:
    """The URLs in ``text`` (at most a bounded number)."""
    if "://" not in text:
        return []
    return [m.group(0) for m, _ in zip(_URL.finditer(text), range(_MAX_URLS), strict=False)]


def decoded_views(text: str) -> Iterator[tuple[Transform, str]]:
    """Decoded views of an argument: URL-decoding, hex, base64 and the components of its URLs, decoded again
    once; bounded by :data:`MAX_VIEWS` and :data:`MAX_VIEW_CHARS`."""
    budget = [MAX_VIEWS, MAX_VIEW_CHARS]
    seen: set[str] = {text}
    yield from _bounded(_views(text, 1, seen), budget)


def _bounded(views: Iterator[tuple[Transform, str]], budget: list[int]) -> Iterator[tuple[Transform, str]]:
    for transform, view in views:
        if budget[0] <= 0 or budget[1] < len(view):
            return
        budget[0] -= 1
        budget[1] -= len(view)
        yield transform, view


def _views(text: str, depth: int, seen: set[str]) -> Iterator[tuple[Transform, str]]:
    for transform, view in _direct_views(text):
        if view in seen:
            continue
        seen.add(view)
        yield transform, view
        if depth < _MAX_DEPTH:
            yield from _views(view, depth + 1, seen)


def _direct_views(text: str) -> Iterator[tuple[Transform, str]]:
    if "%" in text:
        unquoted = unquote_plus(text)
        if unquoted != text:
            yield Transform.URL, unquoted
    for url in find_urls(text):
        for slot, component in iter_url_components(url):
            yield from _component_views(slot, component)
    for m in _HEX.finditer(text):
        decoded = _as_text(binascii.unhexlify(m.group(0)))
        if decoded:
            yield Transform.HEX, decoded
    for m in _B64.finditer(text):
        raw = m.group(0)
        if _HEX.fullmatch(raw):
            continue
        decoded = _decode_base64(raw)
        if decoded:
            yield Transform.BASE64, decoded
        elif "/" in raw:
            # A path: its segments are encoded one by one.
            for segment in raw.split("/"):
                decoded = _decode_base64(segment) if len(segment) >= 16 else None
                if decoded:
                    yield Transform.BASE64, decoded


def _component_views(slot: str, component: str) -> Iterator[tuple[Transform, str]]:
    """A URL component decoded as a whole (it is exactly aligned, unlike a run found in the whole URL)."""
    if _HEX.fullmatch(component):
        decoded = _as_text(binascii.unhexlify(component))
        if decoded:
            yield Transform.HEX, decoded
            return
    if _B64.fullmatch(component):
        decoded = _decode_base64(component)
        if decoded:
            yield Transform.BASE64, decoded
            return
    if slot == "label" and _B32.fullmatch(component):
        decoded = _decode_base32(component)
        if decoded:
            yield Transform.BASE64, decoded


def _decode_base64(raw: str) -> str | None:
    padded = raw.rstrip("=")
    padded += "=" * (-len(padded) % 4)
    try:
        data = base64.b64decode(padded, altchars=b"-_" if ("-" in raw or "_" in raw) else None, validate=True)
    except (binascii.Error, ValueError):
        return None
    return _as_text(data)


def _decode_base32(raw: str) -> str | None:
    padded = raw.upper() + "=" * (-len(raw) % 8)
    try:
        data = base64.b32decode(padded)
    except (binascii.Error, ValueError):
        return None
    return _as_text(data)


def _as_text(data: bytes) -> str | None:
    if len(data) < 8:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    printable = sum(ch.isprintable() or ch.isspace() for ch in text)
    return text if printable >= 0.9 * len(text) else None
