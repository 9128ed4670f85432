"""The layers of docs/architecture.md hold in the code: no upward import, no cycle, no reach into a private module;
and no function over 80 lines or class over 350. The tests keep to the public surfaces too: a test reaches only
into the private modules of the package it tests (tests/<pkg>/ tests ``monitor.<pkg>``).

The floors are read from the table in docs/architecture.md, so the page and this test cannot disagree.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "monitor"
DOC = ROOT / "docs" / "architecture.md"
MAX_FUNCTION_LINES = 80
MAX_CLASS_LINES = 350
Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
_ROW = re.compile(r"^\|\s*(\d+)\s*\|\s*([^|]+?)\s*\|")


def read_floors(doc: Path = DOC) -> dict[str, int]:
    """``{unit: floor}`` from the layers table of docs/architecture.md (a unit is ``monitor`` or ``monitor.x``)."""
    floors: dict[str, int] = {}
    for line in doc.read_text(encoding="utf-8").splitlines():
        m = _ROW.match(line)
        if m:
            for unit in re.findall(r"`([\w.]+)`", m.group(2)):
                floors[unit] = int(m.group(1))
    return floors


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def unit_of(module: str) -> str:
    return ".".join(module.split(".")[:2])


def read_imports(path: Path, modules: set[str]) -> list[tuple[str, int]]:
    """Every ``monitor…`` module a file imports (anywhere: top level, functions, TYPE_CHECKING), with its line.

    ``from monitor.otel import _records`` imports the module ``monitor.otel._records`` (``modules`` says which
    names are modules); ``from monitor.models import Leg`` imports ``monitor.models``.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names if alias.name.split(".")[0] == "monitor"]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "monitor":
            for alias in node.names:
                named = f"{node.module}.{alias.name}"
                found.append((named if named in modules else str(node.module), node.lineno))
    return found


def source_files(root: Path = ROOT) -> list[Path]:
    return sorted((root / "monitor").rglob("*.py"))


def find_layer_violations(root: Path, floors: dict[str, int]) -> list[str]:
    """Imports of a higher floor, of another unit on the same floor, or of another unit's private module."""
    wrong = []
    modules = {module_name(path, root) for path in source_files(root)}
    for path in source_files(root):
        source = unit_of(module_name(path, root))
        for target_module, line in dict.fromkeys(read_imports(path, modules)):
            target = unit_of(target_module)
            where = f"{path.relative_to(root)}:{line}"
            if target == source:
                continue
            if floors.get(target, 99) >= floors.get(source, -1):
                wrong.append(
                    f"{where}: {source} (floor {floors.get(source)}) imports {target} (floor {floors.get(target)})"
                )
            if any(part.startswith("_") for part in target_module.split(".")[2:]):
                wrong.append(f"{where}: {target_module} is private to {target}")
    return wrong


def python_test_files(root: Path = ROOT) -> list[Path]:
    return sorted((root / "tests").rglob("*.py"))


def unit_under_test(path: Path, root: Path = ROOT) -> str | None:
    """The unit a test file tests: ``monitor.<pkg>`` for tests/<pkg>/…; none for tests/test_*.py and tests/support/."""
    parts = path.relative_to(root / "tests").parts
    return None if len(parts) == 1 or parts[0] == "support" else f"monitor.{parts[0]}"


def is_private(module: str) -> bool:
    return any(part.startswith("_") and not part.startswith("__") for part in module.split(".")[1:])


def find_private_test_imports(root: Path = ROOT) -> list[str]:
    """Imports, in a test file, of a private module of a package other than the one the file tests."""
    modules = {module_name(path, root) for path in source_files(root)}
    wrong = []
    for path in python_test_files(root):
        own = unit_under_test(path, root)
        for module, line in dict.fromkeys(read_imports(path, modules)):
            unit = unit_of(module)
            if is_private(module) and unit != own:
                folder = f"tests/{unit.partition('.')[2]}/" if "." in unit else "tests/"
                wrong.append(
                    f"{path.relative_to(root)}:{line}: imports {module}, private to {unit}: "
                    f"use {unit}'s public names, or move the test to {folder}"
                )
    return wrong


def find_cycles(root: Path) -> list[list[str]]:
    """Import cycles between the files of the package."""
    modules = {module_name(path, root): path for path in source_files(root)}
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for module, path in modules.items():
        graph.add_edges_from(
            (module, target) for target, _ in read_imports(path, set(modules)) if target in modules and target != module
        )
    return list(nx.simple_cycles(graph))


def test_the_table_covers_every_package_and_top_level_module() -> None:
    floors = read_floors()
    units = {unit_of(module_name(path)) for path in source_files()}
    assert units - set(floors) == set(), "place each new package or module on a floor in docs/architecture.md"
    assert set(floors) - units == set(), "docs/architecture.md names units that no longer exist"


def test_no_upward_import_and_other_packages_only_through_their_public_surface() -> None:
    assert find_layer_violations(ROOT, read_floors()) == []


def test_no_import_cycle_between_files() -> None:
    assert find_cycles(ROOT) == []


def test_tests_reach_only_into_the_private_modules_of_the_package_they_test() -> None:
    wrong = find_private_test_imports()
    assert wrong == [], "a test imports another package's private module:\n" + "\n".join(wrong)


def find_long_definitions(
    root: Path = ROOT, max_function: int = MAX_FUNCTION_LINES, max_class: int = MAX_CLASS_LINES
) -> list[str]:
    """Functions, methods and classes (nested ones too) longer than their limit, as
    ``file:line: qualified.name is N lines``.

    A definition's length runs from its ``def``/``class`` line to its last line (``end_lineno - lineno + 1``):
    the docstring and blank lines inside count, the decorators above do not.
    """
    long = []
    for path in source_files(root):
        for name, node in iter_definitions(ast.parse(path.read_text(encoding="utf-8"))):
            limit = max_class if isinstance(node, ast.ClassDef) else max_function
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > limit:
                long.append(f"{path.relative_to(root)}:{node.lineno}: {name} is {length} lines (limit {limit})")
    return long


