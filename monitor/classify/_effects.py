"""Effects of a call beyond moving data: destructive, privileged, code execution (docs/design.md, "Steered actions").

Like the heuristics, each signal is a line of data, its verbs drawn from the vocabulary of tool words
(:mod:`monitor.classify._vocabulary`). A call's effects come from the tool's ``destructiveHint``
(from any server: it can only add), from its name, and from its arguments: a path that makes code run later
(a CI workflow, a shell start-up file, a git hook, a crontab) is code execution whatever tool writes it.
Effects only ever add caution; a read-only name never removes one.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from monitor.classify._heuristics import tokenize_name
from monitor.classify._vocabulary import DESTRUCTIVE_VERBS, IRREVERSIBLE_VERBS, PATH_WRITE_VERBS, TOOL_WORDS, pick_words
from monitor.evidence import extract_shell_effects, iter_argument_texts
from monitor.models import Effect, ToolContext


@dataclass(frozen=True)
class EffectSignal:
    """One signal: ``effect`` when the tool's name has a word of ``verbs`` and, if ``objects`` is not empty,
    also a word of ``objects``."""

    id: str
    effect: Effect
    verbs: frozenset[str]
    objects: frozenset[str] = frozenset()


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


EFFECT_SIGNALS: tuple[EffectSignal, ...] = (
    EffectSignal(
        "destructive-name",
        Effect.DESTRUCTIVE,
        DESTRUCTIVE_VERBS,
    ),
    EffectSignal(
        "credential-change",
        Effect.PRIVILEGED,
        pick_words(TOOL_WORDS, "update change set reset rotate create add generate revoke"),
        _words(
            "password passwords passphrase credential credentials secret secrets token tokens key keys 2fa mfa"
            " totp ssh login email recovery"
        ),
    ),
    EffectSignal(
        "permission-change",
        Effect.PRIVILEGED,
        pick_words(TOOL_WORDS, "grant revoke set update change add assign share transfer invite"),
        _words(
            "permission permissions role roles access admin owner ownership collaborator collaborators"
            " member members membership acl policy"
        ),
    ),
    EffectSignal("invitation", Effect.PRIVILEGED, pick_words(TOOL_WORDS, "invite")),
    EffectSignal(
        "access-share",
        Effect.PRIVILEGED,
        pick_words(TOOL_WORDS, "share"),
        _words(
            "calendar calendars folder folders drive document documents doc docs file files repo repository"
            " workspace vault project board space notebook sheet spreadsheet album account"
        ),
    ),
    EffectSignal(
        "schedule-code",
        Effect.CODE_EXECUTION,
        pick_words(TOOL_WORDS, "create add set update install register"),
        _words("cron crontab hook hooks webhook workflow workflows job jobs trigger triggers startup script"),
    ),
)
"""The built-in name signals."""

CODE_EXECUTION_PATHS = re.compile(
    r"(?:^|[\\/])(?:"
    r"\.github[\\/]workflows[\\/]|\.gitlab-ci\.ya?ml$|\.circleci[\\/]|azure-pipelines\.ya?ml$|Jenkinsfile$"
    r"|\.buildkite[\\/]|bitbucket-pipelines\.ya?ml$|\.travis\.ya?ml$"
    r"|\.(?:bash|zsh|ksh|tcsh|csh|sh)rc$|\.bash_profile$|\.bash_login$|\.profile$|\.zprofile$|\.zshenv$|\.zlogin$"
    r"|config\.fish$|\.git[\\/]hooks[\\/]|\.husky[\\/]|\.pre-commit-config\.ya?ml$"
    r"|crontab$|cron\.d[\\/]|cron\.(?:hourly|daily|weekly|monthly)[\\/]|systemd[\\/].+\.(?:service|timer)$"
    r"|LaunchAgents[\\/]|LaunchDaemons[\\/]|autostart[\\/]|\.vscode[\\/]tasks\.json$|\.envrc$"
    r"|\.claude[\\/]settings(?:\.local)?\.json$|\.mcp\.json$|\.ssh[\\/]authorized_keys2?$"
    r")",
    re.IGNORECASE,
)
"""Paths whose content runs later without anyone asking: writing there is code execution."""
_MAX_PATH_CHARS = 4096
"""The longest path examined (no file system accepts a longer one); a longer path written to counts as code
execution, since what it names cannot be examined."""


def needs_asking(effects: frozenset[Effect], tool: str) -> bool:
    """Whether an action with ``effects`` is one the user's words must have asked for once untrusted content is in
    the context: a privileged action, or a destructive one that cannot be undone, named so by the tool. (Code that
    runs later is judged by where its content came from: a command line says nothing of what the user asked.)"""
    if Effect.PRIVILEGED in effects:
        return True
    return is_irreversible(effects, tool)


def is_irreversible(effects: frozenset[Effect], tool: str) -> bool:
    """Whether an action with ``effects`` cannot be undone, as the tool's name says (delete, drop, wipe, ...):
    only the user's own words may ask for one, never content the user handed over."""
    return Effect.DESTRUCTIVE in effects and bool(set(tokenize_name(tool)) & IRREVERSIBLE_VERBS)


