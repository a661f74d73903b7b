"""`reverie connect CLIENT WS`: hook an agent client up to a workspace's MCP server in one command.

clients.py knows where each client keeps its configuration and how it spells a
server; writer.py merges the entry in (backup first, diff for a dry run).
"""
from __future__ import annotations

from pathlib import Path

from core.childproc import reverie_command
from core.connect.clients import CLIENTS, SCOPES, Target, server_entry, target_for
from core.connect.writer import Planned, apply, plan

DEFAULT_NAME = "reverie"

__all__ = ["CLIENTS", "SCOPES", "DEFAULT_NAME", "Planned", "Target", "apply", "plan_connection"]


def plan_connection(client: str, workspace: Path, *, scope: str | None = None, project: Path | None = None,
                    home: Path | None = None, name: str = DEFAULT_NAME, platform: str | None = None) -> Planned:
    """What `reverie connect` would write: the client's file with `reverie mcp WORKSPACE` merged in."""
    target = target_for(client, scope, project=project, home=home, platform=platform)
    command = reverie_command("mcp", str(Path(workspace).resolve()))
    return plan(target, name, server_entry(client, command))