def iter_definitions(node: ast.AST, prefix: str = "") -> Iterator[tuple[str, Definition]]:
    """Every function, method and class under ``node``, with its qualified name (``Class.method``), in order."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield f"{prefix}{child.name}", child
            yield from iter_definitions(child, f"{prefix}{child.name}.")
        else:
            yield from iter_definitions(child, prefix)


def test_no_function_or_class_is_over_the_line_limit() -> None:
    long = find_long_definitions()
    assert long == [], "split along its seams:\n" + "\n".join(long)


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_the_checks_catch_planted_violations(tmp_path: Path) -> None:
    floors = {"monitor.models": 0, "monitor.evidence": 3, "monitor.ingest": 3, "monitor.session": 7}
    root = _write(
        tmp_path,
        {
            "monitor/models/__init__.py": "from monitor.models._a import A\n",
            "monitor/models/_a.py": "def f():\n    from monitor.session import S\n",
            "monitor/evidence/__init__.py": "from monitor.ingest import R\n",
            "monitor/session/__init__.py": "from monitor.evidence._index import ContentIndex\n",
            "monitor/ingest/__init__.py": "import monitor.ingest._b\n",
            "monitor/ingest/_b.py": "import monitor.ingest._c\n",
            "monitor/ingest/_c.py": "from monitor.ingest import _b\n",
        },
    )
    wrong = "\n".join(find_layer_violations(root, floors))
    assert "monitor/models/_a.py:2: monitor.models (floor 0) imports monitor.session (floor 7)" in wrong
    assert "monitor.evidence (floor 3) imports monitor.ingest (floor 3)" in wrong
    assert "monitor.evidence._index is private to monitor.evidence" in wrong
    assert ["monitor.ingest._b", "monitor.ingest._c"] in [sorted(c) for c in find_cycles(root)]


def test_the_length_check_catches_planted_long_definitions(tmp_path: Path) -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(79))
    root = _write(
        tmp_path,
        {
            "monitor/a.py": f"@decorator\ndef fits():\n{body}",
            "monitor/b.py": "class C:\n    def long(self):\n" + body.replace("    ", "        ") + "        pass\n",
            "monitor/c.py": "class Big:\n" + "".join(f"    y{i} = {i}\n" for i in range(350)),
        },
    )
    assert find_long_definitions(root) == [
        "monitor/b.py:2: C.long is 81 lines (limit 80)",
        "monitor/c.py:1: Big is 351 lines (limit 350)",
    ]


def test_the_test_import_check_catches_planted_violations(tmp_path: Path) -> None:
    root = _write(
        tmp_path,
        {
            "monitor/models/__init__.py": "from monitor.models._events import ToolCall\n",
            "monitor/models/_events.py": "class ToolCall: ...\n",
            "tests/models/test_events.py": "from monitor.models._events import ToolCall\n",
            "tests/ingest/test_jsonl.py": "import json\n\nfrom monitor.models._events import ToolCall\n",
            "tests/ingest/test_ok.py": "from monitor.models import ToolCall\n'from monitor.models._events import X'\n",
            "tests/support/events.py": "def f():\n    import monitor.models._events\n",
            "tests/test_top.py": "from monitor.models import _events\n",
        },
    )
    hint = "private to monitor.models: use monitor.models's public names, or move the test to tests/models/"
    assert find_private_test_imports(root) == [
        f"tests/ingest/test_jsonl.py:3: imports monitor.models._events, {hint}",
        f"tests/support/events.py:2: imports monitor.models._events, {hint}",
        f"tests/test_top.py:1: imports monitor.models._events, {hint}",
    ]


def describe_module_graph(root: Path = ROOT) -> str:
    """Return the module graph of the checkout at ``root`` in words, floor by floor from the top: each unit, its
    files with their lines, and the units it imports (``python tests/test_architecture.py [CHECKOUT]`` prints it:
    run it on two checkouts to see what moved)."""
    floors = read_floors(root / "docs" / "architecture.md")
    modules = {module_name(path, root) for path in source_files(root)}
    files: dict[str, list[str]] = {}
    uses: dict[str, set[str]] = {}
    for path in source_files(root):
        unit = unit_of(module_name(path, root))
        lines = len(path.read_text(encoding="utf-8").splitlines())
        files.setdefault(unit, []).append(f"{path.relative_to(root / 'monitor').as_posix()} {lines}")
        uses.setdefault(unit, set()).update(unit_of(m) for m, _ in read_imports(path, modules))
    out = []
    for unit in sorted(files, key=lambda u: (-floors.get(u, -1), u)):
        imported = sorted(uses[unit] - {unit}, key=lambda u: (-floors.get(u, -1), u))
        out.append(f"floor {floors.get(unit, '?')}  {unit}  imports: {', '.join(imported) or '-'}")
        out.append("    " + ", ".join(files[unit]))
    return "\n".join(out)


def test_the_module_graph_names_every_unit_with_its_floor_and_imports() -> None:
    graph = describe_module_graph()
    floors = read_floors()
    for unit, floor in floors.items():
        if unit != "monitor.__main__":
            assert f"floor {floor}  {unit}  imports:" in graph
    assert "floor 7  monitor.session  imports: monitor.decide," in graph


if __name__ == "__main__":
    import sys

    print(describe_module_graph(Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else ROOT))