def classify_effects(tool: ToolContext) -> frozenset[Effect]:
    """Return the effects of a call to ``tool`` (with its arguments, when known)."""
    effects: set[Effect] = set()
    if tool.definition is not None and tool.definition.annotations.destructiveHint is True:
        effects.add(Effect.DESTRUCTIVE)
    effects |= _read_name_effects(tool.name) if len(tool.name) <= _MAX_KEPT_NAME else _find_name_effects(tool.name)
    if tool.arguments and names_code_execution_path(tool.arguments, tool.name):
        effects.add(Effect.CODE_EXECUTION)
    if tool.arguments:
        effects |= classify_shell_effects(tool.arguments)
    return frozenset(effects)


def _find_name_effects(name: str) -> frozenset[Effect]:
    """The effects a tool's name alone says it has."""
    tokens = set(tokenize_name(name))
    return frozenset(
        signal.effect
        for signal in EFFECT_SIGNALS
        if tokens & signal.verbs and (not signal.objects or tokens & signal.objects)
    )


# A session calls a few tools many times: what their names say is worked out once (names up to a length only).
_MAX_KEPT_NAME = 256
_read_name_effects = functools.lru_cache(maxsize=4096)(_find_name_effects)


_SHELL_CODE_EXECUTION = re.compile(
    r"\bcrontab\b|\bsystemctl\s+(?:--user\s+)?enable\b|\bgit\s+config\b[^\n]*\bcore\.hooksPath\b|\blaunchctl\s+load\b"
)
_SHELL_DESTRUCTIVE = re.compile(
    r"\brm\s+-\w*[rf]|\bshred\b|\bgit\s+push\b[^\n]*(?:--force|\s-f\b)|\bgit\s+reset\s+--hard\b|\bdd\s+[^\n]*\bof="
    r"|\bmkfs\b|\bdrop\s+(?:table|database)\b|\btruncate\s+table\b",
    re.IGNORECASE,
)


def classify_shell_effects(arguments: Mapping[str, Any]) -> set[Effect]:
    """Effects of the shell commands among a call's arguments: files written where code runs later, jobs
    scheduled, and commands that destroy data."""
    effects: set[Effect] = set()
    for path, parsed in extract_shell_effects(arguments):
        text = next((t for p, _, t in iter_argument_texts(arguments) if p == path), "")
        if any(CODE_EXECUTION_PATHS.search(w) for w in parsed.writes) or _SHELL_CODE_EXECUTION.search(text):
            effects.add(Effect.CODE_EXECUTION)
        if _SHELL_DESTRUCTIVE.search(text):
            effects.add(Effect.DESTRUCTIVE)
    return effects


def names_code_execution_path(arguments: Mapping[str, Any], tool: str = "") -> bool:
    """Whether a call writes to a path whose content runs later (a workflow, a shell rc file, a hook): a path
    argument names one, or is longer than :data:`_MAX_PATH_CHARS` (not examined, so judged cautiously), and the
    tool writes (by its name, or by carrying content to write)."""
    writes = bool(set(tokenize_name(tool)) & PATH_WRITE_VERBS) or any(
        str(k).lower() in _CONTENT_KEYS for k in arguments
    )
    if not writes:
        return False
    for _, key, text in iter_argument_texts(arguments):
        if key.lower() not in _PATH_KEYS:
            continue
        path = text.strip()
        if len(path) > _MAX_PATH_CHARS or CODE_EXECUTION_PATHS.search(path):
            return True  # a path too long to examine is never judged by its prefix
    return False


_CONTENT_KEYS = _words("content contents new_string new_source text body data source edits files")
_PATH_KEYS = _words("path file_path filepath filename file target destination dest name notebook_path paths")
