"""``names_internal_host`` judges a URL's host as a resolver reads it (the rule condition ``internal_host``;
tests/rules/test_internal_hosts.py has the condition in the packs).

A public address keeps external communication in any spelling (one decimal number, hex, octal parts, mapped
into IPv6); loopback, private, link-local, single-label and internal-suffix hosts stay inside.
"""

from __future__ import annotations

import pytest

from monitor.classify._overrides import names_internal_host

INTERNAL = [
    "http://localhost:8080/admin",
    "localhost:3000/login",
    "localhost",
    "file:///etc/passwd",
    "FILE:/home/u/notes.txt",
    "file://localhost/etc/hosts",
    "http://127.0.0.1/",
    "http://2130706433:8080/",  # 127.0.0.1 as one decimal number
    "http://0x7f000001/",
    "http://0177.0.0.1/",
    "http://127.1/",
    "http://10.1.2.3/",
    "http://192.168.1.1/",
    "169.254.169.254/latest/meta-data/",
    "http://[::1]:9000/",
    "http://[::ffff:127.0.0.1]/",
    "http://[fe80::1%25eth0]/",
    "http://wiki/payroll",
    "http://build.internal/",
    "http://printer.local./",
    "http://user:pw@localhost:99/",
    "  http://10.0.0.1",
]
EXTERNAL = [
    "https://example.com/",
    "http://1481646427/c?d=secret",  # 88.80.18.59 as one decimal number
    "http://0x58501234/",
    "http://0x58.0x50.0x12.0x34/",
    "http://0130.0120.022.064/",
    "1481646427",
    "0x58501234/collect",
    "http://[::ffff:88.80.18.52]/",
    "http://8.8.8.8/",
    "http://localhost.attacker.example/",
    "http://127.0.0.1@attacker.example/",
    "http://localhost\\@attacker.example/",
    "http://attacker.example\\@localhost/",
    "http://[::1",
    "file://attacker.example/share/payload.txt",
    "http:///path",
    "mailto:admin@localhost",
    "javascript:fetch('//x.example')",
    "",
]


@pytest.mark.parametrize("url", INTERNAL)
def test_internal_hosts_in_any_spelling(url: str) -> None:
    assert names_internal_host(url)


@pytest.mark.parametrize("url", EXTERNAL)
def test_public_hosts_in_any_spelling_are_not_internal(url: str) -> None:
    assert not names_internal_host(url)
