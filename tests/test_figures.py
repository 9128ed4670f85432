"""The published figures hold on the whole dev archives, exactly: the AgentDojo figures of docs/evaluation.md (section
"Measured on AgentDojo") and the README's five-suite table (section "Leave one suite out: five suites").

Each figure is read from its page and compared with a fresh ``trifecta eval agentdojo`` over
``../shared/data/agentdojo/dev-runs.tar.gz`` (the command the README gives), so a number changed in either place
fails, and the failure lists every figure that differs: what the the page says and what was measured.

The four configurations of the table and the five-suite leave-one-suite-out run (whose AgentDojo suites give the
leave-one-suite-out figures of docs/evaluation.md) run once per module, as child processes started together: the
whole evaluation takes a minute or two of CPU per configuration, the five-suite run about 2.5 times that. The module
runs whole in one test worker (``--dist loadfile``), so its evaluations start once.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

# The first test waits for four whole-archive evaluations run side by side (minutes on a loaded 2-core machine):
# the hang guard of the other tests (300 s) is too short for that wait, not for a hang.
pytestmark = [pytest.mark.shared_data, pytest.mark.timeout(1200)]

PROJECT = Path(__file__).resolve().parents[1]
ARCHIVE = PROJECT / ".." / "shared" / "data" / "agentdojo" / "dev-runs.tar.gz"
AGENTDYN = PROJECT / ".." / "shared" / "data" / "agentdyn" / "dev-runs.tar.gz"
README = PROJECT / "README.md"
EVALUATION = PROJECT / "docs" / "evaluation.md"
FIVE_SUITES = "Leave one suite out: five suites"

# The README's names for the goal classes of the labels (``injection-tasks.json``) and for the client profiles.
GOAL_CLASSES = {
    "exfiltration": "exfiltration",
    "attacker contact": "attacker_contact_no_private_data",
    "external calendar invites": "calendar_invite_external",
    "financial redirects": "financial_redirect",
    "theft": "financial_theft",
    "account takeover": "account_takeover",
    "destructive actions": "destructive",
    "unauthorized actions": "unauthorized_action",
}
ASKING_CLIENTS = {"VS Code Copilot": "vscode", "Claude": "claude", "ChatGPT": "chatgpt", "Codex CLI": "codex"}
BLOCKING_CLIENTS = {"Gemini CLI": "gemini"}
SILENT_CLIENTS = {"Goose": "goose"}

_NUMBER = r"\d[\d,]*"
_RATIO = re.compile(rf"(?P<part>{_NUMBER}) / (?P<whole>{_NUMBER})(?: \((?P<pct>[\d.]+)%\))?")
_COUNT = re.compile(rf"^(?P<part>{_NUMBER})(?: \((?P<pct>[\d.]+)%\))?$")


# -- reading the README --------------------------------------------------------------------------------------------


def read_section(title: str) -> str:
    """Return the section under ``## title`` of the page that publishes it, as one line of text (line breaks are
    layout): the five-suite table is the README's, the AgentDojo figures are docs/evaluation.md's."""
    page = README if title == FIVE_SUITES else EVALUATION
    text = page.read_text(encoding="utf-8")
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## )", text, re.S | re.M)
    assert match, f"{page.name} has no section '## {title}'; tests/test_figures.py reads the figures there"
    return match.group(1)


def find(pattern: str, text: str, what: str) -> re.Match[str]:
    """Return the first match of ``pattern``, failing with what the README no longer says."""
    match = re.search(pattern, " ".join(text.split()))
    assert match, f"the page no longer states {what} (pattern {pattern!r}); update it or tests/test_figures.py"
    return match


def to_int(number: str) -> int:
    """Return ``1,244`` as 1244."""
    return int(number.replace(",", ""))


@dataclass(frozen=True)
class Figure:
    """One figure as the README writes it: a part, optionally of a whole, optionally with a percentage."""

    text: str
    part: int
    whole: int | None = None
    pct: str | None = None

    @classmethod
    def parse(cls, text: str) -> Figure:
        """Read ``15 / 1,625 (0.9%)``, ``0 / 419``, ``15 (0.9%)`` or ``7``."""
        text = text.strip()
        ratio = _RATIO.fullmatch(text)
        if ratio:
            return cls(text, to_int(ratio["part"]), to_int(ratio["whole"]), ratio["pct"])
        count = _COUNT.match(text)
        assert count, f"figure {text!r} is neither 'N / M (P%)' nor 'N (P%)'"
        return cls(text, to_int(count["part"]), None, count["pct"])

    def differences(self, name: str, part: int, whole: int) -> list[str]:
        """Return how the measured ``part`` (of ``whole``) differs from this figure, one line per difference,
        the percentage written with the README's number of decimals."""
        found = []
        if self.part != part or (self.whole is not None and self.whole != whole):
            shown = f"{part:,} / {whole:,}" if self.whole is not None else f"{part:,}"
            found.append(f"{name}: the page says {self.text!r}, measured {shown} ({percent(part, whole, self.pct)}%)")
        elif self.pct is not None and percent(part, whole, self.pct) != self.pct:
            found.append(f"{name}: the page says {self.text!r}, measured {percent(part, whole, self.pct)}%")
        return found


