import importlib
import inspect
import pkgutil

import monitor

PUBLIC_PACKAGES = ["monitor", "monitor.models", "monitor.classify", "monitor.ingest", "monitor.otel"]


def test_public_api_is_explicit_and_sorted() -> None:
    for name in PUBLIC_PACKAGES:
        module = importlib.import_module(name)
        exported = list(module.__all__)
        assert exported == sorted(exported), f"{name}.__all__ is not sorted"
        for symbol in exported:
            assert hasattr(module, symbol), f"{name}.__all__ names missing {symbol}"


def test_design_contract_names_are_exported() -> None:
    for symbol in ["SessionMonitor", "Decision", "Action", "Leg", "Policy"]:
        assert symbol in monitor.__all__
    for method in ["register_tools", "observe_user_message", "before_call", "after_call", "session"]:
        assert callable(getattr(monitor.SessionMonitor, method))
    params = list(inspect.signature(monitor.SessionMonitor.before_call).parameters)
    assert params == ["self", "session_id", "server", "tool", "arguments", "call_id"]


def test_every_public_object_has_a_docstring() -> None:
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
    assert missing == []


def test_one_root_exception() -> None:
    assert issubclass(monitor.InputError, monitor.TrifectaError)
