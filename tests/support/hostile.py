"""Hostile workspaces: symbolic links planted inside that lead outside, and proof that nothing went there.

`plant_file_links` / `plant_folder_links` put links where Reverie reads and writes (today's daily log,
progress.md, a session log, checkpoints/, handoffs/, ...), each pointing into an `outside` folder that
holds a secret. `outside_state` records every name, byte and mtime there, so a test compares it before
and after. `touched_outside` reads an audit log (tests/support/audited_cli.py) and returns every
event whose path, resolved through the links still in place, lies in `outside`.
"""
from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

SECRET = "OUTSIDE-SECRET-4b1d-never-read-or-written"


def make_outside(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    (outside / "cps" / "mcp").mkdir(parents=True)
    (outside / "hos").mkdir()
    (outside / "sessions").mkdir()
    (outside / "archive").mkdir()
    (outside / "results" / "s1").mkdir(parents=True)
    (outside / "memory").mkdir()
    (outside / "bashrc").write_text(f"export PS1='$ '  # {SECRET}\n", encoding="utf-8")
    (outside / "progress.md").write_text(f"# Progress\n\n## Goal\n{SECRET}\n", encoding="utf-8")
    (outside / "old-log.md").write_text(f"# 2026-01-02\n\n- {SECRET}\n", encoding="utf-8")
    (outside / "session.jsonl").write_text(json.dumps({"role": "user", "content": SECRET, "id": "x"}) + "\n",
                                           encoding="utf-8")
    checkpoint = {"timestamp": "2026-01-02T10:00:00+00:00", "session_id": "mcp", "checkpoint_id": "cp-outside",
                  "target": SECRET, "completed_steps": [], "pending_steps": [], "artifacts": {},
                  "context_summary": SECRET, "last_action": ""}
    (outside / "cps" / "mcp" / "cp-outside.json").write_text(json.dumps(checkpoint), encoding="utf-8")
    (outside / "cp.json").write_text(json.dumps(checkpoint), encoding="utf-8")
    packet = {"from_agent": "a", "to_agent": "b", "original_target": SECRET, "why_this_agent": "",
              "completed_work": [], "known_constraints": [], "failed_attempts": [], "current_state": SECRET,
              "success_criteria": "", "termination_condition": "", "id": "ho-outside", "task_id": "t",
              "created": "2026-01-02T10:00:00+00:00", "hop": 1}
    (outside / "hos" / "ho-outside.json").write_text(json.dumps(packet), encoding="utf-8")
    (outside / "ho.json").write_text(json.dumps(packet), encoding="utf-8")
    (outside / "sessions" / "s-out.log.jsonl").write_text((outside / "session.jsonl").read_text(), encoding="utf-8")
    (outside / "memory" / "2026-01-03.md").write_text(f"# 2026-01-03\n\n- {SECRET}\n", encoding="utf-8")
    (outside / "results" / "s1" / "c1.txt").write_text(SECRET, encoding="utf-8")
    return outside


def plant_file_links(ws: Path, outside: Path) -> None:
    """Files inside the layout that are links out (the folders are real)."""
    today = dt.date.today().isoformat()
    (ws / "memory" / f"{today}.md").symlink_to(outside / "bashrc")
    (ws / "memory" / "2026-01-02.md").symlink_to(outside / "old-log.md")
    (ws / "progress.md").symlink_to(outside / "progress.md")
    (ws / "sessions" / "s-link.log.jsonl").symlink_to(outside / "session.jsonl")
    (ws / "checkpoints" / "mcp").mkdir(parents=True, exist_ok=True)
    (ws / "checkpoints" / "mcp" / "cp-link.json").symlink_to(outside / "cp.json")
    (ws / "handoffs" / "ho-link.json").symlink_to(outside / "ho.json")


def plant_folder_links(ws: Path, outside: Path) -> None:
    """Folders of the layout that are links out."""
    for name, target in (("checkpoints", "cps"), ("handoffs", "hos"), ("sessions", "sessions"),
                         ("large_tool_results", "results")):
        _replace_with_link(ws / name, outside / target)
    _replace_with_link(ws / "memory" / "archive", outside / "archive")


def plant_memory_folder_link(ws: Path, outside: Path) -> None:
    _replace_with_link(ws / "memory", outside / "memory")


def _replace_with_link(path: Path, target: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        for child in sorted(path.rglob("*"), reverse=True):
            child.rmdir() if child.is_dir() else child.unlink()
        path.rmdir()
    path.symlink_to(target, target_is_directory=True)


def outside_state(outside: Path) -> dict[str, tuple[bytes, int]]:
    """name -> (bytes, mtime_ns) of everything in `outside`."""
    state = {}
    for path in sorted(outside.rglob("*")):
        stat = path.lstat()
        state[path.relative_to(outside).as_posix()] = (path.read_bytes() if path.is_file() else b"", stat.st_mtime_ns)
    return state


def touched_outside(audit_log: Path, outside: Path) -> list[str]:
    """Audit events (open, listing, rename, mkdir, ...) whose path resolves into `outside`."""
    if not audit_log.exists():
        return []
    root = str(outside.resolve())
    hits = []
    for line in audit_log.read_text(encoding="utf-8").splitlines():
        event, _, path = line.partition("\t")
        real = os.path.realpath(path)
        if real == root or real.startswith(root + os.sep):
            hits.append(f"{event} {path} -> {real}")
    return hits


def hostile_workspace(folder: Path, plant) -> tuple[Path, Path]:
    """A new workspace in `folder`/ws with `plant(ws, outside)` applied; returns (ws, outside)."""
    from core.workspace import Workspace

    ws = Workspace.create(folder / "ws").root
    outside = make_outside(folder)
    plant(ws, outside)
    return ws, outside
