"""Which local paths hold third-party text and which hold secrets (docs/design.md, "Coding agents").

A coding agent reads files of two kinds that matter to the trifecta beyond "the user's files": files a third
party wrote (dependency trees, package caches, downloads) are untrusted content, and secrets files (``.env``,
private keys, cloud credentials) are the private data most worth stealing. Both predicates look at the path
only (POSIX or Windows separators, any case), never at the disk.

Third-party paths are recognised by a directory component (or a short run of components) that dependency
managers and browsers own. The list is conservative: a folder name that people also use for their own code is
left out, and clones of other repositories are only recognised inside tool caches (``.cargo/git``,
``.cache/pre-commit``, ``go/pkg/mod``, ``.terraform``), not under clone roots such as ``~/src`` that hold the
user's own repositories too. What a command fetched in the session (``git clone``, ``curl -o``, an extracted
archive) is better known from the shell parse, which reports it.
"""

from __future__ import annotations

import fnmatch
import re

# Directory names that a package manager, a virtual environment, a download or a build cache of fetched code
# owns. Compared with one path component, case-insensitively. Kept in step with the regular expression of the
# Claude Code rule pack (rules/claude-code/builtin.yaml) by tests/evidence/test_claude_code_pack_paths.py.
THIRD_PARTY_DIRS = frozenset(
    [
        "node_modules",
        "bower_components",
        "jspm_packages",
        "vendor",
        "third_party",
        "third-party",
        "thirdparty",
        "site-packages",
        "dist-packages",
        "venv",
        ".venv",
        "virtualenvs",
        ".virtualenvs",
        ".tox",
        ".nox",
        "__pypackages__",
        ".eggs",
        "pods",
        "carthage",
        ".npm",
        ".yarn",
        ".pnpm-store",
        ".pub-cache",
        "elm-stuff",
        ".terraform",
        "_deps",
        "downloads",
    ]
)
# Runs of components that mark a cache of fetched packages or repositories.
THIRD_PARTY_DIR_RUNS = frozenset(
    [
        (".cargo", "registry"),
        (".cargo", "git"),
        ("go", "pkg", "mod"),
        (".m2", "repository"),
        (".gradle", "caches"),
        (".gradle", "wrapper"),
        (".ivy2", "cache"),
        (".nuget", "packages"),
        (".julia", "packages"),
        (".cache", "pip"),
        (".cache", "pypoetry"),
        (".cache", "uv"),
        (".cache", "pre-commit"),
        (".cache", "huggingface"),
        (".cache", "yarn"),
    ]
)
# Prefixes of the temporary folders pip unpacks fetched source distributions into.
THIRD_PARTY_DIR_PREFIXES = ("pip-req-build-", "pip-install-", "pip-unpack-", "pip-wheel-", "pip-build-env-")

_SEPARATORS = re.compile(r"[\\/]+")
_ENV_TEMPLATES = frozenset(["example", "sample", "template", "dist"])
_SECRET_NAMES = frozenset(
    [
        "id_rsa",
        "id_dsa",
        "id_ecdsa",
        "id_ed25519",
        "id_ecdsa_sk",
        "id_ed25519_sk",
        ".netrc",
        "_netrc",
        ".git-credentials",
        ".npmrc",
        ".pypirc",
        ".yarnrc.yml",
        ".pgpass",
        ".my.cnf",
        ".htpasswd",
        ".envrc",
        ".vault-token",
        ".boto",
        ".s3cfg",
        ".bash_history",
        ".zsh_history",
        "credentials.json",
        "client_secrets.json",
        "terraform.tfstate",
        "credentials",
        "shadow",
        "gshadow",
    ]
)
_SECRET_SUFFIXES = (
    ".pem",
    ".key",
    ".p12",
    ".pfx",
    ".p8",
    ".keystore",
    ".jks",
    ".ppk",
    ".kdbx",
    ".keychain",
    ".keychain-db",
    ".tfstate",
)
# Folders everything inside which is a credential (or the folder itself, when a command reads it whole).
_SECRET_DIRS = frozenset([".ssh", ".gnupg", ".aws", ".azure", ".kube", ".password-store"])
_SECRET_DIR_RUNS = frozenset([(".config", "gcloud"), (".config", "gh"), (".config", "hub")])
# Files identified by their folder and name.
_SECRET_FILE_RUNS = frozenset(
    [
        (".docker", "config.json"),
        (".cargo", "credentials"),
        (".cargo", "credentials.toml"),
        (".gem", "credentials"),
        (".terraform.d", "credentials.tfrc.json"),
    ]
)
# Names a wildcard is tried against: a pattern that could match one of these is a possible secrets path.
_SECRET_EXAMPLES = (
    ".env",
    ".env.local",
    "prod.env",
    "id_rsa",
    "id_ed25519",
    "server.pem",
    "tls.key",
    "cert.p12",
    "secrets.yaml",
    "secrets.json",
    "credentials",
    ".netrc",
    ".npmrc",
    ".git-credentials",
)
# What a ``secrets.*`` file holds data in (a ``secrets.py`` is code, ``secrets.example.yaml`` a template).
_DATA_EXTENSIONS = frozenset(
    ["yaml", "yml", "json", "toml", "ini", "env", "txt", "conf", "cfg", "properties", "xml", "enc", "age", "gpg"]
)
_WILDCARD = re.compile(r"[*?\[]")
# No file name is longer (NAME_MAX); a longer wildcard pattern is not matched (``fnmatch`` translates a pattern
# into a regular expression, whose size and cost grow with the pattern).
_MAX_PATTERN_NAME = 255


