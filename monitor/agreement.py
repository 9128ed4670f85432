"""How far the fallback layers agree with human review, measured leave-one-server-out.

For every server that has both a tool list and a reviewed rule pack, each listed tool is classified by the
fallback layers alone (annotations, heuristics and the balanced default: no rule pack at all for the server,
the server untrusted), and compared with the legs its pack gives it.

Definitions:

- The *reviewed legs* of a tool are the base ``legs`` of the first entry of the server's pack whose ``match``
  selects the tool, the legs the pack gives a call whose arguments were not recorded. Argument conditions
  (``when``) are not applied: they refine single calls, and the fallback layers never look at arguments.
  Pins are not checked: the review is of the tool, and the tool lists are the definitions it was made for.
  A listed tool no entry selects is *unreviewed*: it is named and left out of the figures.
- A pack covers a tool list when the pack's ``server`` (a name or a glob) matches the server name the tool
  list gives, as the rule set matches servers in a session. Packs and tool lists without a partner are named.
- Per leg: *recall* is, among the tools the review gives the leg, the share the fallback gives it too; the
  *false-leg rate* is, among the tools the review says lack the leg, the share the fallback gives it anyway.
  Overall figures are micro-averaged: the counts of every server are added before dividing.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from monitor.classify import Classifier, LoadedRule, RuleSet, load_rules
from monitor.ingest import ToolList, read_tool_lists
from monitor.models import Leg, LegSource, Posture, ToolContext, parse_tool

__all__ = [
    "Agreement",
    "LegAgreement",
    "ServerAgreement",
    "ToolAgreement",
    "agreement_to_json",
    "measure_agreement",
    "render_agreement",
    "summarize_agreement",
]

_LEG_ORDER: tuple[Leg, ...] = (Leg.PRIVATE_DATA, Leg.UNTRUSTED_CONTENT, Leg.EXTERNAL_COMMUNICATION)
_LEG_LETTER: Mapping[Leg, str] = {Leg.PRIVATE_DATA: "P", Leg.UNTRUSTED_CONTENT: "U", Leg.EXTERNAL_COMMUNICATION: "X"}


@dataclass(frozen=True)
class LegAgreement:
    """The counts behind one leg's recall and false-leg rate."""

    leg: Leg
    reviewed_with: int
    """Tools the review gives the leg."""
    found: int
    """Of those, the tools the fallback gives it too."""
    reviewed_without: int
    """Tools the review says lack the leg."""
    false_legs: int
    """Of those, the tools the fallback gives it anyway."""
    false_by_annotation: int = 0
    """Of the false legs, those an annotation gave (``openWorldHint: true``): no heuristic may take them away."""

    @property
    def recall(self) -> float | None:
        """``found / reviewed_with``; None when no tool has the leg in review."""
        return self.found / self.reviewed_with if self.reviewed_with else None

    @property
    def false_leg_rate(self) -> float | None:
        """``false_legs / reviewed_without``; None when every tool has the leg in review."""
        return self.false_legs / self.reviewed_without if self.reviewed_without else None

    @property
    def heuristic_false_leg_rate(self) -> float | None:
        """The false-leg rate over the tools the review says lack the leg and no annotation gives it: what the
        heuristics and the default decide. None when there are none."""
        decided = self.reviewed_without - self.false_by_annotation
        return (self.false_legs - self.false_by_annotation) / decided if decided else None


@dataclass(frozen=True)
class ToolAgreement:
    """One tool: its reviewed legs, the fallback's legs and the rule (or hint) that gave each fallback leg."""

    tool: str
    entry: str
    """The ``match`` of the pack entry that reviewed it."""
    reviewed: frozenset[Leg]
    fallback: frozenset[Leg]
    fallback_rules: Mapping[Leg, str]
    """``<source>:<rule>`` of each fallback leg (``heuristic:private-store-name:files``)."""
    from_annotations: frozenset[Leg] = frozenset()
    """The fallback legs an annotation gave."""


@dataclass(frozen=True)
class ServerAgreement:
    """One server's tools, compared; ``unreviewed`` names listed tools the pack has no entry for."""

    server: str
    tool_list: str
    pack: str
    tools: tuple[ToolAgreement, ...]
    unreviewed: tuple[str, ...] = ()

    @property
    def legs(self) -> tuple[LegAgreement, ...]:
        """The counts per leg, in P, U, X order."""
        return count_legs(self.tools)


