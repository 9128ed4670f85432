"""What MCP clients do with tool annotations before calling a tool, as reported October 2026.

See docs/design.md, "Client profiles".

These profiles are the baseline the monitor tightens: a host that already asks before every write asks
often; the monitor asks when the trifecta forms.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum

from monitor.models import ToolAnnotations


class ClientAction(StrEnum):
    """What a client does before calling a tool."""

    RUN = "run"
    ASK = "ask"
    BLOCK = "block"
    MODEL = "model"  # left to the model's judgement


class Client(StrEnum):
    """Client profiles."""

    VSCODE = "vscode"
    CLAUDE = "claude"
    CHATGPT = "chatgpt"
    CODEX = "codex"
    GEMINI = "gemini"
    GOOSE = "goose"


def _read_only(a: ToolAnnotations) -> bool:
    return a.readOnlyHint is True


def _destructive(a: ToolAnnotations) -> bool:
    # destructiveHint defaults to true and is meaningful only when the tool is not read-only.
    return not _read_only(a) and a.destructiveHint is not False


def _vscode(a: ToolAnnotations) -> ClientAction:
    return ClientAction.RUN if _read_only(a) else ClientAction.ASK


def _claude(a: ToolAnnotations) -> ClientAction:
    # Read-only skips confirmation; destructive always asks; a write marked non-destructive still asks.
    return ClientAction.RUN if _read_only(a) else ClientAction.ASK


def _chatgpt(a: ToolAnnotations) -> ClientAction:
    return ClientAction.RUN if _read_only(a) else ClientAction.ASK


def _codex(a: ToolAnnotations) -> ClientAction:
    # Never asks before read-only, always before destructive; other writes follow its approval mode.
    if _read_only(a):
        return ClientAction.RUN
    return ClientAction.ASK if _destructive(a) else ClientAction.MODEL


def _gemini(a: ToolAnnotations) -> ClientAction:
    return ClientAction.RUN if _read_only(a) else ClientAction.BLOCK


def _goose(a: ToolAnnotations) -> ClientAction:
    if a.readOnlyHint is None:
        return ClientAction.MODEL
    return ClientAction.RUN if a.readOnlyHint else ClientAction.ASK


PROFILES: dict[Client, Callable[[ToolAnnotations], ClientAction]] = {
    Client.VSCODE: _vscode,
    Client.CLAUDE: _claude,
    Client.CHATGPT: _chatgpt,
    Client.CODEX: _codex,
    Client.GEMINI: _gemini,
    Client.GOOSE: _goose,
}
"""Each client's action before calling a tool with the given annotations."""

CLIENT_TITLES: dict[Client, str] = {
    Client.VSCODE: "VS Code Copilot",
    Client.CLAUDE: "Claude",
    Client.CHATGPT: "ChatGPT",
    Client.CODEX: "Codex CLI",
    Client.GEMINI: "Gemini CLI (plan mode)",
    Client.GOOSE: "Goose (smart approve)",
}


def decide_for_client(client: Client, annotations: ToolAnnotations) -> ClientAction:
    """What ``client`` does before calling a tool with ``annotations``."""
    return PROFILES[client](annotations)
