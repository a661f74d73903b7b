"""`reverie connect CLIENT WS`: write a client's MCP configuration so it starts `reverie mcp WS`.

    reverie connect claude-code|codex|cursor|claude-desktop WS [--scope project|user] [--project DIR]
                    [--name NAME] [--dry-run]
"""
from __future__ import annotations

import re
import sys

from core.connect import CLIENTS, DEFAULT_NAME, SCOPES


def register(sub) -> None:
    p = sub.add_parser("connect", help="add this workspace's MCP server to Claude Code, Codex, Cursor or Claude Desktop")
    p.add_argument("client", choices=CLIENTS)
    p.add_argument("path", help="the workspace")
    p.add_argument("--scope", choices=SCOPES, default=None,
                   help="project (the current folder or --project) or user (your home); default: the client's usual")
    p.add_argument("--project", default=None, help="the project folder for --scope project (default: here)")
    p.add_argument("--name", default=DEFAULT_NAME, help=f"the server's name in the client (default {DEFAULT_NAME})")
    p.add_argument("--dry-run", action="store_true", help="print the change as a diff; write nothing")
    p.set_defaults(func=cmd_connect)


def cmd_connect(args) -> int:
    from pathlib import Path

    from core.connect import apply, plan_connection
    from core.errors import ConfigError
    from core.workspace import Workspace

    if not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", args.name):
        raise ConfigError(f"--name takes letters, digits, _ and - (not {args.name!r})")
    root = Workspace.open(args.path).root
    planned = plan_connection(args.client, root, scope=args.scope,
                              project=Path(args.project) if args.project else None, name=args.name)
    where = planned.target.path
    if not planned.changed:
        print(f"{where} already starts `reverie mcp {root}` as {args.name!r}; nothing to change")
        return 0
    if args.dry_run:
        sys.stdout.write(planned.diff())
        print(f"(dry run: {where} not written)")
        return 0
    backup = apply(planned)
    print(f"wrote {args.name!r} into {where}" + (f" (the old file is kept as {backup.name})" if backup else ""))
    print(f"restart {args.client} (or reload its MCP servers) to start using {root}")
    return 0
