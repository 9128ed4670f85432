"""Mutation fuzzer: real, valid records, mutated, run through a reader and the engine in-process.

Usage::

    python bench/fuzz.py FORMAT N [--seed S] [--workers W] [--bound SECONDS] [--save DIR]

FORMAT is one of ``agentdojo``, ``jsonl``, ``mcp``, ``claude-code``, ``otlp``, ``toolslist`` (or ``all``).
Seeds are the project's samples (``samples/``) and the shared data (``../shared/data``: AgentDojo runs from
the dev archive, ``tools/list`` results of real servers). Each case takes one seed, mutates one record of
it (type flips, deleted, duplicated and added keys, huge numbers, deep nesting, long strings, unicode,
truncation, byte flips, swapped values, reordered keys, re-spaced JSON) and reads it with the format's
reader followed by an untouched *sentinel*: a valid session (other session and trace ids) in the same
file for the line formats, so the rest of a file must still be read, or another file for AgentDojo runs
and tool lists; through :func:`monitor.analysis.analyze_records` and a :class:`monitor.SessionMonitor`
(tool lists: :func:`monitor.ingest.read_tool_lists`, the linter and ``register_tools``). Counted per case:

- **crash**: an exception out of the reader or the engine, or an engine failure the monitor swallowed
  (``SessionMonitor.internal_errors``);
- **hang**: more than ``--bound`` seconds of CPU time (a ``SIGPROF`` timer), or four times that in wall
  time (a watchdog in the parent kills and restarts the worker);
- **lost**: a valid record missing from the output: a sentinel session not reported with all its calls
  and its level, or, when every mutation of the case keeps the meaning (reordered keys, other spacing),
  any session of the mutated seed reported differently.

Prints one row per format: records (cases), crashes, hangs, lost, and exits 1 when any is non-zero.
With ``--save DIR`` each failing case is written there (its files and the traceback).
"""

from __future__ import annotations

import argparse
import json
import logging
import multiprocessing as mp
import os
import queue
import random
import signal
import sys
import tarfile
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "../shared/data"
FORMATS = ("agentdojo", "jsonl", "mcp", "claude-code", "otlp", "toolslist")
AGENTDOJO_SEEDS = 240
_MAX_SAVED = 50  # failing cases saved per kind and worker
_PROGRESS_EVERY = 5000

# -- mutations -------------------------------------------------------------------------------------------


class Raw:
    """JSON text written as it is (numbers JSON allows but Python does not keep, deep nesting)."""

    def __init__(self, text: str) -> None:
        self.text = text


class DupDict:
    """An object whose key list repeats a key."""

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        self.pairs = pairs


