"""The monitor inside agent frameworks, each an optional dependency imported only by its own module:

- :mod:`monitor.adapters.langchain`: LangChain ``BaseTool`` objects wrapped so each call is decided first
  (LangGraph's ``ToolNode`` and prebuilt agents run them as the tools themselves);
  ``pip install 'trifecta-monitor[langchain]'``;
- :mod:`monitor.adapters.openai_agents`: tool input and output guardrails for the OpenAI Agents SDK's function
  tools; ``pip install 'trifecta-monitor[openai-agents]'``.

Both decide a call before it runs and report its result after; a refused call does not run, and the model is
told why in one line. A call to confirm is put to the host's ``ask`` callback as a :class:`CallQuestion`; with
no callback it is refused. See docs/adapters.md.
"""

from monitor.adapters._gate import AskCallback, CallQuestion

__all__ = ["AskCallback", "CallQuestion"]