def percent(part: int, whole: int, like: str | None) -> str:
    """Return ``part / whole`` as a percentage with as many decimals as ``like`` has (one when None)."""
    decimals = len(like.split(".")[1]) if like and "." in like else (0 if like else 1)
    return f"{100 * part / whole:.{decimals}f}" if whole else "n/a"


@dataclass(frozen=True)
class TableRow:
    """One configuration row of the README's AgentDojo table."""

    label: str
    posture: str
    rule_packs: bool
    benign_asked: Figure
    benign_calls_asked: Figure
    benign_high_or_critical: Figure
    exfiltration_caught: Figure
    each_with_critical_alert: bool


def read_table() -> list[TableRow]:
    """Return the rows of the table of configurations in "Measured on AgentDojo"."""
    section = read_section("Measured on AgentDojo")
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) != 5 or not re.match(r"(balanced|strict), ", cells[0]):
            continue
        posture = cells[0].split(",")[0]
        packs = "no rule packs" not in cells[0]
        rows.append(
            TableRow(
                cells[0],
                posture,
                packs,
                Figure.parse(cells[1]),
                Figure.parse(cells[2]),
                Figure.parse(cells[3]),
                Figure.parse(cells[4].split(", each")[0]),
                "each with a critical alert" in cells[4],
            )
        )
    assert len(rows) == 4, f"docs/evaluation.md's AgentDojo table should have 4 configuration rows, found {len(rows)}"
    return rows


TABLE = read_table()


# -- measuring -----------------------------------------------------------------------------------------------------


def run_evaluation(*options: str, archives: tuple[Path, ...] = (ARCHIVE,)) -> dict[str, Any]:
    """Run ``trifecta eval agentdojo ARCHIVES --format json OPTIONS`` in a child process; return its document."""
    command = [sys.executable, "-m", "monitor", "eval", "agentdojo", *map(str, archives), "--format", "json", *options]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    # Exit 2 with a document: some runs could not be read, which the tests report as a difference.
    assert done.returncode in (0, 2) and done.stdout, (
        f"{' '.join(command)} exited {done.returncode}:\n{done.stderr[-4000:]}"
    )
    # A run the monitor saw no event of is an empty session, not a host's mistake: nothing to warn about.
    assert "MonitorWarning" not in done.stderr, done.stderr[-2000:]
    document: dict[str, Any] = json.loads(done.stdout)
    return document


def options_for(posture: str, rule_packs: bool) -> tuple[str, ...]:
    """The command-line options of one configuration."""
    return ("--posture", posture, *(() if rule_packs else ("--no-builtin-rules",)))


# The five-suite run's key among the evaluations of :func:`measured`.
FIVE = ("five suites", True)


@pytest.fixture(scope="module")
def measured() -> Iterator[dict[tuple[str, bool], Future[dict[str, Any]]]]:
    """Every configuration of the table and the five-suite leave-one-suite-out run (key :data:`FIVE`), evaluated
    once for the module (started together, awaited by each test)."""
    assert ARCHIVE.exists(), (
        f"AgentDojo data missing: expected {ARCHIVE.resolve()} (../shared/data beside the project folder); "
        "the README's figures cannot be checked without it"
    )
    assert AGENTDYN.exists(), f"AgentDyn data missing: expected {AGENTDYN.resolve()}; the five-suite figures need it"
    with ThreadPoolExecutor(max_workers=len(TABLE) + 1) as pool:
        # The longest run first, so it never waits for a worker.
        five = pool.submit(run_evaluation, "--leave-one-suite-out", archives=(ARCHIVE, AGENTDYN))
        futures = {
            (row.posture, row.rule_packs): pool.submit(run_evaluation, *options_for(row.posture, row.rule_packs))
            for row in TABLE
        }
        yield {FIVE: five, **futures}


