"""The attention anchor and a fresh restart from the command line.

    reverie progress PATH                       print progress.md (goal, progress, blockers, next step)
    reverie progress PATH [--goal G] [--done D] [--blocker B ...] [--clear-blockers] [--next N]
                                                update it (a person's own sections are kept)
    reverie restart PATH [--session ID]         print the context a fresh restart starts from
                                                (AGENTS.md, progress.md, the latest checkpoint, git diff)
"""
from __future__ import annotations


def register(sub) -> None:
    p = sub.add_parser("progress", help="show or update progress.md, the attention anchor of the current task")
    p.add_argument("path", help="the workspace")
    p.add_argument("--goal", default=None, help="set the goal")
    p.add_argument("--done", default=None, help="add an item to Progress")
    p.add_argument("--blocker", action="append", default=None, help="set the blockers (repeatable)")
    p.add_argument("--clear-blockers", action="store_true", help="no blockers any more")
    p.add_argument("--next", dest="next_step", default=None, help="set the next step")
    p.set_defaults(func=cmd_progress)
    p = sub.add_parser("restart", help="print the context a fresh restart (tier 4) starts from")
    p.add_argument("path", help="the workspace")
    p.add_argument("--session", default="", help="resume this session's latest checkpoint (default: the newest)")
    p.add_argument("--tokens", type=int, default=3000, help="budget of the restart context (tokens)")
    p.set_defaults(func=cmd_restart)


def cmd_progress(args) -> int:
    from core.harness.anchor import AnchorStore
    from core.workspace import Workspace

    ws = Workspace.open(args.path)
    store = AnchorStore(ws)
    blockers = [] if args.clear_blockers else args.blocker
    if any(v is not None for v in (args.goal, args.done, blockers, args.next_step)):
        anchor = store.update(goal=args.goal, done=args.done, blockers=blockers, next_step=args.next_step)
        print("progress.md updated")
    else:
        anchor = store.load()
    print(anchor.render().rstrip())
    return 0


def cmd_restart(args) -> int:
    from core.harness.restart import fresh_restart
    from core.workspace import Workspace

    ws = Workspace.open(args.path)
    print(fresh_restart(ws, session_id=args.session or None, budget_tokens=args.tokens).text)
    return 0
