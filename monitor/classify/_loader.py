"""Loading rule packs: YAML files validated strictly, every problem named by file and line."""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import orjson
from pydantic import ValidationError

from monitor.classify._overrides import LoadedRule, RuleSet
from monitor.classify._rules import RuleFile, find_wildcard_risks
from monitor.classify._safe_yaml import RULE_FILE_LIMITS, YamlProblem, read_yaml_file
from monitor.errors import RuleLoadError
from monitor.ingest import find_yaml_line

RULE_SUFFIXES = (".yaml", ".yml")


def builtin_rules_dir() -> Path:
    """The built-in packs: shipped inside the package, or the source tree's top-level ``rules/``."""
    packaged = Path(__file__).resolve().parent.parent / "_rules"
    return packaged if packaged.is_dir() else Path(__file__).resolve().parents[2] / "rules"


def load_rules(dirs: Iterable[str | Path] = (), *, builtin: bool = True) -> RuleSet:
    """Load the built-in packs (unless ``builtin=False``) and every ``*.yaml``/``*.yml`` file under ``dirs``.

    Raises :class:`~monitor.errors.RuleLoadError` listing every problem (``file:line: message``): YAML
    errors and files YAML refuses to read safely (too large, aliases past a bound or expanding too far, any
    tag but the core ones), unknown keys, unknown legs, bad globs, unsafe regexes, duplicate ids, a server
    glob that lowers risk without ``allow_wildcard: true`` (:func:`find_wildcard_risks`), and a second file
    for a server already covered that does not say ``overrides: <id>``. A file reached twice loads once.
    """
    roots = ([builtin_rules_dir()] if builtin else []) + [Path(d) for d in dirs]
    problems: list[str] = []
    loaded: list[LoadedRule] = []
    seen: set[Path] = set()
    listed = [_list_rule_files(root) for root in roots]
    # A byte-identical copy of a built-in pack named by the caller (the source folder beside an installed
    # package) is loaded from where the caller named it, and the built-in copy is left out.
    named = {_digest_file(path) for files in listed[1 if builtin else 0 :] for path in files} - {None}
    for index, (root, files) in enumerate(zip(roots, listed, strict=True)):
        if not root.exists():
            problems.append(f"{root}: no such rules folder")
            continue
        for path in files:
            # A folder named twice (the built-in packs named again, a file inside a folder given too) loads once.
            resolved = path.resolve()
            if resolved in seen or (builtin and index == 0 and _digest_file(path) in named):
                continue
            seen.add(resolved)
            rule = _load_file(path, problems)
            if rule is not None:
                loaded.append(rule)
    _check_set(loaded, problems)
    if problems:
        raise RuleLoadError(problems)
    return RuleSet(loaded, hash_rules(loaded))


def _list_rule_files(root: Path) -> list[Path]:
    if not root.exists():
        return []
    return [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.suffix in RULE_SUFFIXES)


def _digest_file(path: Path) -> bytes | None:
    try:
        return hashlib.sha256(path.read_bytes()).digest()
    except OSError:
        return None  # reported by the loader when it reads the file


@functools.cache
def load_builtin_rules() -> RuleSet:
    """The built-in packs, loaded once per process."""
    return load_rules()


def hash_rules(rules: Sequence[LoadedRule]) -> str:
    """sha256 of the canonical JSON of the loaded rules, in id order (the ``ruleset_sha256``)."""
    docs = sorted((_canonical(r) for r in rules), key=lambda d: d["id"])
    return hashlib.sha256(orjson.dumps(docs, option=orjson.OPT_SORT_KEYS)).hexdigest()


def _canonical(loaded: LoadedRule) -> dict[str, Any]:
    doc = loaded.rule.model_dump(mode="json", by_alias=True)
    if not doc["allow_wildcard"]:
        del doc["allow_wildcard"]  # absent and false hash alike, as before the key existed
    for key in ("server_info", "packages"):  # so do an unstated identity
        if not doc[key]:
            del doc[key]
    for entry in doc["tools"]:  # so do the policy fields when unset
        for key in ("read_only", "retry"):
            if entry.get(key) is None:
                entry.pop(key, None)
    return doc


def _load_file(path: Path, problems: list[str]) -> LoadedRule | None:
    try:
        node, data = read_yaml_file(path, RULE_FILE_LIMITS)
    except YamlProblem as exc:
        problems.append(f"{path}:{exc.line}: {exc.message}")
        return None
    if not isinstance(data, dict):
        problems.append(f"{path}:{node.start_mark.line + 1}: a rule file is a mapping")
        return None
    try:
        rule = RuleFile.model_validate(data)
    except ValidationError as exc:
        for err in exc.errors():
            loc = tuple(err["loc"])
            where = ".".join(str(p) for p in loc) or "file"
            message = err["msg"].removeprefix("Value error, ")
            if err["type"] == "extra_forbidden":
                message = f"unknown key {loc[-1]!r}"
            problems.append(f"{path}:{find_yaml_line(node, loc)}: {where}: {message}")
        return None
    seen_matches: set[str] = set()
    for i, entry in enumerate(rule.tools):
        if entry.match in seen_matches:
            problems.append(
                f"{path}:{find_yaml_line(node, ('tools', i, 'match'))}: tools.{i}.match: {entry.match!r} "
                "appears twice; the first entry would always win"
            )
            return None
        seen_matches.add(entry.match)
    lines = {"id": find_yaml_line(node, ("id",)), "server": find_yaml_line(node, ("server",))}
    risks = find_wildcard_risks(rule)
    if risks and not rule.allow_wildcard:
        problems.append(
            f"{path}:{lines['server']}: server {rule.server!r} is a glob, and this file lowers risk for every "
            f"server it matches ({'; '.join(risks)}); pin those entries, name the server exactly, or say "
            "'allow_wildcard: true' to accept it"
        )
        return None
    return LoadedRule(rule, path, lines)


def _check_set(loaded: list[LoadedRule], problems: list[str]) -> None:
    by_id: dict[str, LoadedRule] = {}
    for r in loaded:
        key = str(r.rule.id)
        if key in by_id:
            problems.append(f"{r.source}: duplicate rule id {key} (also {by_id[key].source})")
        else:
            by_id[key] = r
    overridden: dict[str, LoadedRule] = {}
    for r in loaded:
        target = r.rule.overrides
        if target is None:
            continue
        if str(target) not in by_id:
            problems.append(f"{r.source}: overrides {target}, which no loaded rule file has as its id")
        elif str(target) in overridden:
            problems.append(f"{r.source}: rule {target} is already overridden by {overridden[str(target)].source}")
        else:
            overridden[str(target)] = r
    by_server: dict[str, LoadedRule] = {}
    for r in loaded:
        if str(r.rule.id) in overridden:
            continue
        other = by_server.get(r.rule.server)
        if other is not None:
            problems.append(
                f"{r.path}:{r.lines.get('server', 1)}: server {r.rule.server!r} is already covered by rule "
                f"{other.rule.id} ({other.source}); to replace it, say 'overrides: {other.rule.id}'"
            )
        else:
            by_server[r.rule.server] = r