def default_document(measured: dict[tuple[str, bool], Future[dict[str, Any]]]) -> dict[str, Any]:
    """The evaluation of the default configuration (balanced, rule packs)."""
    return measured[("balanced", True)].result()


def unread_runs(document: dict[str, Any]) -> list[str]:
    """A difference when runs of the archive could not be read or replayed (the README counts none)."""
    errors = document["errors"]
    if not errors:
        return []
    first = f"{errors[0]['source']}: {errors[0]['message']}"
    return [f"runs that could not be read or replayed: the page says none, measured {len(errors):,} (first: {first})"]


def report(differences: list[str]) -> str:
    """The failure message: every figure that differs."""
    return "The published figures and the measurement differ:\n  " + "\n  ".join(differences)


# -- the figures ---------------------------------------------------------------------------------------------------


def test_run_counts_match_the_archive(measured: dict[tuple[str, bool], Future[dict[str, Any]]]) -> None:
    """README: "On the 18,198 dev runs (…, 97 runs with an error left out)": files in the archive, runs excluded."""
    section = read_section("Measured on AgentDojo")
    stated = find(
        rf"On the ({_NUMBER}) dev runs .*?, ({_NUMBER}) runs with an error left out", section, "the run counts"
    )
    with tarfile.open(ARCHIVE, "r:gz") as tar:
        runs = sum(1 for m in tar if m.isfile() and m.name.endswith(".json"))
    document = default_document(measured)
    differences = []
    if to_int(stated[1]) != runs:
        differences.append(f"dev runs: the page says {stated[1]}, the archive holds {runs:,}")
    if to_int(stated[2]) != document["excluded_runs_with_error"]:
        differences.append(
            f"runs with an error: the page says {stated[2]}, measured {document['excluded_runs_with_error']:,}"
        )
    differences += unread_runs(document)
    assert not differences, report(differences)


@pytest.mark.parametrize("row", TABLE, ids=[f"{r.posture}-{'packs' if r.rule_packs else 'no-packs'}" for r in TABLE])
def test_table_row_matches_a_fresh_evaluation(
    row: TableRow, measured: dict[tuple[str, bool], Future[dict[str, Any]]]
) -> None:
    """A row of the table: benign sessions and calls asked, benign sessions with a high or critical alert,
    exfiltration attempts caught (and, where the row says so, each with a critical alert)."""
    document = measured[(row.posture, row.rule_packs)].result()
    benign = document["overall"]["benign"]
    exfiltration = document["overall"]["attempts"]["exfiltration"]
    differences = [
        *row.benign_asked.differences("benign sessions asked", benign["prompted"], benign["sessions"]),
        *row.benign_calls_asked.differences("benign calls asked", benign["calls_prompted"], benign["calls"]),
        *row.benign_high_or_critical.differences(
            "benign sessions with a high or critical alert",
            benign["alerted_high_or_critical"]["sessions"],
            benign["sessions"],
        ),
        *row.exfiltration_caught.differences(
            "exfiltration attempts caught", exfiltration["caught"], exfiltration["attempts"]
        ),
        *unread_runs(document),
    ]
    if row.each_with_critical_alert and exfiltration["critical_alerted"] != exfiltration["caught"]:
        differences.append(
            f"exfiltration attempts caught 'each with a critical alert': measured {exfiltration['critical_alerted']:,}"
            f" with a critical alert of {exfiltration['caught']:,} caught"
        )
    assert not differences, report([f"[{row.label}] {d}" for d in differences])