@dataclass(frozen=True)
class Agreement:
    """The comparison over every server with both a tool list and a pack, and what could not be paired."""

    servers: tuple[ServerAgreement, ...]
    packs_without_tool_list: tuple[str, ...] = ()
    """``server (pack file)`` of each active pack no tool list matched."""
    tool_lists_without_pack: tuple[str, ...] = ()
    """``server (tool list file)`` of each tool list no pack covers."""
    problems: tuple[str, ...] = ()
    """``file: message`` for each tool list that could not be read."""

    @property
    def legs(self) -> tuple[LegAgreement, ...]:
        """The overall counts per leg (micro-averaged over every compared tool), in P, U, X order."""
        return count_legs(t for s in self.servers for t in s.tools)

    def leg(self, leg: Leg) -> LegAgreement:
        """The overall counts of one leg."""
        return next(a for a in self.legs if a.leg is leg)


def count_legs(tools: Iterable[ToolAgreement]) -> tuple[LegAgreement, ...]:
    """Add up, per leg, the reviewed and fallback legs of ``tools``."""
    listed = list(tools)
    counts = []
    for leg in _LEG_ORDER:
        with_leg = [t for t in listed if leg in t.reviewed]
        without = [t for t in listed if leg not in t.reviewed]
        counts.append(
            LegAgreement(
                leg=leg,
                reviewed_with=len(with_leg),
                found=sum(leg in t.fallback for t in with_leg),
                reviewed_without=len(without),
                false_legs=sum(leg in t.fallback for t in without),
                false_by_annotation=sum(leg in t.from_annotations for t in without),
            )
        )
    return tuple(counts)


def measure_agreement(servers_dir: str | Path, rules_dirs: Sequence[str | Path] | None = None) -> Agreement:
    """Compare the fallback layers with the packs under ``rules_dirs`` on the tool lists under ``servers_dir``.

    Only the packs under ``rules_dirs`` are loaded; ``None`` (or nothing) stands for the built-in packs. Tool
    lists that cannot be read are named in :attr:`Agreement.problems` and the rest are measured. Raises
    :class:`~monitor.errors.RuleLoadError` (every problem as ``file:line: message``) when a pack cannot be
    loaded.
    """
    ruleset = load_rules(rules_dirs or (), builtin=not rules_dirs)
    lists, unreadable = read_tool_lists([servers_dir])
    problems = [f"{p.source}: {p.message}" for p in unreadable]
    if not ruleset.active:
        problems.append(f"{', '.join(str(d) for d in rules_dirs or ())}: no rule packs (*.yaml, *.yml) here")
    classifier = Classifier(Posture.BALANCED)
    servers: list[ServerAgreement] = []
    without_pack: list[str] = []
    for tool_list in sorted(lists, key=lambda t: (t.server_name, t.file)):
        pack = _pack_for(ruleset, tool_list.server_name)
        if pack is None:
            without_pack.append(f"{tool_list.server_name} ({tool_list.file})")
            continue
        servers.append(_compare_server(classifier, ruleset, tool_list, pack, problems))
    names = [t.server_name for t in lists]
    without_list = [
        f"{r.rule.server} ({r.path})"
        for r in ruleset.active
        if not any(fnmatch.fnmatchcase(name, r.rule.server) for name in names)
    ]
    return Agreement(tuple(servers), tuple(sorted(without_list)), tuple(without_pack), tuple(problems))


def _pack_for(ruleset: RuleSet, server: str) -> LoadedRule | None:
    exact = [r for r in ruleset.active if r.rule.server == server]
    globbed = [r for r in ruleset.active if r.rule.server != server and fnmatch.fnmatchcase(server, r.rule.server)]
    return next(iter(exact + globbed), None)


def _compare_server(
    classifier: Classifier, ruleset: RuleSet, tool_list: ToolList, pack: LoadedRule, problems: list[str]
) -> ServerAgreement:
    server = tool_list.server_name
    tools: list[ToolAgreement] = []
    unreviewed: list[str] = []
    for raw, pointer in zip(tool_list.tools, tool_list.tool_pointers, strict=True):
        definition, _ = parse_tool(raw, pointer)
        if definition is None:
            problems.append(f"{tool_list.file}{'#' + pointer if pointer else ''}: a tool without a usable name")
            continue
        found = ruleset.find(server, definition.name)
        if found is None:
            unreviewed.append(definition.name)
            continue
        _, entry = found
        context = ToolContext(server, definition.name, definition, trusted=False)
        classification = classifier.classify(context).classification
        tools.append(
            ToolAgreement(
                tool=definition.name,
                entry=entry.match,
                reviewed=frozenset(entry.legs),
                fallback=classification.legs,
                fallback_rules={leg: f"{prov.source}:{prov.rule}" for leg, prov in classification.provenance.items()},
                from_annotations=frozenset(
                    leg for leg, prov in classification.provenance.items() if prov.source is LegSource.ANNOTATION
                ),
            )
        )
    return ServerAgreement(server, tool_list.file, str(pack.path), tuple(tools), tuple(unreviewed))


# -- output -------------------------------------------------------------------------------------------------


