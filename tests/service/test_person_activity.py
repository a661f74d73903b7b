"""The person's own writes (`reverie log`, `reverie undo`, a save in the app) are not agent activity:
no idle check in any process counts them, and `reverie serve` does not log them under "files"; a
later agent write to the same file still counts."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from core.dream.schedule.idle import OUTSIDE_AGENT, IdleMonitor, record_person_writes
from core.store.activity import PERSON, last_by_agent, person_writes, read_since, record_activity
from core.store.paths import WorkspacePaths

from tests.support.processes import python_env

ROOT = Path(__file__).resolve().parents[2]


def reverie(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "core", *args], capture_output=True, text=True, cwd=ROOT,
                          env=python_env(), timeout=300)


def age_files(root: Path, seconds: float) -> None:
    """Make every workspace file `seconds` old: only what a test writes afterwards is new."""
    then = time.time() - seconds
    for path in root.rglob("*"):
        if path.is_file():
            os.utime(path, (then, then))


def test_reverie_log_is_the_persons_write_and_a_later_agent_write_still_counts(workspace):
    ws = workspace
    age_files(ws.root, 3600)
    record_activity(ws.paths, "claude-code", "search", "memory_search", when=time.time() - 3000)
    out = reverie("log", str(ws.root), "Maya", "prefers", "tea")
    assert out.returncode == 0, out.stderr
    rel = out.stdout.strip().split(":")[0]
    mtime = os.stat(ws.root / rel).st_mtime

    monitor = IdleMonitor(ws.paths, idle_minutes=10)        # a process of its own, as `reverie serve` is
    assert monitor.idle_for() > 2900 and monitor.is_idle()
    assert monitor.last_activity()[1] == "claude-code: search memory_search"
    assert monitor.record_outside_write() == ""             # nothing logged under "files"
    assert list(last_by_agent(ws.paths)) == ["claude-code"]
    mine = [entry for entry in read_since(ws.paths, 0) if entry.agent == PERSON]
    assert [(entry.kind, entry.detail) for entry in mine] == [("write", rel)]
    assert abs(mine[0].timestamp - mtime) < 1e-5 and person_writes(ws.paths) == {rel: mtime}

    status = reverie("status", str(ws.root))
    assert status.returncode == 0 and "\nidle: last activity 50 min ago (claude-code: search" in status.stdout

    # An agent appends to the same log (the MCP tool goes through the same facade): that counts.
    ws.append_daily("The agent noted the deploy is green")
    assert os.stat(ws.root / rel).st_mtime != mtime
    assert not monitor.is_idle() and monitor.last_activity()[1] == f"{rel} written"
    assert monitor.record_outside_write() == rel
    assert last_by_agent(ws.paths)[OUTSIDE_AGENT].detail == rel


def test_undo_from_the_command_line_is_the_persons_write_too(workspace):
    ws = workspace
    snap = ws.read_memory()
    ws.write_memory(snap.text + "- A fact\n", snap.hash, reason="test")
    age_files(ws.root, 3600)
    out = reverie("undo", str(ws.root))
    assert out.returncode == 0, out.stderr
    assert IdleMonitor(ws.paths, idle_minutes=10).is_idle()
    assert "MEMORY.md" in person_writes(ws.paths)


def test_an_agent_cannot_pass_for_the_person_and_stale_records_are_dropped(workspace):
    ws = workspace
    entry = record_activity(ws.paths, PERSON, "write", "memory_append")      # an MCP client named "person"
    assert entry.agent != PERSON and entry.agent in last_by_agent(ws.paths)
    log = ws.root / ws.append_daily("A note").paths[0]
    rel = ws.relative(log)
    assert set(record_person_writes(ws.paths, ["MEMORY.md", rel, "memory/", ".reverie/config.toml",
                                               "memory/no-such-file.md"])) == {"MEMORY.md", rel}
    os.utime(log, (time.time() + 5, time.time() + 5))                       # written again since
    record_person_writes(ws.paths, ["MEMORY.md"])
    assert person_writes(ws.paths) == {"MEMORY.md": os.stat(ws.root / "MEMORY.md").st_mtime}


def test_a_new_workspace_from_init_or_demo_is_idle_at_once_but_files_already_there_keep_their_say(tmp_path):
    for command in ("init", "demo"):
        root = tmp_path / command
        out = reverie(command, str(root))
        assert out.returncode == 0, out.stderr
        paths = WorkspacePaths(root.resolve())
        assert IdleMonitor(paths, idle_minutes=10).last_activity()[0] == 0.0, command   # nothing an agent did
        assert "MEMORY.md" in person_writes(paths)
    # An agent's file from a minute ago in a folder the person then makes a workspace: still the agent's.
    root = tmp_path / "existing"
    (root / "memory").mkdir(parents=True)
    (root / "memory" / "2026-12-01.md").write_text("# 2026-12-01\n\n- the agent wrote this\n", encoding="utf-8")
    minute_ago = time.time() - 60
    os.utime(root / "memory" / "2026-12-01.md", (minute_ago, minute_ago))
    assert reverie("init", str(root)).returncode == 0
    last, what = IdleMonitor(WorkspacePaths(root.resolve()), idle_minutes=10).last_activity()
    assert abs(last - minute_ago) < 1 and what == "memory/2026-12-01.md written"