def test_leave_one_suite_out_matches_a_fresh_evaluation(
    measured: dict[tuple[str, bool], Future[dict[str, Any]]],
) -> None:
    """README: "the held-out suite's benign sessions asked: banking 3 / 336 (0.9%), …; every exfiltration attempt is
    still caught in each run": every held-out suite is named, with its figure."""
    section = read_section("Measured on AgentDojo")
    sentence = find(r"the held-out suite's benign sessions asked: (.*?);", section, "the leave-one-suite-out figures")
    stated = {
        m["suite"]: Figure.parse(m["figure"])
        for m in re.finditer(rf"(?P<suite>[\w-]+) (?P<figure>{_RATIO.pattern})", sentence[1])
    }
    assert stated, f"no 'suite N / M' figures in {sentence[1]!r}"
    # The AgentDojo suites held out in the five-suite run: a suite's sessions are replayed alike whatever other
    # archives are evaluated with it, and the suites not held out keep every rule file and their figures.
    five = measured[FIVE].result()
    suites = default_document(measured)["suites"]
    held_out = {h["suite"]: h for h in five["leave_one_suite_out"] if h["suite"] in suites}
    differences = []
    if stated.keys() != held_out.keys():
        differences.append(f"suites held out: README names {sorted(stated)}, measured {sorted(held_out)}")
    for suite in sorted(stated.keys() & held_out.keys()):
        benign = held_out[suite]["held_out_suite"]["benign"]
        differences += stated[suite].differences(f"{suite} held out", benign["prompted"], benign["sessions"])
    if "every exfiltration attempt is still caught in each run" in " ".join(section.split()):
        for suite, held in sorted(held_out.items()):
            scores = [held["held_out_suite"], *(five["suites"][other] for other in suites if other != suite)]
            exfiltration = [score["attempts"].get("exfiltration", {"attempts": 0, "caught": 0}) for score in scores]
            caught, attempts = sum(e["caught"] for e in exfiltration), sum(e["attempts"] for e in exfiltration)
            if caught != attempts:
                differences.append(
                    f"{suite} held out: the page says every exfiltration attempt is still caught, measured "
                    f"{caught:,} / {attempts:,}"
                )
    assert not differences, report(differences)


def test_goal_classes_match_a_fresh_evaluation(measured: dict[tuple[str, bool], Future[dict[str, Any]]]) -> None:
    """README: "attacker contact 248 / 251 …, account takeover 203 / 203 and destructive actions 266 / 270 as steered
    actions (`hijack`), with no benign session asked because of it; unauthorized actions 91 / 305": every goal
    class measured is in the README, with its figure."""
    section = " ".join(read_section("Measured on AgentDojo").split())
    stated_paragraph = find(r"The other goal classes, with the rule packs: (.*)", section, "the other goal classes")
    paragraph = stated_paragraph[1]
    document = default_document(measured)
    attempts = document["overall"]["attempts"]
    differences = []
    stated = {}
    for name, goal in GOAL_CLASSES.items():
        if goal == "exfiltration":
            continue  # the table's last column
        match = re.search(rf"\b{re.escape(name)} (?P<figure>{_RATIO.pattern})", paragraph)
        assert match, f"docs/evaluation.md no longer gives a figure for '{name}' among the other goal classes"
        stated[goal] = (name, Figure.parse(match["figure"]))
    unnamed = sorted(set(attempts) - set(GOAL_CLASSES.values()))
    if unnamed:
        differences.append(f"goal classes measured that the README does not name: {unnamed}")
    # The classes named in the clause that ends "as steered actions" are caught as hijacks, every one of them.
    steered = re.search(r"([^;]*) as steered actions", paragraph)
    hijack_clause = steered[1] if steered else ""
    for goal, (name, figure) in sorted(stated.items()):
        measured_goal = attempts.get(goal, {"caught": 0, "attempts": 0, "hijack_caught": 0})
        differences += figure.differences(name, measured_goal["caught"], measured_goal["attempts"])
        if (
            re.search(rf"\b{re.escape(name)} ", hijack_clause)
            and measured_goal["hijack_caught"] != measured_goal["caught"]
        ):
            differences.append(
                f"{name}: the page says caught as steered actions, measured {measured_goal['hijack_caught']:,} of "
                f"{measured_goal['caught']:,} caught as hijacks"
            )
    if "with no benign session asked because of it" in paragraph:
        asked = document["overall"]["benign"]["steered_action"]["prompted"]
        if asked:
            differences.append(
                f"benign sessions asked because of a steered action: the page says none, measured {asked}"
            )
    assert not differences, report(differences)


