import importlib
import inspect
import pkgutil
import subprocess
import sys
import textwrap
from pathlib import Path

import monitor

PUBLIC_MODULES = [
    "monitor",
    "monitor.adapters",
    "monitor.adapters.langchain",
    "monitor.adapters.openai_agents",
    "monitor.agreement",
    "monitor.analysis",
    "monitor.classify",
    "monitor.clients",
    "monitor.decide",
    "monitor.errors",
    "monitor.evaluation",
    "monitor.evidence",
    "monitor.hosts",
    "monitor.hosts.claude_code",
    "monitor.hosts.mcp",
    "monitor.ingest",
    "monitor.jsonrecords",
    "monitor.lint",
    "monitor.models",
    "monitor.otel",
    "monitor.report",
    "monitor.scale",
    "monitor.scenarios",
    "monitor.session",
    "monitor.spans",
    "monitor.store",
    "monitor.testing",
    "monitor.types",
]


def _public_modules() -> list[str]:
    """Every module of the package whose dotted name has no private part."""
    names = ["monitor"]
    for info in pkgutil.walk_packages(monitor.__path__, "monitor."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            names.append(info.name)
    return names


def test_every_public_module_is_listed_here() -> None:
    # A new public module is a decision: list it above (and give it an __all__), or make it private.
    assert sorted(set(_public_modules()) - {"monitor.cli"}) == PUBLIC_MODULES


def test_public_api_is_explicit_and_sorted() -> None:
    for name in PUBLIC_MODULES:
        module = importlib.import_module(name)
        exported = list(module.__all__)
        assert exported == sorted(exported), f"{name}.__all__ is not sorted"
        for symbol in exported:
            assert hasattr(module, symbol), f"{name}.__all__ names missing {symbol}"


def test_design_contract_names_are_exported() -> None:
    for symbol in ["SessionMonitor", "Decision", "Action", "Leg", "Policy", "load_rules"]:
        assert symbol in monitor.__all__
    for method in ["register_tools", "observe_user_message", "before_call", "after_call", "session"]:
        assert callable(getattr(monitor.SessionMonitor, method))
    params = list(inspect.signature(monitor.SessionMonitor.before_call).parameters)
    assert params == ["self", "session_id", "server", "tool", "arguments", "call_id"]
    from monitor.otel import TrifectaSpanProcessor

    assert callable(TrifectaSpanProcessor)


def _missing_docstrings(module_name: str) -> list[str]:
    module = importlib.import_module(module_name)
    missing = [] if module.__doc__ else [module_name]
    for name in getattr(module, "__all__", []):
        obj = getattr(module, name)
        if not (inspect.isclass(obj) or inspect.isfunction(obj)):
            continue
        if not inspect.getdoc(obj):
            missing.append(f"{module_name}.{name}")
        if inspect.isclass(obj):
            for attr, member in vars(obj).items():
                if attr.startswith("_") or not (inspect.isfunction(member) or isinstance(member, property)):
                    continue
                if not inspect.getdoc(member):
                    missing.append(f"{module_name}.{name}.{attr}")
    return missing


def test_every_public_object_and_public_method_has_a_docstring() -> None:
    missing = []
    for info in pkgutil.walk_packages(monitor.__path__, "monitor."):
        module = importlib.import_module(info.name)
        if not module.__doc__:
            missing.append(info.name)
        for name, obj in vars(module).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != info.name:
                continue
            if (inspect.isclass(obj) or inspect.isfunction(obj)) and not obj.__doc__:
                missing.append(f"{info.name}.{name}")
    for name in PUBLIC_MODULES:
        missing += _missing_docstrings(name)
    assert sorted(set(missing)) == []


def test_one_root_exception() -> None:
    assert issubclass(monitor.InputError, monitor.TrifectaError)
    assert issubclass(monitor.RuleLoadError, monitor.TrifectaError)


def test_python_dash_m_monitor_runs_the_command_line() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "monitor", "--version"], capture_output=True, text=True, check=False, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "trifecta, version" in done.stdout


HOST_PROGRAM = """
from monitor import Action, AlertRaised, CallDecided, Decision, LevelChanged, SessionMonitor
from monitor.otel import TrifectaSpanProcessor
from monitor.testing import RecordingSink


class PrintingSink:
    def on_decision(self, notice: CallDecided) -> None:
        print(notice.decision.action)

    def on_alert(self, notice: AlertRaised) -> None:
        print(notice.alert.kind)

    def on_level(self, notice: LevelChanged) -> None:
        print(notice.level)


def ask(monitor: SessionMonitor) -> bool:
    decision: Decision = monitor.before_call("s", "mail", "send_email", {"to": "bob@example.com"})
    return decision.action is not Action.ALLOW


ask(SessionMonitor(sink=PrintingSink()))
ask(SessionMonitor(sink=RecordingSink()))
processor: TrifectaSpanProcessor | None = None
"""


def test_a_hosts_strict_type_check_reads_the_package_annotations(tmp_path: Path) -> None:
    assert (Path(monitor.__file__).parent / "py.typed").is_file()
    program = tmp_path / "host.py"
    program.write_text(textwrap.dedent(HOST_PROGRAM))
    # Run from an empty folder, so that mypy finds the installed package, as a host's checker would.
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", str(tmp_path / "c"), "host.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert "import-untyped" not in done.stdout
    assert done.returncode == 0, done.stdout + done.stderr
