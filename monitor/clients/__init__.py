"""What MCP clients do with tool annotations before calling a tool."""

from monitor.clients._profiles import (
    CLIENT_TITLES,
    PROFILES,
    Client,
    ClientAction,
    decide_for_client,
)

__all__ = [
    "CLIENT_TITLES",
    "Client",
    "ClientAction",
    "PROFILES",
    "decide_for_client",
]
