"""Workspace commands: init, demo, log, history, undo, restore, read."""
from __future__ import annotations

import sys
import time
from pathlib import Path


def register(sub) -> None:
    _command(sub, "init", "create a new workspace with the full layout", cmd_init)
    _command(sub, "demo", "write the bundled demo workspace (several weeks of agent memory)", cmd_demo,
             ("--force", {"action": "store_true", "help": "write even if the folder is not empty"}))
    _command(sub, "log", "append a bullet to today's daily log", cmd_log, ("text", {"nargs": "+"}))
    _command(sub, "history", "list the saved versions of MEMORY.md (or another file)", cmd_history,
             ("--file", {"default": "MEMORY.md", "help": "workspace-relative file (default MEMORY.md)"}),
             ("--all", {"action": "store_true", "help": "the history of every file"}))
    _command(sub, "undo", "undo the last change to MEMORY.md (or another file)", cmd_undo,
             ("--file", {"default": "MEMORY.md"}))
    _command(sub, "restore", "put back a version of MEMORY.md (or another file) from its history", cmd_restore,
             ("version", {"help": "a history entry id from `reverie history` (a unique prefix is enough): the file "
                                  "goes back to how it was before that change"}),
             ("--file", {"default": "MEMORY.md"}))
    _command(sub, "read", "print lines of a workspace file (confined to the workspace)", cmd_read,
             ("file", {}), ("--lines", {"default": "", "help": "START-END, 1-based, inclusive"}))


def _command(sub, name: str, help: str, func, *arguments: tuple[str, dict]) -> None:
    """One subcommand on a workspace: the `path` argument first, then `arguments` (flag, options)."""
    p = sub.add_parser(name, help=help)
    p.add_argument("path")
    for flag, options in arguments:
        p.add_argument(flag, **options)
    p.set_defaults(func=func)


def _open(path: str):
    from core.workspace import Workspace

    return Workspace.open(path)


def _by_person(ws, changes):
    """What a person's command wrote is not agent activity: no idle check counts it (core/dream/schedule/idle.py)."""
    from core.dream.schedule.idle import record_person_writes

    record_person_writes(ws.paths, changes.paths)
    return changes


MTIME_SLACK_S = 2.0     # file systems that keep whole seconds (HFS+, FAT) round a fresh mtime down


def _created_by_person(root: Path, since: float) -> None:
    """The files the person's `init` or `demo` just wrote (modified since it started) are not agent
    activity: the first dream must not wait ten minutes for an "agent" that never ran. Files that
    were there before keep whatever they were."""
    from core.dream.schedule.idle import record_person_writes, written_since
    from core.store.paths import WorkspacePaths

    paths = WorkspacePaths(root.resolve())
    record_person_writes(paths, written_since(paths, since - MTIME_SLACK_S))


def cmd_init(args) -> int:
    from core.workspace import Workspace

    started = time.time()
    ws = Workspace.create(args.path)
    _created_by_person(ws.root, started)
    print(f"created workspace {ws.root}")
    return 0


def cmd_demo(args) -> int:
    from core.demo import write_demo
    from core.errors import WorkspaceError

    target = Path(args.path)
    if target.exists() and any(target.iterdir()) and not args.force:
        raise WorkspaceError(f"{target} is not empty; choose another folder or pass --force")
    started = time.time()
    summary = write_demo(target)
    _created_by_person(target, started)
    print(f"wrote demo workspace {target.resolve()}: {summary}")
    return 0


def cmd_log(args) -> int:
    ws = _open(args.path)
    changes = ws.append_daily(" ".join(args.text))
    if changes.empty:
        from core.errors import CoreError

        raise CoreError("nothing to log: the text is empty")
    _by_person(ws, changes)
    first, last = changes.info["lines"]
    redacted = changes.info.get("redacted", 0)
    note = f" ({redacted} secret{'s' if redacted != 1 else ''} redacted)" if redacted else ""
    print(f"{changes.paths[0]}:{first}" + (f"-{last}" if last != first else "") + note)
    return 0


def cmd_history(args) -> int:
    ws = _open(args.path)
    entries = ws.history_entries(None if args.all else args.file)
    if not entries:
        print(f"no history for {'the workspace' if args.all else args.file}")
        return 0
    for entry in entries:
        state = " (undone)" if entry.undone_by else ""
        print(f"{entry.id}  {entry.time}  {entry.path}  {entry.reason}{state}")
    return 0


def cmd_undo(args) -> int:
    ws = _open(args.path)
    changes = _by_person(ws, ws.undo(args.file))
    print(f"restored the previous version of {changes.paths[0]} (sha256 {changes.info['hash'][:12]})")
    return 0


def cmd_restore(args) -> int:
    ws = _open(args.path)
    current = ws.read(args.file)
    entry = ws.history.get(args.version, ws.relative(ws.resolve(args.file)))
    changes = _by_person(ws, ws.restore(args.file, entry.id, current.hash))
    print(f"restored {changes.paths[0]} as it was before {entry.id} ({entry.reason}, {entry.time}); "
          f"`reverie undo` takes it back")
    return 0


def cmd_read(args) -> int:
    ws = _open(args.path)
    start, end = 1, None
    if args.lines:
        from core.errors import CoreError

        try:
            first, _, last = args.lines.partition("-")
            start, end = int(first), int(last or first)
        except ValueError as exc:
            raise CoreError(f"--lines takes START-END, e.g. 10-20, not {args.lines!r}") from exc
    from core.store.textio import escape_controls

    for number, line in ws.read_lines(args.file, start, end):
        sys.stdout.write(f"{number:>6}  {escape_controls(line, keep=chr(9))}\n")   # no ESC reaches the terminal
    return 0
