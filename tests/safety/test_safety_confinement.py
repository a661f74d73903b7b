"""One confinement rule at every level: `.reverie/` is the workspace's own, hard links are refused for
writes, and a folder swapped for a link in the middle of writes gets nothing.

The red team found writes outside through a symlinked `.reverie/index.db`, `.reverie/`, `.reverie/locks/`
and `.reverie/config.toml`, hard-linked daily, session and activity logs, and a race: `memory/` swapped
for a link during 1,000 `memory_append` calls put 58 lines outside (O_NOFOLLOW guarded only the last
name). Each case here runs the real code on a real workspace and compares every byte outside.
"""
from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from core.errors import CoreError, PathEscapeError
from core.mcp.tools import MemoryTools
from core.store.activity import log_file, record_activity
from core.store.hashing import sha256_bytes
from core.workspace import Workspace
from tests.support.hostile import make_outside, outside_state
from tests.support.processes import ROOT, python_env

COMMANDS = (["log", "{ws}", "a", "fact"], ["index", "{ws}", "--no-embed"],
            ["search", "{ws}", "fact", "--mode", "keyword"], ["status", "{ws}"], ["secrets", "{ws}"])


def _run(ws: Path, command: list[str]) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "core", *[part.format(ws=ws) for part in command]],
                          capture_output=True, text=True, cwd=ROOT, env=python_env(), timeout=300)
    assert done.returncode in (0, 1, 2) and "Traceback" not in done.stderr, (command, done.stderr)
    if done.returncode == 2:
        assert len(done.stderr.strip().splitlines()) == 1, (command, done.stderr)
    return done


def _plant_private(ws: Path, outside: Path, which: str) -> None:
    private = ws / ".reverie"
    if which == "folder":
        (outside / "private").mkdir()
        for child in sorted(private.rglob("*"), reverse=True):
            child.rmdir() if child.is_dir() and not child.is_symlink() else child.unlink()
        private.rmdir()
        private.symlink_to(outside / "private", target_is_directory=True)
    elif which == "locks":
        (outside / "locks").mkdir()
        for child in (private / "locks").iterdir():
            child.unlink()
        (private / "locks").rmdir()
        (private / "locks").symlink_to(outside / "locks", target_is_directory=True)
    elif which == "index.db":
        (outside / "other.db").write_bytes(b"")
        for name in os.listdir(private):
            if name.startswith("index.db"):
                os.unlink(private / name)
        (private / "index.db").symlink_to(outside / "other.db")
    elif which == "config.toml":
        (outside / "config.toml").write_text('[search]\ndefault_mode = "keyword"\n', encoding="utf-8")
        (private / "config.toml").unlink(missing_ok=True)
        (private / "config.toml").symlink_to(outside / "config.toml")


@pytest.mark.parametrize("which", ["folder", "locks", "index.db", "config.toml"])
def test_links_in_reverie_state_reach_nothing_outside(tmp_path, which):
    with Workspace.create(tmp_path / "ws") as ws:
        ws.append_daily("the first fact")
        ws.sync_index()
    root = tmp_path / "ws"
    outside = make_outside(tmp_path)
    _plant_private(root, outside, which)
    before = outside_state(outside)
    runs = [_run(root, command) for command in COMMANDS]
    assert outside_state(outside) == before, which          # no byte, no file, no mtime changed outside
    refused = [done for done in runs if done.returncode == 2]
    assert refused and all("link" in done.stderr or "outside" in done.stderr for done in refused), \
        [done.stderr for done in runs]


def _hard_link(target: Path, outside_file: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    target.unlink(missing_ok=True)
    os.link(outside_file, target)


def test_hard_linked_logs_are_never_written(workspace, tmp_path):
    outside = make_outside(tmp_path)
    today = workspace.paths.daily_log(dt.date.today())
    _hard_link(today, outside / "bashrc")
    _hard_link(workspace.paths.session_log("s1"), outside / "session.jsonl")
    _hard_link(log_file(workspace.paths), outside / "old-log.md")
    before = outside_state(outside)
    with pytest.raises(PathEscapeError, match="hard links"):
        workspace.append_daily("an appended fact")
    with pytest.raises(PathEscapeError, match="hard links"):
        record_activity(workspace.paths, "probe", "read", "x")
    from core.importers import import_chat_log
    transcript = tmp_path / "s1.jsonl"
    transcript.write_text(json.dumps({"role": "user", "content": "hello there, friend"}) + "\n", encoding="utf-8")
    with pytest.raises(CoreError, match="hard links"):
        import_chat_log(workspace, transcript)
    with pytest.raises(PathEscapeError, match="hard links"):
        workspace.write_document(workspace.relative(today), "# replaced\n", sha256_bytes(today.read_bytes()))
    assert outside_state(outside) == before
    done = _run(workspace.root, ["log", "{ws}", "one", "more"])
    assert done.returncode == 2 and "hard links" in done.stderr
    assert outside_state(outside) == before


def test_a_memory_folder_swapped_for_a_link_during_1000_appends_writes_nothing_outside(workspace, tmp_path):
    outside = tmp_path / "outside-memory"
    outside.mkdir()
    root = workspace.root
    link = root / "memory.link"
    link.symlink_to(outside, target_is_directory=True)
    tools = MemoryTools(workspace)
    stop = threading.Event()
    swaps = [0]

    def swapper():
        memory, real = root / "memory", root / "memory.real"
        while not stop.is_set():
            try:
                os.rename(memory, real)
                os.rename(link, memory)          # memory/ is now a link out ...
                os.rename(memory, link)
                os.rename(real, memory)          # ... and real again
                swaps[0] += 1
            except OSError:
                pass                             # an append made memory/ again in the gap: go on
    thread = threading.Thread(target=swapper)
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)          # threads take turns between any two steps of a write, as processes do
    thread.start()
    succeeded, failed = [], 0
    try:
        for number in range(1000):
            text = f"race fact {number:04d}"
            try:
                tools.memory_append(text)
                succeeded.append(text)
            except (CoreError, OSError):         # refused, or its folder was away: an error reply over MCP
                failed += 1
    finally:
        stop.set()
        thread.join()
        sys.setswitchinterval(switch)
    outside_lines = [line for path in outside.rglob("*") if path.is_file()
                     for line in path.read_text(encoding="utf-8").splitlines()]
    assert outside_lines == []                      # 0 lines outside (the red team found 58)
    inside = "".join(path.read_text(encoding="utf-8") for path in root.rglob("*.md")
                     if not any(p.is_symlink() for p in [path, *path.parents]))
    assert all(f"] {text}" in inside for text in succeeded)     # every reported success is in the workspace
    assert swaps[0] > 10 and len(succeeded) + failed == 1000 and succeeded, (swaps[0], failed)
