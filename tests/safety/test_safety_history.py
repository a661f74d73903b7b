"""Crash-safe history: SIGKILLed writers never leave undo stuck, a phantom entry, or a temp file.

A child process (forked, so it starts in microseconds) rewrites MEMORY.md through compare-and-swap
as fast as it can and is SIGKILLed at a random moment: between the history snapshot and the rename,
in the middle of a temp file, anywhere. After each kill the workspace is opened again: no temp file
may be left, the history's newest entry must be the file as it is, and `undo` must work.
"""
from __future__ import annotations

import datetime as dt
import fcntl
import os
import random
import signal
import subprocess
import sys
import time

import pytest

from core.store.atomic import TEMP_NAME
from core.store.hashing import sha256_bytes
from core.store.history import History, HistoryPolicy
from core.workspace import Workspace
from tests.support.processes import ROOT, python_env

BODY = "# MEMORY\n\n## Learnings\n" + "".join(f"- learned fact number {i} about the billing service\n"
                                                 for i in range(250))    # about 14 KB


def _writer(root) -> None:
    """In the forked child: rewrite MEMORY.md until killed."""
    try:
        ws = Workspace.open(root)
        n = 0
        while True:
            snap = ws.read_memory()
            ws.write_memory(BODY + f"- edit {os.getpid()}-{n}\n" * (1 + n % 7), snap.hash, reason=f"edit {n}")
            n += 1
    finally:
        os._exit(1)


def _temp_files(root) -> list[str]:
    return [os.path.join(folder, name) for folder, _dirs, names in os.walk(root) for name in names
            if TEMP_NAME.match(name)]


def _kill_loop(root, kills: int, seed: int) -> dict:
    rng = random.Random(seed)
    seen = {"phantoms": 0, "temps": 0}
    phantoms_before = 0
    for number in range(kills):
        ws = Workspace.open(root)                # a change of our own first: there is always one to undo
        ws.write_memory(BODY + f"- round {number}\n", ws.read_memory().hash, reason=f"round {number}")
        pid = os.fork()
        if pid == 0:
            _writer(root)
        time.sleep(rng.uniform(0.002, 0.06))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        seen["temps"] += bool(_temp_files(root))
        ws = Workspace.open(root)                # removes what the killed writer left
        assert _temp_files(root) == []
        current = ws.read_memory()
        landed = ws.history_entries("MEMORY.md")
        phantoms = len(ws.history.entries("MEMORY.md")) - len(landed)
        assert phantoms - phantoms_before in (0, 1)       # one kill leaves at most one change that never landed
        seen["phantoms"] += phantoms - phantoms_before
        assert landed and landed[0].hash_after == current.hash       # the newest change listed is the file now
        undone = ws.undo()                                            # never "changed after the change being undone"
        assert ws.read_memory().hash == undone.info["hash"]
        phantoms_before = len(ws.history.entries("MEMORY.md")) - len(ws.history_entries("MEMORY.md"))
    return seen


def test_sigkills_during_memory_writes_leave_undo_working(workspace):
    _kill_loop(workspace.root, kills=12, seed=7)


@pytest.mark.slow
def test_two_hundred_sigkills_during_memory_writes(workspace, capsys):
    seen = _kill_loop(workspace.root, kills=200, seed=11)
    with capsys.disabled():
        print(f"\n200 SIGKILLs: {seen['temps']} left a temp file, {seen['phantoms']} phantom history entries; "
              "undo worked after every one")


def test_a_phantom_entry_is_not_listed_and_not_undone(workspace):
    """The entry of a change whose rename never happened (the writer died in between)."""
    first = workspace.write_memory(BODY, workspace.read_memory().hash, reason="real change")
    current = workspace.read_memory()
    workspace.history.record("MEMORY.md", current.text.encode(), current.hash, sha256_bytes(b"never landed"),
                             "killed before its rename")
    assert [e.reason for e in workspace.history_entries("MEMORY.md")] == ["real change"]
    workspace.undo()
    assert workspace.read_memory().text != BODY
    assert first.info["history_id"]


