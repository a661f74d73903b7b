"""One confinement rule at every level: `.reverie/` is the workspace's own, hard links are refused for
writes, and a folder swapped for a link in the middle of writes gets nothing.

The red team found writes outside through a symlinked `.reverie/index.db`, `.reverie/`, `.reverie/locks/`
and `.reverie/config.toml`, hard-linked daily, session and activity logs, and a race: `memory/` swapped
for a link during 1,000 `memory_append` calls put 58 lines outside (O_NOFOLLOW guarded only the last
name). Each case here runs the real code on a real workspace and compares every byte outside. The
race is played deterministically: the swap happens at every step of an append in turn (SwapAtSteps),
not wherever a thread switch falls, so a loaded machine cannot make it swap too rarely to prove anything.
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


# The os functions that look a path up: the only moments a writer can observe which folder `memory/` is.
PATH_LOOKUPS = ("lstat", "stat", "open", "mkdir", "readlink", "listdir", "scandir", "rename", "replace", "unlink",
                "rmdir", "utime", "chmod", "link", "symlink", "access")
# (length, gap) of the swap window, round after round of start steps.
WINDOWS = ((1, 0), (3, 1), (6, 0), (2, 1))


class SwapAtSteps:
    """Swaps `memory/` for a link out at chosen steps of a write, deterministically.

    Every path lookup the writing thread makes is one step. For one write, memory/ is moved away at
    step `start`, the link put in its place `gap` steps later (0 or 1: the moment no memory/ exists,
    in which a write may make a new one), taken away again at step `start + length`, and the real
    folder put back `gap` steps later; what the write did not reach is put back after it. Across the
    writes, `start` runs over every step of a write: each gap between two lookups sees the link, not
    only the ones a thread switch happened to hit.
    """

    def __init__(self, root: Path, link: Path, monkeypatch):
        self.memory, self.real, self.link, self.root = root / "memory", root / "memory.real", link, root
        self.writer = threading.get_ident()
        self.plan: dict[int, list] = {}
        self.step, self.start, self.writing = 0, 0, False
        self.placed: set[int] = set()     # the start steps at which a write met the link
        self.state = "real"
        self.rename = os.rename           # the moves' own; never counted
        for name in PATH_LOOKUPS:
            if hasattr(os, name):
                monkeypatch.setattr(os, name, self._counted(getattr(os, name)))

    def _counted(self, original):
        def lookup(*args, **kwargs):
            if self.writing and threading.get_ident() == self.writer:
                self.step += 1
                self.writing = False          # the moves' own lookups are not steps of the write
                try:
                    for move in self.plan.pop(self.step, []):
                        move(during=True)
                finally:
                    self.writing = True
            return original(*args, **kwargs)
        return lookup

    def run(self, write, start: int = 0, length: int = 0, gap: int = 0) -> int:
        """Run `write()` with the swap planned (start 0: none); the number of steps it took."""
        self.plan = {}
        if start:
            for at, move in ((start, self._away), (start + gap, self._link_in), (start + length, self._link_out),
                             (start + length + gap, self._back)):
                self.plan.setdefault(at, []).append(move)
        self.step, self.start, self.writing = 0, start, True
        try:
            write()
        finally:
            self.writing = False
            for at in sorted(self.plan):      # put back what the write did not reach
                for move in self.plan[at]:
                    move(during=False)
        return self.step

    def _away(self, during: bool) -> None:
        self.rename(self.memory, self.real)
        self.state = "away"

    def _link_in(self, during: bool) -> None:
        if self.state == "away" and not os.path.lexists(self.memory):     # no new memory/ made in the gap
            self.rename(self.link, self.memory)
            self.state = "link"
            if during:
                self.placed.add(self.start)

    def _link_out(self, during: bool) -> None:
        if self.state == "link":
            self.rename(self.memory, self.link)
            self.state = "away"

    def _back(self, during: bool) -> None:
        if self.state == "away":
            if os.path.lexists(self.memory):      # made by a write in the gap: it stays, inside, under another name
                self.rename(self.memory, self.root / f"memory.made-in-gap-{len(list(self.root.glob('memory.*')))}")
            self.rename(self.real, self.memory)
            self.state = "real"


def test_a_memory_folder_swapped_for_a_link_during_1000_appends_writes_nothing_outside(workspace, tmp_path,
                                                                                       monkeypatch):
    outside = tmp_path / "outside-memory"
    outside.mkdir()
    root = workspace.root
    link = root / "memory.link"
    link.symlink_to(outside, target_is_directory=True)
    tools = MemoryTools(workspace)
    swaps = SwapAtSteps(root, link, monkeypatch)
    # The steps of an append with nothing swapped (the first ones also import what they use).
    steps = min(swaps.run(lambda: tools.memory_append(f"fact {n} written with nothing swapped")) for n in range(3))
    assert steps > 5
    succeeded, failed = [], 0
    for number in range(1000):
        text = f"race fact {number:04d}"
        length, gap = WINDOWS[(number // steps) % len(WINDOWS)]
        try:
            swaps.run(lambda: tools.memory_append(text), start=1 + number % steps, length=length, gap=gap)
            succeeded.append(text)
        except (CoreError, OSError):         # refused, or its folder was away: an error reply over MCP
            failed += 1
    monkeypatch.undo()
    outside_lines = [line for path in outside.rglob("*") if path.is_file()
                     for line in path.read_text(encoding="utf-8").splitlines()]
    assert outside_lines == []                      # 0 lines outside (the red team found 58)
    inside = "".join(path.read_text(encoding="utf-8") for path in root.rglob("*.md")
                     if not any(p.is_symlink() for p in [path, *path.parents]))
    assert all(f"] {text}" in inside for text in succeeded)     # every reported success is in the workspace
    # A write met the link from every step of an append on; some were refused and some wrote.
    assert swaps.placed == set(range(1, min(steps, 1000) + 1))
    assert len(succeeded) + failed == 1000 and succeeded and failed, (len(succeeded), failed)
