"""`reverie import claude-code|jsonl SOURCE WORKSPACE`: other agents' transcripts into session logs."""
from __future__ import annotations

import sys

MAX_PROBLEMS_SHOWN = 20


def register(sub) -> None:
    p = sub.add_parser("import", help="import agent transcripts into a workspace's sessions/",
                       description="Turn transcripts into sessions/<id>.log.jsonl (roles, tool calls and results "
                                   "kept). Importing again appends only what is new. Malformed lines are "
                                   "reported and skipped.")
    kinds = p.add_subparsers(dest="format", metavar="FORMAT")
    kinds.required = True
    for name, help_text in (("claude-code", "Claude Code transcripts (~/.claude/projects/<project>/*.jsonl)"),
                            ("jsonl", "a generic OpenAI-style chat log: one message or one {\"messages\": [...]} "
                                      "conversation per line")):
        q = kinds.add_parser(name, help=help_text)
        q.add_argument("source", help="a .jsonl file, or a folder of them (searched recursively)")
        q.add_argument("workspace", help="the memory workspace")
        q.add_argument("--session-id", default=None, help="the session id to use (one transcript only)")
        q.set_defaults(func=cmd_import)


def cmd_import(args) -> int:
    from core.errors import FormatError
    from core.importers import import_chat_log, import_claude_code
    from core.workspace import Workspace

    ws = Workspace.open(args.workspace)
    try:
        run = import_claude_code if args.format == "claude-code" else import_chat_log
        results = run(ws, args.source, args.session_id)
    finally:
        ws.close()
    problems = [p for r in results for p in r.problems]
    for result in results:
        print(result.describe())
    for problem in problems[:MAX_PROBLEMS_SHOWN]:
        print(f"  skipped {problem}", file=sys.stderr)
    if len(problems) > MAX_PROBLEMS_SHOWN:
        print(f"  ... and {len(problems) - MAX_PROBLEMS_SHOWN} more malformed line(s)", file=sys.stderr)
    if not any(r.messages for r in results):
        raise FormatError(f"no messages found in {args.source}"
                          + (f" ({len(problems)} malformed line(s))" if problems else ""))
    total = sum(r.written for r in results)
    imported = [r for r in results if r.written]
    print(f"imported {total} message(s) into {len(imported)} session(s)")
    if imported:
        print(f"next: reverie flush {args.workspace} --session {imported[0].session_id}   "
              f"(extracts durable facts into today's daily log)")
    return 0
