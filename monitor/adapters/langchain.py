"""The monitor in front of LangChain and LangGraph tools (an optional dependency:
``pip install 'trifecta-monitor[langchain]'``).

- :class:`LangChainGuard`: wraps ``BaseTool`` objects (:meth:`~LangChainGuard.wrap_tools`) so each call is
  decided before the tool runs and its result reported after; a refused call is not run, and the model gets
  the decision in one line (:meth:`~monitor.Decision.describe`) as the tool's output. Calls to confirm go to
  the host's ``ask`` callback; without one they are refused.
- :class:`GuardedTool`: one wrapped tool (a ``BaseTool``, usable in LangGraph's ``ToolNode`` and
  ``create_react_agent`` as the tool itself).

The session key is the LangGraph ``thread_id`` of the run's ``config["configurable"]`` unless the guard is given
one; the user's words reach the monitor through :meth:`LangChainGuard.observe_input`. See docs/adapters.md.
"""

from __future__ import annotations

try:
    import langchain_core as _langchain_core  # noqa: F401  (an optional dependency: say how to get it)
except ImportError as exc:
    raise ImportError(
        "monitor.adapters.langchain needs LangChain ('langchain-core'), which is not installed: "
        "pip install 'trifecta-monitor[langchain]'"
    ) from exc

from monitor.adapters._langchain import GuardedTool, LangChainGuard

__all__ = ["GuardedTool", "LangChainGuard"]
