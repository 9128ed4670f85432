"""The monitor inside MCP hosts built with the ``mcp`` SDK (an optional dependency:
``pip install 'trifecta-monitor[hosts]'``).

- :class:`GuardedClientSession`: wraps a client's ``mcp.ClientSession``. ``list_tools`` registers the listed
  tools; ``call_tool`` asks the monitor before the call goes out and reports the result after; a call to
  confirm goes to the host's async ``confirm`` callback (without one,
  :class:`~monitor.errors.ConfirmationRequired` is raised), a denied or declined call raises
  :class:`~monitor.errors.CallDenied`, and the server never sees it.
- :func:`guard_server` / :class:`ServerGuard`: middleware for a server built with the SDK's ``MCPServer``:
  each incoming ``tools/call`` is decided before the tool runs; a call to confirm is put to the user through
  MCP elicitation where the client supports it, and refused with an ``isError`` result otherwise.
- :class:`StdioProxy` / :func:`run_stdio_proxy`: the stdio proxy behind ``trifecta proxy``, between any MCP
  client and a stdio server.

The session key. MCP 2026-07-28 removed protocol sessions: no ``initialize`` handshake and no
``Mcp-Session-Id``, so no request says which conversation it belongs to. The monitor's state is per
conversation (what was read and fetched earlier decides what may be sent now), so the host gives the key:
its own conversation or agent-run id, the same for every server that conversation uses.
"""

from __future__ import annotations

try:
    import mcp as _mcp  # noqa: F401  (the SDK is an optional dependency: say how to get it)
except ImportError as exc:  # pragma: no cover - exercised in a subprocess without the SDK
    raise ImportError(
        "monitor.hosts.mcp needs the MCP Python SDK (the 'mcp' package), which is not installed: "
        "pip install 'trifecta-monitor[hosts]'"
    ) from exc

from monitor.hosts._mcp_client import GuardedClientSession
from monitor.hosts._mcp_server import ServerGuard, guard_server
from monitor.hosts._proxy import StdioProxy, run_stdio_proxy

__all__ = ["GuardedClientSession", "ServerGuard", "StdioProxy", "guard_server", "run_stdio_proxy"]
