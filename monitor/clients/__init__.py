"""What MCP clients do with tool annotations before calling a tool, and the ``trifecta clients`` table that
sets it beside the tool's legs and what the monitor adds."""

from monitor.clients._profiles import (
    CLIENT_TITLES,
    PROFILES,
    Client,
    ClientAction,
    decide_for_client,
)
from monitor.clients._table import (
    MONITOR_ASKS,
    MONITOR_NOTHING,
    ClientRow,
    ClientTable,
    build_client_table,
    build_client_tables,
    default_classifier,
    describe_monitor,
)

__all__ = [
    "CLIENT_TITLES",
    "Client",
    "ClientAction",
    "ClientRow",
    "ClientTable",
    "MONITOR_ASKS",
    "MONITOR_NOTHING",
    "PROFILES",
    "build_client_table",
    "build_client_tables",
    "decide_for_client",
    "default_classifier",
    "describe_monitor",
]
