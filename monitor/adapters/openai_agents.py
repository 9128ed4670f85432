"""The monitor in front of OpenAI Agents SDK function tools (an optional dependency:
``pip install 'trifecta-monitor[openai-agents]'``).

:class:`AgentsGuard` adds the SDK's tool guardrails to function tools (:meth:`~AgentsGuard.guard_tools`): a
tool input guardrail decides each call before the tool runs (a refused call is rejected with
``reject_content``: the tool does not run, and the model gets the decision in one line,
:meth:`~monitor.Decision.describe`), and a tool output guardrail reports what the tool returned. Calls to
confirm go to the host's ``ask`` callback; without one they are rejected.

The session key is the run's ``RunConfig.group_id`` unless the guard is given one; the user's words reach the
monitor through :meth:`AgentsGuard.observe_input`. See docs/adapters.md.
"""

from __future__ import annotations

try:
    import agents as _agents  # noqa: F401  (an optional dependency: say how to get it)
except ImportError as exc:
    raise ImportError(
        "monitor.adapters.openai_agents needs the OpenAI Agents SDK ('openai-agents'), which is not installed: "
        "pip install 'trifecta-monitor[openai-agents]'"
    ) from exc

from monitor.adapters._openai_agents import GUARDRAIL_NAME, AgentsGuard

__all__ = ["AgentsGuard", "GUARDRAIL_NAME"]