def _components(path: str) -> list[str]:
    return [part for part in _SEPARATORS.split(path.lower()) if part]


def _has_run(parts: list[str], runs: frozenset[tuple[str, ...]]) -> bool:
    for run in runs:
        size = len(run)
        if any(tuple(parts[i : i + size]) == run for i in range(len(parts) - size + 1)):
            return True
    return False


def is_third_party_path(path: str) -> bool:
    """Whether a local path lies in a folder whose files a third party wrote: a dependency tree or package
    cache (``node_modules``, ``vendor``, ``site-packages``, a virtual environment, ``.cargo/registry``,
    ``go/pkg/mod``, ``.m2/repository``, ``Pods``, ...), a downloads folder, or pip's temporary build folders."""
    parts = _components(path)
    if any(part in THIRD_PARTY_DIRS or part.startswith(THIRD_PARTY_DIR_PREFIXES) for part in parts):
        return True
    return _has_run(parts, THIRD_PARTY_DIR_RUNS)


def _is_secret_name(name: str) -> bool:
    if name in _SECRET_NAMES or name.endswith(_SECRET_SUFFIXES):
        return True
    if name == ".env" or (name.endswith(".env") and name != "example.env"):
        return True
    if name.startswith(".env."):
        return not any(part in _ENV_TEMPLATES for part in name.split(".")[2:])
    stem, _, rest = name.partition(".")
    if stem not in ("secrets", "secret", "client_secret"):
        return False
    extensions = rest.split(".") if rest else []
    return all(ext in _DATA_EXTENSIONS for ext in extensions)


def is_secrets_path(path: str) -> bool:
    """Whether a local path names a secrets file or folder: ``.env`` files (not ``.env.example``, ``.sample``,
    ``.template``), private keys (``id_rsa``, ``*.pem``, ``*.key``, ``*.p12``, ...), credentials of cloud and
    package tools (``~/.aws/``, ``~/.config/gcloud/``, ``.kube/``, ``.docker/config.json``, ``.npmrc``,
    ``.pypirc``, ``.netrc``, ``.git-credentials``, ``~/.ssh/``) and ``secrets.*`` files. A wildcard pattern
    (``*.pem``, ``~/.ssh/*``) counts when it could match one."""
    parts = _components(path)
    if not parts:
        return False
    if any(part in _SECRET_DIRS for part in parts):
        return True
    if _has_run(parts, _SECRET_DIR_RUNS) or _has_run(parts, _SECRET_FILE_RUNS):
        return True
    name = parts[-1]
    if _WILDCARD.search(name):
        if len(name) > _MAX_PATTERN_NAME:
            return True  # a pattern too long to translate and match cheaply is taken to match a secret
        return any(fnmatch.fnmatchcase(example, name) for example in _SECRET_EXAMPLES)
    return _is_secret_name(name)
