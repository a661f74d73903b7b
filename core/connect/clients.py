"""Where and how each agent client keeps its MCP servers (for `reverie connect`).

| client         | project scope (DIR)         | user scope                                   | format |
|----------------|-----------------------------|----------------------------------------------|--------|
| claude-code    | DIR/.mcp.json               | ~/.claude.json                               | JSON mcpServers |
| codex          | DIR/.codex/config.toml      | ~/.codex/config.toml                         | TOML [mcp_servers.NAME] |
| cursor         | DIR/.cursor/mcp.json        | ~/.cursor/mcp.json                           | JSON mcpServers |
| claude-desktop | (none)                      | Claude's claude_desktop_config.json          | JSON mcpServers |

Claude Desktop's file lives in ~/Library/Application Support/Claude/ on macOS,
%APPDATA%/Claude/ on Windows and ~/.config/Claude/ elsewhere.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

from core.errors import ConfigError

CLIENTS = ("claude-code", "codex", "cursor", "claude-desktop")
SCOPES = ("project", "user")
DEFAULT_SCOPE = {"claude-code": "project", "codex": "user", "cursor": "project", "claude-desktop": "user"}


@dataclass(frozen=True)
class Target:
    client: str
    scope: str
    path: Path
    format: str              # "json" | "toml"


def claude_desktop_config(home: Path, platform: str | None = None) -> Path:
    platform = platform or sys.platform
    if platform == "darwin":
        return home / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json"
    if platform.startswith("win"):
        return Path(os.environ.get("APPDATA", home / "AppData" / "Roaming")) / "Claude" / "claude_desktop_config.json"
    return home / ".config" / "Claude" / "claude_desktop_config.json"


def target_for(client: str, scope: str | None = None, *, project: Path | None = None, home: Path | None = None,
               platform: str | None = None) -> Target:
    """The configuration file `reverie connect CLIENT` writes, for a scope (default: the client's usual one)."""
    if client not in CLIENTS:
        raise ConfigError(f"unknown client {client!r}; use one of {', '.join(CLIENTS)}")
    scope = scope or DEFAULT_SCOPE[client]
    if scope not in SCOPES:
        raise ConfigError(f"unknown scope {scope!r}; use project or user")
    home = Path(home or Path.home())
    project = Path(project or Path.cwd()).expanduser().resolve()
    if client == "claude-desktop":
        if scope == "project":
            raise ConfigError("Claude Desktop has no project configuration; use --scope user")
        return Target(client, scope, claude_desktop_config(home, platform), "json")
    if client == "codex":
        base = project if scope == "project" else home
        return Target(client, scope, base / ".codex" / "config.toml", "toml")
    if client == "cursor":
        base = project if scope == "project" else home
        return Target(client, scope, base / ".cursor" / "mcp.json", "json")
    path = project / ".mcp.json" if scope == "project" else home / ".claude.json"
    return Target(client, scope, path, "json")


def server_entry(client: str, command: list[str]) -> dict:
    """The server's entry as this client spells it (Claude Code names the transport)."""
    entry: dict = {"command": command[0], "args": list(command[1:])}
    if client == "claude-code":
        entry = {"type": "stdio", **entry}
    return entry