def test_a_killed_undo_is_not_undone_twice(workspace):
    """An undo that landed but whose process died before marking what it undid still counts."""
    workspace.write_memory(BODY, workspace.read_memory().hash, reason="edit")
    entry = workspace.history.latest_undoable("MEMORY.md")
    before = workspace.history.snapshot(entry)
    snap = workspace.read_memory()
    workspace.documents.write("MEMORY.md", before, snap.hash, reason=f"undo: {entry.reason}", undoes=entry.id)
    # (no mark_undone: the process "died" here)
    with pytest.raises(Exception, match="nothing to undo"):
        workspace.undo()


def test_undo_and_restore_are_byte_exact(workspace):
    path = workspace.paths.memory_md
    raw = b"# MEMORY\n\n- caf\xe9 in Latin-1, and a NUL \x00 the agent wrote\n"
    path.write_bytes(raw)
    workspace.write_memory("# MEMORY\n\n- clean\n", workspace.read_memory().hash, reason="clean up")
    workspace.undo()
    assert path.read_bytes() == raw
    entry = workspace.history_entries("MEMORY.md")[-1]
    workspace.write_memory("# MEMORY\n", workspace.read_memory().hash)
    done = subprocess.run([sys.executable, "-m", "core", "restore", str(workspace.root), entry.id[:18]],
                          capture_output=True, text=True, cwd=ROOT, env=python_env(), timeout=120)
    assert done.returncode == 0, done.stderr
    assert path.read_bytes() == raw and "restored MEMORY.md" in done.stdout
    bad = subprocess.run([sys.executable, "-m", "core", "restore", str(workspace.root), "nosuchversion"],
                         capture_output=True, text=True, cwd=ROOT, env=python_env(), timeout=120)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and "reverie history" in bad.stderr


def test_a_live_writers_temp_file_is_left_alone(workspace):
    live = workspace.root / ".MEMORY.md.abcd1234.tmp"
    dead = workspace.paths.memory_dir / ".2026-01-01.md.zz99yy88.tmp"
    live.write_bytes(b"being written")
    dead.write_bytes(b"orphan")
    with open(live, "rb") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)          # its writer is alive and holds it
        opened = Workspace.open(workspace.root)
        assert live.exists() and not dead.exists()
        assert opened.removed_temp_files == ["memory/.2026-01-01.md.zz99yy88.tmp"]


def test_history_is_pruned_by_its_policy(tmp_path):
    root = tmp_path / "ws"
    history = History(root / ".reverie" / "history", root,
                      HistoryPolicy(keep_all_days=7, daily_until_days=30, max_bytes=10**9, keep_latest=3))
    now = dt.datetime(2026, 6, 30, 12, tzinfo=dt.timezone.utc)
    for days in (0, 1, 2, 6):                       # kept: within a week
        history.record("MEMORY.md", b"x", "a", "b", f"recent {days}", now=now - dt.timedelta(days=days))
    for hours in (0, 3, 6):                         # 10 days ago: three changes, the newest of the day is kept
        history.record("MEMORY.md", b"x", "a", "b", f"day10 {hours}", now=now - dt.timedelta(days=10, hours=hours))
    for days in (40, 41, 42, 50):                   # older than 30 days: one per ISO week
        history.record("MEMORY.md", b"x", "a", "b", f"old {days}", now=now - dt.timedelta(days=days))
    removed = history.prune("MEMORY.md", now=now)
    kept = [e.reason for e in history.entries("MEMORY.md")]
    # (40, 41 and 42 days back are one ISO week, 50 days back the week before)
    assert kept == ["recent 0", "recent 1", "recent 2", "recent 6", "day10 0", "old 40", "old 50"]
    assert removed == 4
    # then the size cap: the oldest go first, but never the newest `keep_latest`
    capped = History(history.dir, root, HistoryPolicy(max_bytes=2, keep_latest=3))
    capped.prune(now=now)
    assert [e.reason for e in capped.entries("MEMORY.md")] == ["recent 0", "recent 1", "recent 2"]
    snaps = sorted(p.name for p in (history.dir / "MEMORY.md").iterdir())
    assert len(snaps) == 6      # each kept entry has its .json and its .snap, nothing else