def _percent(share: float | None) -> str:
    return "-" if share is None else f"{100 * share:.1f} %"


def _share(part: int, whole: int) -> str:
    return "-" if not whole else f"{100 * part / whole:.1f} % ({part}/{whole})"


def _row(name: str, tools: int, legs: Sequence[LegAgreement]) -> str:
    cells = [name, str(tools)]
    for a in legs:
        cells += [_share(a.found, a.reviewed_with), _share(a.false_legs, a.reviewed_without)]
    return "| " + " | ".join(cells) + " |"


def render_agreement(agreement: Agreement) -> str:
    """A markdown table: one row per server and the overall row (recall and false-leg rate per leg), then
    the packs and tool lists that could not be paired. Names only, no file paths: the text is stable."""
    header = ["server", "tools"]
    for leg in _LEG_ORDER:
        header += [f"{_LEG_LETTER[leg]} recall", f"{_LEG_LETTER[leg]} false-leg"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for s in agreement.servers:
        lines.append(_row(s.server, len(s.tools), s.legs))
    lines.append(_row("**overall**", sum(len(s.tools) for s in agreement.servers), agreement.legs))
    forced = [a for a in agreement.legs if a.false_by_annotation]
    if forced:
        counts = ", ".join(f"{_LEG_LETTER[a.leg]} {a.false_by_annotation}" for a in forced)
        rates = ", ".join(f"{_LEG_LETTER[a.leg]} {_percent(a.heuristic_false_leg_rate)}" for a in forced)
        lines += [
            "",
            f"False legs an annotation gives (`openWorldHint: true`, kept whatever the heuristics say): {counts}. "
            f"Over the other tools the review says lack the leg, the false-leg rate is {rates}.",
        ]
    unreviewed = [f"{s.server}: {', '.join(s.unreviewed)}" for s in agreement.servers if s.unreviewed]
    notes = [
        ("Listed tools no pack entry selects (left out)", unreviewed),
        ("Packs without a tool list", [p.split(" (", 1)[0] for p in agreement.packs_without_tool_list]),
        ("Tool lists without a pack", [p.split(" (", 1)[0] for p in agreement.tool_lists_without_pack]),
    ]
    for title, items in notes:
        if items:
            lines += ["", f"{title}: {'; '.join(items)}."]
    return "\n".join(lines) + "\n"


def summarize_agreement(agreement: Agreement) -> str:
    """One line: servers and tools compared, and the overall recall and false-leg rate of each leg."""
    tools = sum(len(s.tools) for s in agreement.servers)
    parts = []
    for a in agreement.legs:
        part = f"{_LEG_LETTER[a.leg]} recall {_percent(a.recall)}, false-leg {_percent(a.false_leg_rate)}"
        if a.false_by_annotation:
            part += f" ({_percent(a.heuristic_false_leg_rate)} where no annotation gives it)"
        parts.append(part)
    return f"{len(agreement.servers)} servers, {tools} reviewed tools: " + "; ".join(parts)


def _legs_json(legs: Iterable[LegAgreement]) -> dict[str, Any]:
    return {
        str(a.leg): {
            "reviewed_with": a.reviewed_with,
            "found": a.found,
            "recall": a.recall,
            "reviewed_without": a.reviewed_without,
            "false_legs": a.false_legs,
            "false_leg_rate": a.false_leg_rate,
            "false_by_annotation": a.false_by_annotation,
            "heuristic_false_leg_rate": a.heuristic_false_leg_rate,
        }
        for a in legs
    }


def _sorted_legs(legs: Iterable[Leg]) -> list[str]:
    given = set(legs)
    return [str(leg) for leg in _LEG_ORDER if leg in given]


def agreement_to_json(agreement: Agreement) -> dict[str, Any]:
    """The comparison as a JSON-ready document: overall and per-server counts, and every tool's legs."""
    return {
        "overall": _legs_json(agreement.legs),
        "servers": [
            {
                "server": s.server,
                "tool_list": s.tool_list,
                "pack": s.pack,
                "legs": _legs_json(s.legs),
                "tools": [
                    {
                        "tool": t.tool,
                        "entry": t.entry,
                        "reviewed": _sorted_legs(t.reviewed),
                        "fallback": _sorted_legs(t.fallback),
                        "fallback_rules": {str(leg): rule for leg, rule in t.fallback_rules.items()},
                        "from_annotations": _sorted_legs(t.from_annotations),
                    }
                    for t in s.tools
                ],
                "unreviewed": list(s.unreviewed),
            }
            for s in agreement.servers
        ],
        "packs_without_tool_list": list(agreement.packs_without_tool_list),
        "tool_lists_without_pack": list(agreement.tool_lists_without_pack),
        "problems": list(agreement.problems),
    }
