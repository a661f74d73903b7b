"""`reverie connect CLIENT WS`: write a client's MCP configuration so it starts `reverie mcp WS`.

    reverie connect claude-code|codex|cursor|claude-desktop WS [--scope project|user] [--project DIR]
                    [--name NAME] [--hooks] [--mirror-memory] [--dry-run]

--hooks (Claude Code): also its SessionEnd / PreCompact hooks, which import the session's transcript
and flush the new messages (`reverie hook claude-code WS`). --mirror-memory (Claude Code): MEMORY.md as a
block at the top of Claude Code's memory file for the project, within its 200-line / 25 KB load limit.
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
    p.add_argument("--hooks", action="store_true", help="claude-code: also add SessionEnd/PreCompact hooks that "
                                                        "import the transcript and flush it")
    p.add_argument("--mirror-memory", action="store_true", help="claude-code: also mirror MEMORY.md into Claude "
                                                                "Code's memory file for the project (with a meter)")
    p.add_argument("--dry-run", action="store_true", help="print the change as a diff; write nothing")
    p.set_defaults(func=cmd_connect)


def cmd_connect(args) -> int:
    from pathlib import Path

    from core.connect import plan_connection
    from core.errors import ConfigError
    from core.workspace import Workspace

    if not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", args.name):
        raise ConfigError(f"--name takes letters, digits, _ and - (not {args.name!r})")
    if (args.hooks or args.mirror_memory) and args.client != "claude-code":
        raise ConfigError("--hooks and --mirror-memory are for claude-code")
    ws = Workspace.open(args.path)
    root = ws.root
    project = Path(args.project) if args.project else None
    plans = [plan_connection(args.client, root, scope=args.scope, project=project, name=args.name)]
    if args.hooks:
        from core.connect.hooks import plan_hooks, settings_target

        plans.append(plan_hooks(settings_target(plans[0].target.scope, project=project), root))
    if args.mirror_memory:
        from core.connect.mirror import memory_target, plan_mirror

        mirror, meter = plan_mirror(ws, memory_target(project or Path.cwd()))
        plans.append(mirror)
        print(f"MEMORY.md mirror: {meter.describe()}")
    for planned in plans:
        _write(planned, args.dry_run)
    if not args.dry_run and any(p.changed for p in plans):
        print(f"restart {args.client} (or reload its MCP servers) to start using {root}")
    return 0


def _write(planned, dry_run: bool) -> None:
    from core.connect import apply

    where = planned.target.path
    if not planned.changed:
        print(f"{where} is up to date; nothing to change")
    elif dry_run:
        sys.stdout.write(planned.diff())
        print(f"(dry run: {where} not written)")
    else:
        backup = apply(planned)
        print(f"wrote {where}" + (f" (the old file is kept as {backup.name})" if backup else ""))