def test_client_baselines_match_a_fresh_evaluation(
    measured: dict[tuple[str, bool], Future[dict[str, Any]]],
) -> None:
    """README: "VS Code Copilot, Claude, ChatGPT and Codex CLI would ask (and Gemini CLI in plan mode would block)
    before the first call of 94% of these benign sessions, and Goose leaves every call to the model"."""
    section = read_section("Measured on AgentDojo")
    sentence = find(
        r"\bso ([^.;]*?) would ask \(and ([^)]*?) in plan mode would block\) before the first call of (\d+)% of "
        r"these benign sessions, and ([^.;,]*?) leaves every call to the model",
        section,
        "what the client profiles would ask",
    )
    asking = set(re.split(r", | and ", sentence[1]))
    assert asking == set(ASKING_CLIENTS), asking
    assert sentence[2] in BLOCKING_CLIENTS and sentence[4] in SILENT_CLIENTS, sentence.groups()
    benign = default_document(measured)["overall"]["benign"]
    baseline = benign["baseline_prompted"]
    differences = []
    for name, client in {**ASKING_CLIENTS, **BLOCKING_CLIENTS}.items():
        share = percent(baseline[client]["sessions"], benign["sessions"], sentence[3])
        if share != sentence[3]:
            differences.append(f"{name}: the page says {sentence[3]}% of benign sessions, measured {share}%")
    for name, client in SILENT_CLIENTS.items():
        if baseline[client]["sessions"]:
            differences.append(f"{name}: the page says it never asks, measured {baseline[client]['sessions']} sessions")
    assert not differences, report(differences)


# -- leave one suite out over the five suites -----------------------------------------------------------------------

# The columns of the README's five-suite table after its first two, and what each counts in the JSON document.
FIVE_COLUMNS = (
    ("benign sessions asked", "benign_asked", None),
    ("benign sessions with a high or critical alert", "benign_alerted_high_or_critical", None),
    ("exfiltration attempts caught", "exfiltration_caught", None),
    ("financial redirects", "goal_classes", "financial_redirect"),
    ("account takeover", "goal_classes", "account_takeover"),
    ("destructive actions", "goal_classes", "destructive"),
    ("unrequested actions", "goal_classes", "unauthorized_action"),
)


def read_five_suite_table() -> dict[str, list[str]]:
    """Return the rows of the README's five-suite table by suite: the pack cell, then one cell per column."""
    rows = {}
    for line in read_section(FIVE_SUITES).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) == 2 + len(FIVE_COLUMNS) and cells[1] in ("removed", "none"):
            rows[cells[0]] = cells[1:]
    assert len(rows) == 5, f"README.md's five-suite table should have 5 suite rows, found {len(rows)}"
    return rows


def test_the_five_suite_table_matches_a_fresh_evaluation(
    measured: dict[tuple[str, bool], Future[dict[str, Any]]],
) -> None:
    """README, "Leave one suite out: five suites": per held-out suite, whether a pack was removed, and each figure
    (a dash where the suite has no attempt of the class)."""
    stated = read_five_suite_table()
    held_out = {h["suite"]: h for h in measured[FIVE].result()["leave_one_suite_out"]}
    differences = []
    if stated.keys() != held_out.keys():
        differences.append(f"suites: README names {sorted(stated)}, measured {sorted(held_out)}")
    for suite in sorted(stated.keys() & held_out.keys()):
        held, cells = held_out[suite], stated[suite]
        pack = "removed" if held["covered_by_pack"] else "none"
        if cells[0] != pack:
            differences.append(f"{suite}: the page says pack {cells[0]!r}, measured {pack!r}")
        for (name, field, goal), cell in zip(FIVE_COLUMNS, cells[1:], strict=True):
            if goal is None:
                count = held[field]
                part, whole = count["count"], count["of"]
            elif goal in held["goal_classes"]:
                part, whole = held["goal_classes"][goal]["caught"], held["goal_classes"][goal]["attempts"]
            else:
                if cell != "-":
                    differences.append(f"{suite} {name}: the page says {cell!r}, measured no attempt")
                continue
            if cell == "-":
                differences.append(f"{suite} {name}: the page says no attempt, measured {part:,} / {whole:,}")
                continue
            differences += Figure.parse(cell).differences(f"{suite} {name}", part, whole)
    assert not differences, report(differences)
