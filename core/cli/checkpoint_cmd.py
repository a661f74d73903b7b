"""Checkpoint commands: `reverie checkpoint list|show|restore`.

    reverie checkpoint list PATH [--session ID]            every checkpoint, oldest first
    reverie checkpoint show PATH CHECKPOINT [--session ID] one checkpoint as JSON
    reverie checkpoint restore PATH CHECKPOINT [--session ID]
        make it the newest checkpoint of its session (a copy, so nothing is lost), say which
        artifacts changed since it was saved, and print the context a restarted agent starts from
"""
from __future__ import annotations

import json


def register(sub) -> None:
    p = sub.add_parser("checkpoint", help="list, show or restore task checkpoints")
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    verbs.required = True
    for verb, help_text, func in (("list", "list the checkpoints", cmd_list),
                                  ("show", "print one checkpoint as JSON", cmd_show),
                                  ("restore", "make a checkpoint the one a restarted agent resumes from", cmd_restore)):
        q = verbs.add_parser(verb, help=help_text)
        q.add_argument("path", help="the workspace")
        if verb != "list":
            q.add_argument("checkpoint", help="a checkpoint id (cp-...)")
        q.add_argument("--session", default="", help="only this session's checkpoints")
        q.set_defaults(func=func)


def _open(path: str):
    from core.workspace import Workspace

    return Workspace.open(path)


def find_checkpoint(ws, checkpoint_id: str, session: str = "") -> dict:
    """The checkpoint with this id (in `session`, or in whichever session holds it)."""
    from core.errors import NotFoundError, WorkspaceError

    found = [p for p in ws.checkpoint_files(session or None) if p.stem == checkpoint_id]
    if not found:
        where = f" in session {session!r}" if session else ""
        raise NotFoundError(f"no checkpoint {checkpoint_id!r}{where}; `reverie checkpoint list {ws.root}` lists them")
    if len(found) > 1:
        sessions = ", ".join(p.parent.name for p in found)
        raise WorkspaceError(f"checkpoint {checkpoint_id!r} is in several sessions ({sessions}); give --session")
    return ws.read_checkpoint(found[0])


def cmd_list(args) -> int:
    from core.errors import FormatError
    from core.store.checkpoints import next_task

    ws = _open(args.path)
    files = ws.checkpoint_files(args.session or None)
    if not files:
        print("no checkpoints" + (f" in session {args.session}" if args.session else ""))
        return 0
    for path in files:
        try:
            cp = ws.read_checkpoint(path)
        except FormatError as exc:
            print(f"{path.stem}  {path.parent.name}  (damaged: {exc})")
            continue
        task = next_task(cp)
        resume = f"  resume at {task['id']}: {task.get('title', '')}" if task else ""
        print(f"{cp['checkpoint_id']}  {cp['session_id']}  {cp['timestamp']}  {cp.get('reason') or '-'}  "
              f"done {len(cp['completed_steps'])}, pending {len(cp['pending_steps'])}  "
              f"target: {cp['target'] or '(none)'}{resume}")
    return 0


def cmd_show(args) -> int:
    ws = _open(args.path)
    print(json.dumps(find_checkpoint(ws, args.checkpoint, args.session), ensure_ascii=False, indent=2))
    return 0


def cmd_restore(args) -> int:
    import hashlib

    from core.harness.restart import fresh_restart
    from core.store.checkpoints import new_checkpoint_id

    ws = _open(args.path)
    cp = find_checkpoint(ws, args.checkpoint, args.session)
    changed = []
    for rel, digest in cp["artifacts"].items():
        path = ws.root / rel
        now = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else ""
        if now != digest:
            changed.append(f"{rel} ({'missing' if not now else 'changed'})")
    copy = {**cp, "checkpoint_id": new_checkpoint_id(), "reason": f"restored from {cp['checkpoint_id']}"}
    ws.save_checkpoint(copy)
    print(f"restored {cp['checkpoint_id']} as {copy['checkpoint_id']} (session {cp['session_id']}); "
          f"a restarted agent resumes from it")
    if changed:
        print("artifacts changed since it was saved: " + ", ".join(changed))
    print()
    print(fresh_restart(ws, session_id=cp["session_id"]).text)
    return 0
