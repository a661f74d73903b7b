"""`reverie hook claude-code WS`: what Claude Code's SessionEnd / PreCompact hooks run
(`reverie connect claude-code WS --hooks` writes them). Reads the hook's JSON on stdin,
imports the transcript and flushes the new messages. A hook must never stop the agent:
every failure is one line on stderr and exit status 1, which Claude Code only shows."""
from __future__ import annotations

import sys


def register(sub) -> None:
    p = sub.add_parser("hook", help="run by an agent client's hooks: import its transcript and flush (stdin: the hook's JSON)")
    p.add_argument("client", choices=("claude-code",))
    p.add_argument("path", help="the workspace")
    p.add_argument("--no-flush", action="store_true", help="import only; flush later (`reverie flush`)")
    from core.llm.cli_args import add_model_arguments

    add_model_arguments(p)
    p.set_defaults(func=cmd_hook)


def cmd_hook(args) -> int:
    from core.errors import CoreError

    try:
        return _run(args)
    except CoreError as exc:
        print(f"reverie hook: {exc}", file=sys.stderr)
        return 1


def _run(args) -> int:
    from core.importers.hook import flush_session, import_for_hook, parse_hook_input
    from core.workspace import Workspace

    hook = parse_hook_input(sys.stdin.read())
    ws = Workspace.open(args.path)
    try:
        result = import_for_hook(ws, hook)
        print(f"{hook.event}: {result.describe()}")
        if args.no_flush or not result.written:
            return 0
        from core.llm import open_client
        from core.llm.cli_args import model_settings

        llm = open_client(model_settings(args, ws.settings.model))
        try:
            flushed = flush_session(ws, result.session_id, llm)
        finally:
            llm.close()
        print(f"flush {flushed.outcome}: {len(flushed.bullets)} bullet(s)" + (f" -> {flushed.path}" if flushed.path else ""))
        return 0 if flushed.outcome != "failed" else 1
    finally:
        ws.close()
