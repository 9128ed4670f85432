"""Hosts read the way a resolver and a browser read them.

A host in a URL or a command can be spelled many ways that all reach the same machine: an IPv4 address as one
decimal number (``1481646427``), in hexadecimal (``0x58501234``), in octal parts (``0130.0120.022.033``) or
with parts left out (``127.1``), exactly as ``inet_aton`` and the WHATWG URL parser accept them; an IPv6
literal in brackets, with a zone id, or an IPv4 address mapped into IPv6; a name in punycode (``xn--...``),
with percent-escapes, full-width dots or a trailing dot. :func:`canonical_host` turns every spelling into one
form (dotted-quad IPv4, compressed IPv6, lower-case Unicode names), so that two spellings of one host compare
equal and a look-alike name is compared by its characters. :func:`host_of_url` finds a URL's host as a browser
does: after the last ``@`` of the authority, with ``\\`` ending the authority like ``/``.
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from urllib.parse import unquote

import idna

_DOTS = str.maketrans({"\u3002": ".", "\uff0e": ".", "\uff61": "."})
_SCHEME = re.compile(r"^([a-z][a-z0-9+.-]*):", re.IGNORECASE)
_SPECIAL_SCHEMES = frozenset(["http", "https", "ws", "wss", "ftp", "file"])
_IPV4_PART = re.compile(r"^(?:0[xX][0-9a-fA-F]*|[0-9]+)$")
_INTERNAL_SUFFIXES = (".localhost", ".internal", ".local", ".lan", ".intranet", ".corp", ".home.arpa", ".svc")
MAX_HOST_CHARS = 1_024
"""A host longer than this is not parsed (no DNS name is over 253 characters): it is returned as written."""


def parse_ipv4(host: str) -> ipaddress.IPv4Address | None:
    """The IPv4 address a host names when read as ``inet_aton`` and the WHATWG URL parser read it (one to four
    parts, each decimal, ``0x`` hexadecimal or ``0``-led octal, the last filling the remaining bytes), or None."""
    if len(host) > MAX_HOST_CHARS:
        return None  # no address is spelled this long (and ``int`` refuses numbers of over 4300 digits)
    parts = host.split(".")
    if parts and parts[-1] == "" and len(parts) > 1:
        parts.pop()
    if not 1 <= len(parts) <= 4 or not all(_IPV4_PART.match(p) for p in parts):
        return None
    numbers: list[int] = []
    for part in parts:
        if part[:2].lower() == "0x":
            numbers.append(int(part[2:] or "0", 16))
        elif len(part) > 1 and part.startswith("0"):
            if not set(part) <= set("01234567"):
                return None
            numbers.append(int(part, 8))
        else:
            numbers.append(int(part))
    *head, last = numbers
    if any(n > 255 for n in head) or last >= 256 ** (5 - len(numbers)):
        return None
    value = last
    for i, n in enumerate(head):
        value += n << (8 * (3 - i))
    return ipaddress.IPv4Address(value)


def _parse_ipv6(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    text = unquote(text).split("%", 1)[0]  # a zone id (fe80::1%eth0, %25 in URLs) names an interface, not a host
    try:
        address = ipaddress.IPv6Address(text)
    except ValueError:
        return None
    mapped = address.ipv4_mapped
    return mapped if mapped is not None else address


def _unicode_label(label: str) -> str:
    if label.startswith("xn--"):
        try:
            return str(idna.decode(label))
        except (idna.IDNAError, UnicodeError, ValueError):
            return label
    return label


def canonical_host(raw: str) -> str:
    """One spelling per host: dotted-quad IPv4 for every IPv4 spelling (also one mapped into IPv6), compressed
    IPv6 without brackets or zone id, and names percent-decoded, NFKC-folded, lower case, in Unicode (punycode
    labels decoded), without a trailing dot. Text that is no host comes back lower-cased as written."""
    host = raw.strip()
    if not host or len(host) > MAX_HOST_CHARS:
        return host.lower()
    if host.startswith("[") and host.endswith("]"):
        address = _parse_ipv6(host[1:-1])
        return str(address) if address is not None else host.lower()
    if ":" in host:
        address = _parse_ipv6(host)
        if address is not None:
            return str(address)
    host = unicodedata.normalize("NFKC", unquote(host)).translate(_DOTS).casefold()
    ipv4 = parse_ipv4(host)
    if ipv4 is not None:
        return str(ipv4)
    host = host.rstrip(".")
    return ".".join(_unicode_label(label) for label in host.split("."))


def host_of_url(url: str) -> str | None:
    """The canonical host of an absolute URL (``scheme://authority...``), as a browser finds it: the authority
    ends at the first ``/``, ``?``, ``#`` (or ``\\`` for web schemes), the host follows its last ``@``, and a
    port is dropped. Returns "" for a URL without a host and None for text that is not such a URL."""
    scheme = _SCHEME.match(url.strip())
    if scheme is None:
        return None
    rest = url.strip()[scheme.end() :]
    name = scheme.group(1).lower()
    if name in _SPECIAL_SCHEMES:
        rest = rest.replace("\\", "/")
        if name == "file":
            if not rest.startswith("//"):
                return ""
            rest = rest[2:]
        else:
            rest = rest.lstrip("/")
    elif rest.startswith("//"):
        rest = rest[2:]
    else:
        return None
    authority = re.split(r"[/?#]", rest, maxsplit=1)[0]
    host = authority.rpartition("@")[2]
    if host.startswith("["):
        end = host.find("]")
        host = host[: end + 1] if end >= 0 else host
    else:
        host = host.split(":", 1)[0]
    return canonical_host(host) if host else ""


def is_internal_host(host: str) -> bool:
    """Whether a host stays inside the user's machine or network: a loopback, private, link-local, unspecified
    or other non-global address in any spelling, ``localhost``, a single-label name (not an IPv4 number, which
    is an address), or a name under a reserved internal suffix (``.internal``, ``.local``, ``.home.arpa``...).
    A public address in any spelling is not internal."""
    canonical = canonical_host(host)
    if not canonical:
        return False
    try:
        address = ipaddress.ip_address(canonical)
    except ValueError:
        pass
    else:
        return not address.is_global
    if canonical == "localhost" or canonical.endswith(_INTERNAL_SUFFIXES):
        return True
    if _IPV4_PART.match(canonical.rstrip(".").rsplit(".", 1)[-1]):
        return False  # ends in a number but is no valid address: no resolver reads it as a local name
    return "." not in canonical and ":" not in canonical and "/" not in canonical