def dump(value: Any, sep: tuple[str, str] = (", ", ": ")) -> str:
    """Serialise ``value`` (with :class:`Raw` and :class:`DupDict` parts) as JSON text."""
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, DupDict):
        return "{" + sep[0].join(json.dumps(k) + sep[1] + dump(v, sep) for k, v in value.pairs) + "}"
    if isinstance(value, dict):
        return "{" + sep[0].join(json.dumps(str(k)) + sep[1] + dump(v, sep) for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + sep[0].join(dump(v, sep) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


_ODD_TEXT = [
    "",
    " ",
    "\u200b\u200d\ufeff",
    "\u202e" + "moc.live",
    "".join(chr(ord(c) + 0xFEE0) for c in "evil@example.com"),  # fullwidth
    "\x00\x01\x1f",
    "".join(chr(0x1D586 + ord(c) - ord("a")) for c in "hello") + " \U0001f98a " * 3,  # mathematical letters
    "a\u0301\u0302\u0303" * 5,
    "\ud7ff\ue000\uffff",
    "99999999999999999999999",
    "-1",
    "1e400",
    "NaN",
    "0x58501234",
    "null",
    "{",
    '{"a": [1, 2',
    "../../../../etc/passwd",
    "%s%n%x",
]


def palette(rng: random.Random, node: Any) -> Any:
    """A replacement value of another type (or a hostile one of the same)."""
    choices: list[Callable[[], Any]] = [
        lambda: None,
        lambda: True,
        lambda: False,
        lambda: 0,
        lambda: -1,
        lambda: 1.5,
        lambda: 2**63,
        lambda: 2**64 + 1,
        lambda: -(10**30),
        lambda: Raw("1e308"),
        lambda: Raw("-0.0"),
        lambda: Raw("123456789012345678901234567890"),
        lambda: rng.choice(_ODD_TEXT),
        lambda: [],
        lambda: {},
        lambda: [node],
        lambda: {"k": node},
        lambda: [node, node],
        lambda: Raw('"\\ud800"'),
        lambda: Raw('"\\u0000"'),
    ]
    return rng.choice(choices)()


def _slots(value: Any) -> list[tuple[Any, Any]]:
    """Every (container, key) of ``value``, found iteratively."""
    out: list[tuple[Any, Any]] = []
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for k, v in node.items():
                out.append((node, k))
                stack.append(v)
        elif isinstance(node, list):
            for i, v in enumerate(node):
                out.append((node, i))
                stack.append(v)
    return out


def _reorder(value: Any, rng: random.Random) -> Any:
    if isinstance(value, dict):
        items = list(value.items())
        rng.shuffle(items)
        return {k: _reorder(v, rng) for k, v in items}
    if isinstance(value, list):
        return [_reorder(v, rng) for v in value]
    return value


def _deep(node: Any, rng: random.Random) -> Raw:
    depth = rng.choice([100, 330, 500, 1000, 1023, 1100, 5000, 50_000])
    inner = dump(node) if not isinstance(node, dict | list) or len(dump(node)) < 2000 else '"x"'
    if rng.random() < 0.5:
        return Raw("[" * depth + inner + "]" * depth)
    return Raw('{"a": ' * depth + inner + "}" * depth)


MEANING_KEEPING = frozenset({"reorder", "respace"})
TREE_MUTATIONS = (
    "flip",
    "flip",
    "flip",
    "delete",
    "dup-key",
    "add-key",
    "huge",
    "deep",
    "long",
    "unicode",
    "swap",
    "dup-item",
    "reorder",
    "respace",
)
TEXT_MUTATIONS = ("truncate", "bytes")


def mutate(record: Any, rng: random.Random, allow_newlines: bool) -> tuple[str, list[str]]:
    """Return the mutated record as JSON text and the names of the mutations applied."""
    value = json.loads(json.dumps(record))
    names: list[str] = []
    sep = (", ", ": ")
    pretty = False
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        name = rng.choice(TREE_MUTATIONS + TEXT_MUTATIONS) if not names else rng.choice(TREE_MUTATIONS)
        names.append(name)
        if name == "reorder":
            value = _reorder(value, rng)
            continue
        if name == "respace":
            sep = rng.choice([(",", ":"), (" ,  ", " : "), (",\t", ":\t")])
            pretty = allow_newlines and rng.random() < 0.5
            continue
        if name in TEXT_MUTATIONS:
            continue
        slots = _slots(value)
        if not slots:
            value = palette(rng, value)
            continue
        parent, key = rng.choice(slots)
        node = parent[key]
        if name == "flip":
            parent[key] = palette(rng, node)
        elif name == "delete":
            del parent[key]
        elif name == "dup-key":
            dicts = [p for p, _ in slots if isinstance(p, dict) and p]
            if dicts:
                target = rng.choice(dicts)
                k = rng.choice(list(target))
                pairs = [(kk, vv) for kk, vv in target.items()]
                other = palette(rng, target[k]) if rng.random() < 0.5 else rng.choice(pairs)[1]
                pairs.insert(rng.randrange(len(pairs) + 1), (k, other))
                if target is value:
                    value = DupDict(pairs)
                else:
                    _replace(value, target, DupDict(pairs))
        elif name == "add-key":
            dicts = [p for p, _ in slots if isinstance(p, dict)]
            if dicts:
                added = palette(rng, json.loads(json.dumps(_plain(node))))
                rng.choice(dicts)[rng.choice(["__proto__", "", "x" * 300, "type", "id", "é"])] = added
        elif name == "huge":
            parent[key] = rng.choice([10**30, -(2**70), 2**64, Raw("1e308"), Raw("-1e308"), "9" * 40, 1e-320])
        elif name == "deep":
            parent[key] = _deep(node, rng)
        elif name == "long":
            base = node if isinstance(node, str) and node else rng.choice(["A", "ab ", "é", "🦊", "http://x.io/"])
            parent[key] = (base * (rng.choice([10_000, 100_000, 400_000]) // len(base) + 1))[:400_000]
        elif name == "unicode":
            parent[key] = "".join(
                chr(rng.choice([rng.randrange(0x20, 0xD7FF), rng.randrange(0xE000, 0x10FFFF)]))
                for _ in range(rng.randrange(1, 40))
            )
        elif name == "swap":
            other_parent, other_key = rng.choice(slots)
            parent[key] = json.loads(json.dumps(_plain(other_parent[other_key])))
        elif name == "dup-item" and isinstance(node, list) and node:
            node.insert(rng.randrange(len(node) + 1), json.loads(json.dumps(_plain(rng.choice(node)))))
    text = dump(value, sep)
    if pretty and set(names) <= MEANING_KEEPING:
        text = json.dumps(value, indent=rng.choice([1, 2, 4]), ensure_ascii=rng.random() < 0.5)
    if "truncate" in names and text:
        text = text[: rng.randrange(len(text))]
    if "bytes" in names and text:
        chars = list(text)
        for _ in range(rng.randrange(1, 6)):
            chars[rng.randrange(len(chars))] = rng.choice(['"', "{", "}", "[", "]", ",", ":", "\\", "0", "\u00ff"])
        text = "".join(chars)
    if not allow_newlines:
        text = text.replace("\n", " ").replace("\r", " ")
    return text, names


def _plain(value: Any) -> Any:
    if isinstance(value, Raw | DupDict):
        return None
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _replace(root: Any, target: Any, new: Any) -> None:
    for parent, key in _slots(root):
        if parent[key] is target:
            parent[key] = new
            return


# -- seeds -----------------------------------------------------------------------------------------------


@dataclass
class Seed:
    """One valid input: its records (lines of a file, or one document) and how its sentinel differs."""

    name: str
    records: list[Any]
    sentinel: list[Any]
    lines: bool


def _read_lines(path: Path) -> list[Any]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _rename_strings(value: Any, names: dict[str, str]) -> Any:
    if isinstance(value, dict):
        return {k: _rename_strings(v, names) for k, v in value.items()}
    if isinstance(value, list):
        return [_rename_strings(v, names) for v in value]
    if isinstance(value, str):
        return names.get(value, value)
    return value


_SESSION_FIELDS = ("session_id", "session", "sessionId")


def _line_seeds(folder: Path, extra_names: Callable[[list[Any]], dict[str, str]] | None = None) -> list[Seed]:
    seeds = []
    for path in sorted(folder.glob("*.jsonl")):
        records = _read_lines(path)
        names = {r[f]: r[f] + "~sentinel" for r in records if isinstance(r, dict) for f in _SESSION_FIELDS if f in r}
        if extra_names:
            names.update(extra_names(records))
        seeds.append(Seed(path.name, records, [_rename_strings(r, names) for r in records], lines=True))
    return seeds


def _otlp_seeds() -> list[Seed]:
    import base64
    import hashlib

    seeds = []
    for path in sorted((ROOT / "samples/otel").glob("*.jsonl")):
        for lineno, record in enumerate(_read_lines(path), start=1):
            names: dict[str, str] = {}
            for parent, key in _slots(record):
                value = parent[key]
                if not isinstance(value, str):
                    continue
                if key in ("traceId", "spanId", "parentSpanId"):
                    size = 16 if key == "traceId" else 8
                    raw = hashlib.sha256(b"sentinel" + value.encode()).digest()[:size]
                    names[value] = raw.hex() if len(value) == 2 * size else base64.b64encode(raw).decode()
                elif isinstance(parent, dict) and key == "stringValue":
                    names.setdefault(value, value)
            sessions = {
                v["value"].get("stringValue")
                for p, k in _slots(record)
                if isinstance(p, dict) and k == "attributes" and isinstance(p[k], list)
                for v in p[k]
                if isinstance(v, dict)
                and str(v.get("key", "")).endswith(("conversation.id", "session.id", "session_id"))
                and isinstance(v.get("value"), dict)
            }
            renames = {k: v for k, v in names.items() if k != v}
            renames.update({s: s + "~sentinel" for s in sessions if isinstance(s, str)})
            seeds.append(Seed(f"{path.name}:{lineno}", [record], [_rename_strings(record, renames)], lines=True))
    return seeds


def _agentdojo_seeds() -> list[Seed]:
    runs: list[Any] = []
    unpacked = Path("/tmp/dev")
    if unpacked.is_dir():
        files = sorted(unpacked.rglob("*.json"))
        step = max(1, len(files) // AGENTDOJO_SEEDS)
        runs = [json.loads(p.read_bytes()) for p in files[::step][:AGENTDOJO_SEEDS]]
    else:
        with tarfile.open(DATA / "agentdojo/dev-runs.tar.gz", "r|gz") as tar:
            for i, member in enumerate(tar):
                if member.isfile() and member.name.endswith(".json") and i % 75 == 0:
                    fh = tar.extractfile(member)
                    if fh is not None:
                        runs.append(json.loads(fh.read()))
    return [Seed(f"run{i}", [run], [run], lines=False) for i, run in enumerate(runs)]


def _toolslist_seeds() -> list[Seed]:
    seeds = []
    for path in sorted((DATA / "mcp-servers").glob("*.json")) + sorted((DATA / "mcpdesc").glob("*.json")):
        doc = json.loads(path.read_bytes())
        tools = doc.get("tools") if isinstance(doc, dict) else None
        if isinstance(tools, list) and len(tools) > 4:
            for start in range(0, len(tools), 4):
                part = {**doc, "tools": tools[start : start + 4]}
                seeds.append(Seed(f"{path.name}@{start}", [part], [part], lines=False))
        else:
            seeds.append(Seed(path.name, [doc], [doc], lines=False))
    return seeds


def load_seeds(fmt: str) -> list[Seed]:
    """The valid seeds of a format."""
    if fmt == "agentdojo":
        return _agentdojo_seeds()
    if fmt == "otlp":
        return _otlp_seeds()
    if fmt == "toolslist":
        return _toolslist_seeds()
    folder = {"jsonl": "sessions", "mcp": "mcp", "claude-code": "claude-code"}[fmt]
    return _line_seeds(ROOT / "samples" / folder)


# -- running one case ------------------------------------------------------------------------------------


class Hang(BaseException):
    """The per-case CPU bound ran out (a BaseException: the engine's guards must not swallow it)."""


@dataclass
class Outcome:
    """What one case did."""

    kind: str  # "ok", "crash", "hang", "lost"
    detail: str = ""


Summary = dict[str, tuple[int, str]]  # session id -> (calls, level)


class _Failures(logging.Handler):
    """Keeps the tracebacks the monitor logs for its internal failures (the engine's crashes)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.seen: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info and record.exc_info[1] is not None:
            frames = traceback.format_exception(*record.exc_info, limit=-3)
            self.seen.append("".join(frames[-4:])[-1500:])


class Runner:
    """Runs cases of one format in one process, with the rule packs loaded once."""

    def __init__(self, fmt: str, workdir: Path) -> None:
        from monitor.classify import load_rules

        self.fmt = fmt
        self.workdir = workdir
        self.rules = load_rules(())
        self.seeds = load_seeds(fmt)
        self._baselines: dict[tuple[int, str], Summary] = {}
        # The sentinel read after each case: the smallest seed, renamed.
        self.small_index = min(range(len(self.seeds)), key=lambda i: len(json.dumps(self.seeds[i].records)))
        self.small = self.seeds[self.small_index]
        self.failures = _Failures()
        logging.getLogger("monitor").addHandler(self.failures)
        logging.getLogger("monitor").propagate = False

    def write(self, name: str, seed: Seed, records_text: list[str]) -> Path:
        folder = self.workdir / name
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / (f"{name}.json" if self.fmt in ("agentdojo", "toolslist") else "trace.jsonl")
        path.write_text(
            "\n".join(records_text) + ("\n" if seed.lines else ""), encoding="utf-8", errors="surrogatepass"
        )
        return path

    def analyse(self, paths: list[Path]) -> tuple[Summary, int]:
        """Read ``paths`` through reader and engine; the sessions reported and the engine failures."""
        from monitor.analysis import analyze_records
        from monitor.ingest import InputFormat, detect_format, read_inputs, read_tool_lists
        from monitor.lint import lint_paths
        from monitor.models import SessionReport
        from monitor.session import SessionMonitor

        monitor = SessionMonitor(rules=self.rules)
        summary: Summary = {}
        if self.fmt == "toolslist":
            lists, _ = read_tool_lists(paths)
            lint_paths(paths)
            for i, tool_list in enumerate(lists):
                monitor.register_tools(f"s{i}", tool_list.server_name, list(tool_list.tools))
                summary[f"{Path(tool_list.file).parent.name}:{tool_list.line}"] = (len(tool_list.tools), "")
            return summary, monitor.internal_errors
        for path in paths:
            detect_format(path)
        fmt = InputFormat(self.fmt)
        inputs = [p.parent for p in paths] if self.fmt == "agentdojo" else paths
        for item in analyze_records(read_inputs(inputs, fmt), monitor):
            if isinstance(item, SessionReport):
                summary[item.session_id] = (len(item.calls), str(item.level))
        return summary, monitor.internal_errors

    def baseline(self, index: int, which: str) -> Summary:
        key = (index, which)
        if key not in self._baselines:
            seed = self.seeds[index]
            records = seed.records if which == "seed" else seed.sentinel
            path = self.write(f"base-{which}", seed, [json.dumps(r) for r in records])
            self._baselines[key] = self.analyse([path])[0]
        return self._baselines[key]

    def make_case(self, seed_value: int, i: int) -> tuple[int, list[str], list[str]]:
        rng = random.Random(f"{seed_value}:{self.fmt}:{i}")
        index = rng.randrange(len(self.seeds))
        seed = self.seeds[index]
        target = rng.randrange(len(seed.records))
        texts = [json.dumps(r) for r in seed.records]
        texts[target], names = mutate(seed.records[target], rng, allow_newlines=not seed.lines)
        return index, texts, names

    def run(self, seed_value: int, i: int) -> Outcome:
        index, texts, names = self.make_case(seed_value, i)
        seed = self.seeds[index]
        expected_sentinel = self.baseline(self.small_index, "sentinel")
        expected_seed = self.baseline(index, "seed") if set(names) <= MEANING_KEEPING else None
        sentinel_texts = [json.dumps(r) for r in self.small.sentinel]
        if seed.lines:  # the sentinel follows the mutated record in the same file: the rest of a file must be read
            mutated = self.write("a-case", seed, texts + sentinel_texts)
            paths = [mutated]
        else:
            mutated = self.write("a-case", seed, texts)
            paths = [mutated, self.write("b-sentinel", self.small, sentinel_texts)]
        self.failures.seen.clear()
        try:
            got, failures = self.analyse(paths)
        except Hang:
            raise
        except RecursionError as exc:  # its traceback is thousands of frames: name the class only
            return Outcome("crash", f"{'+'.join(names)}: RecursionError: {exc}")
        except Exception:
            return Outcome("crash", f"{'+'.join(names)}: {traceback.format_exc(limit=-6)}")
        if failures:
            seen = self.failures.seen[0] if self.failures.seen else ""
            return Outcome("crash", f"{'+'.join(names)}: {failures} engine failures; first:\n{seen}")
        if self.fmt == "toolslist":
            want = {k.replace("base-sentinel", "b-sentinel"): v for k, v in expected_sentinel.items()}
            if expected_seed is not None:
                want.update({k.replace("base-seed", "a-case"): v for k, v in expected_seed.items()})
        else:
            rename = {"base-sentinel": "b-sentinel", "base-seed": "a-case"}
            want = {rename.get(k, k): v for k, v in expected_sentinel.items()}
            if expected_seed is not None:
                want.update({rename.get(k, k): v for k, v in expected_seed.items()})
        missing = {k: v for k, v in want.items() if got.get(k) != v}
        if missing:
            shown = {k: (v, got.get(k)) for k, v in list(missing.items())[:3]}
            return Outcome("lost", f"{'+'.join(names)}: expected (got) {shown}")
        return Outcome("ok")


def _on_prof(signum: int, frame: Any) -> None:
    raise Hang


def worker(runner: Runner, seed_value: int, indices: list[int], bound: float, out: Any, save: str | None) -> None:
    """Run cases ``indices`` and put ``(index, kind, detail)`` on ``out``; ``("start", index)`` before each.

    ``runner`` was made in the parent (rules and seeds loaded once): a worker restarted after a hang runs the
    same code and rules as the others, whatever changed on disk since."""
    fmt = runner.fmt
    with tempfile.TemporaryDirectory(
        prefix="trifecta-fuzz-", dir="/dev/shm" if Path("/dev/shm").is_dir() else None
    ) as tmp:
        runner.workdir = Path(tmp)
        saved: dict[str, int] = {}
        signal.signal(signal.SIGPROF, _on_prof)
        for i in indices:
            out.put(("start", i, ""))
            signal.setitimer(signal.ITIMER_PROF, bound)
            try:
                outcome = runner.run(seed_value, i)
            except Hang:
                outcome = Outcome("hang", f"more than {bound} s of CPU")
            finally:
                signal.setitimer(signal.ITIMER_PROF, 0)
            if outcome.kind != "ok" and save and saved.get(outcome.kind, 0) < _MAX_SAVED:
                saved[outcome.kind] = saved.get(outcome.kind, 0) + 1
                _save(Path(save), fmt, seed_value, i, runner, outcome)
            out.put((outcome.kind, i, outcome.detail))
    out.put(("exit", -1, ""))


def _save(folder: Path, fmt: str, seed_value: int, i: int, runner: Runner, outcome: Outcome) -> None:
    target = folder / fmt / f"{outcome.kind}-{seed_value}-{i}"
    target.mkdir(parents=True, exist_ok=True)
    _, texts, _ = runner.make_case(seed_value, i)
    suffix = "json" if fmt in ("agentdojo", "toolslist") else "jsonl"
    (target / f"case.{suffix}").write_text("\n".join(texts) + "\n", encoding="utf-8", errors="surrogatepass")
    (target / "outcome.txt").write_text(outcome.detail, encoding="utf-8", errors="replace")


@dataclass
class Tally:
    """The counts of one format."""

    records: int = 0
    crashes: int = 0
    hangs: int = 0
    lost: int = 0


def fuzz(fmt: str, n: int, seed_value: int, workers: int, bound: float, save: str | None, verbose: bool) -> Tally:
    """Run ``n`` cases of ``fmt`` on ``workers`` processes; return the counts."""
    ctx = mp.get_context("fork")
    out: Any = ctx.Queue()
    pending = list(range(n))
    chunks = [pending[w::workers] for w in range(workers)]
    procs: dict[int, Any] = {}
    current: dict[int, tuple[int, float]] = {}
    owner = {i: w for w, chunk in enumerate(chunks) for i in chunk}
    done: set[int] = set()
    tally = Tally()

    runner = Runner(fmt, Path(tempfile.gettempdir()))

    def start(w: int) -> None:
        left = [i for i in chunks[w] if i not in done]
        proc = ctx.Process(target=worker, args=(runner, seed_value, left, bound, out, save), daemon=True)
        proc.start()
        procs[w] = proc

    for w in range(workers):
        if chunks[w]:
            start(w)
    exited = 0
    shown = 0
    while exited < len(procs) or len(done) < n:
        try:
            kind, i, detail = out.get(timeout=1.0)
        except queue.Empty:
            kind = ""
        now = time.monotonic()
        if kind == "start":
            current[owner[i]] = (i, now)
        elif kind == "exit":
            exited += 1
        elif kind:
            done.add(i)
            tally.records += 1
            current.pop(owner[i], None)
            if tally.records % _PROGRESS_EVERY == 0:
                print(f"{fmt}: {tally}", file=sys.stderr, flush=True)
            if kind != "ok":
                setattr(
                    tally,
                    {"crash": "crashes", "hang": "hangs", "lost": "lost"}[kind],
                    getattr(tally, {"crash": "crashes", "hang": "hangs", "lost": "lost"}[kind]) + 1,
                )
                if verbose and shown < 20:
                    shown += 1
                    print(f"{fmt} case {i}: {kind}: {detail.strip()[-600:]}", file=sys.stderr)
        for w, (i, since) in list(current.items()):
            if now - since > 4 * bound + 30:  # stuck where the CPU timer cannot interrupt it
                procs[w].kill()
                procs[w].join()
                done.add(i)
                tally.records += 1
                tally.hangs += 1
                current.pop(w)
                print(f"{fmt} case {i}: hang (wall-clock watchdog)", file=sys.stderr)
                start(w)
        for w, proc in list(procs.items()):
            if not proc.is_alive() and proc.exitcode not in (0, None) and w not in current:
                raise SystemExit(f"{fmt}: a worker failed before its first case (exit {proc.exitcode}); see above")
            if not proc.is_alive() and proc.exitcode not in (0, None) and w in current:
                i, _ = current.pop(w)
                print(f"{fmt} case {i}: the worker died ({proc.exitcode}); restarting", file=sys.stderr)
                done.add(i)
                tally.records += 1
                tally.crashes += 1
                exited += 1
                start(w)
        if len(done) >= n and all(not p.is_alive() for p in procs.values()):
            break
    return tally


def main(argv: list[str] | None = None) -> int:
    """Parse the command line, fuzz, print the table; exit 1 on any crash, hang or loss."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("format", choices=[*FORMATS, "all"])
    parser.add_argument("n", type=int, help="cases (mutated records) per format")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=max(1, min(2, os.cpu_count() or 1)))
    parser.add_argument("--bound", type=float, default=10.0, help="CPU seconds per case before it is a hang")
    parser.add_argument("--save", default=None, help="write failing cases to this folder")
    parser.add_argument("--quiet", action="store_true", help="do not print failing cases")
    args = parser.parse_args(argv)
    formats = FORMATS if args.format == "all" else (args.format,)
    print(f"{'format':<12} {'records':>9} {'crashes':>8} {'hangs':>6} {'lost':>6} {'seconds':>8}")
    bad = 0
    for fmt in formats:
        began = time.monotonic()
        tally = fuzz(fmt, args.n, args.seed, args.workers, args.bound, args.save, not args.quiet)
        took = time.monotonic() - began
        print(
            f"{fmt:<12} {tally.records:>9,} {tally.crashes:>8,} {tally.hangs:>6,} {tally.lost:>6,} {took:>8.0f}",
            flush=True,
        )
        bad += tally.crashes + tally.hangs + tally.lost
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
