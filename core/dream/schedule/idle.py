"""Is the agent idle? No agent turn and no workspace file written for `idle_minutes`.

Agent turns are seen three ways: an in-process agent (the app's chat panel, the
harness) calls `note_agent_turn()`; every entry point (MCP, `reverie agent`, the
harness, importers) records into the shared activity log (core/store/activity.py,
`record_agent_turn`); an outside agent is also seen through the files it writes
(daily logs, session logs, progress.md, MEMORY.md). Reverie's own private state
(`.reverie/`, the consolidation state, memory/superseded.md) does not count, and neither do the writes a
dream itself made (`ignore_own_write`) nor the person's own writes: `reverie log` and every change made
in the app call `record_person_writes`, which keeps each file's mtime after the person's write in the
shared activity log, so every process (the app, `reverie serve`, `reverie status`) tells that write from
a later one by an agent, which leaves another mtime.

A running dream passes `monitor.stop_check(started)` as its `should_stop`: at the
next stage boundary after any activity, it stops and writes nothing.
"""
from __future__ import annotations

import os
import stat
import threading
import time
from typing import Callable

from core.dream.state import parse_time
from core.store import activity as activity_log
from core.store.paths import WorkspacePaths
from core.store.private import read_activity

IGNORED_DIRS = {".reverie", ".git", "__pycache__"}
# Written only by Reverie: the watermark, and the old values an accepted dream update replaced.
IGNORED_FILES = {"memory/.consolidation_state", "memory/superseded.md"}
OUTSIDE_AGENT = "files"   # the activity log's name for writes seen on disk, not announced by an agent


def record_agent_turn(paths: WorkspacePaths, when: float | None = None, *, agent: str = "app",
                      kind: str = "turn", detail: str = "") -> None:
    """Tell every Reverie process that an agent just did something (the shared activity log)."""
    activity_log.record_activity(paths, agent, kind, detail, when)


def record_person_writes(paths: WorkspacePaths, rel_paths) -> dict[str, float]:
    """The person just wrote these workspace files (`reverie log`, a save or an accept in the app):
    not agent activity for any idle check, until the next write of the same file. Returns what was
    recorded ({path: mtime}); folders, missing files and Reverie's private files are left out."""
    written = {}
    for rel in dict.fromkeys(rel_paths):
        if not rel or rel.endswith("/") or rel in IGNORED_FILES or rel.split("/", 1)[0] in IGNORED_DIRS:
            continue
        try:
            status = os.stat(paths.root / rel)
        except OSError:
            continue
        if stat.S_ISREG(status.st_mode):
            written[rel] = status.st_mtime
    if written:
        activity_log.record_person_writes(paths, written)
    return written


def _counted_files(paths: WorkspacePaths):
    """(path, mtime) of every workspace file whose writes count as activity."""
    root = str(paths.root)
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in IGNORED_DIRS]
        rel_folder = os.path.relpath(folder, root)
        for name in files:
            if name.endswith(".tmp") and name.startswith("."):
                continue            # an atomic write's temp file: the rename that follows counts
            rel = name if rel_folder == "." else f"{rel_folder}/{name}".replace(os.sep, "/")
            if rel in IGNORED_FILES:
                continue
            try:
                yield rel, os.stat(os.path.join(folder, name)).st_mtime
            except FileNotFoundError:
                continue


def newest_write(paths: WorkspacePaths, ignore: dict[str, float] | None = None) -> tuple[float, str]:
    """(mtime, path) of the most recently written workspace file that counts as activity."""
    ignore = ignore or {}
    best, where = 0.0, ""
    for rel, mtime in _counted_files(paths):
        if ignore.get(rel) != mtime and mtime > best:
            best, where = mtime, rel
    return best, where


def written_since(paths: WorkspacePaths, since: float) -> list[str]:
    """The workspace files written at or after `since` (what a command that just ran wrote)."""
    return [rel for rel, mtime in _counted_files(paths) if mtime >= since]


class IdleMonitor:
    def __init__(self, paths: WorkspacePaths, idle_minutes: float = 10.0, clock: Callable[[], float] = time.time):
        self.paths = paths
        self.idle_seconds_needed = idle_minutes * 60.0
        self.clock = clock
        self._turn = 0.0
        self._own: dict[str, float] = {}
        self._lock = threading.Lock()

    def note_agent_turn(self, when: float | None = None) -> None:
        with self._lock:
            self._turn = max(self._turn, when if when is not None else self.clock())

    def ignore_own_write(self, rel_path: str) -> None:
        """A file Reverie itself just wrote (a dream's MEMORY.md) is not agent activity."""
        try:
            mtime = os.stat(self.paths.root / rel_path).st_mtime
        except FileNotFoundError:
            return
        with self._lock:
            self._own[rel_path] = mtime

    def _not_activity(self) -> dict[str, float]:
        """{path: mtime} of the writes that are not agent activity: this process's own (a dream's) and
        the person's (recorded by any process); when both name a file, its newer write is the one left."""
        with self._lock:
            own = dict(self._own)
        for rel, mtime in activity_log.person_writes(self.paths).items():
            own[rel] = max(mtime, own.get(rel, 0.0))
        return own

    def _recorded(self) -> tuple[float, str]:
        """The newest entry of the activity log (or of the single-time file older versions wrote)."""
        moment = parse_time(read_activity(self.paths))
        best = (moment.timestamp() if moment else 0.0, "agent turn")
        entry = activity_log.latest(self.paths)
        if entry is not None and entry.timestamp > best[0]:
            best = (entry.timestamp, f"{entry.agent}: {entry.kind}" + (f" {entry.detail}" if entry.detail else ""))
        return best

    def last_activity(self) -> tuple[float, str]:
        """(time, what) of the last activity: an agent's recorded call or turn, or a file write."""
        with self._lock:
            turn = self._turn
        written, where = newest_write(self.paths, self._not_activity())
        candidates = [(turn, "agent turn"), self._recorded(), (written, f"{where} written")]
        return max(candidates, key=lambda c: c[0])

    def record_outside_write(self) -> str:
        """Log the newest file write no agent recorded itself (an outside agent writing sessions/ or
        memory/) under the agent name "files"; returns its path, "" when there was none to log."""
        written, where = newest_write(self.paths, self._not_activity())
        if not written:
            return ""
        seen = activity_log.latest(self.paths)
        if seen is not None and seen.timestamp >= written - 0.001:   # the log keeps microseconds, mtimes more
            return ""
        activity_log.record_activity(self.paths, OUTSIDE_AGENT, "file", where, written)
        return where

    def idle_for(self, now: float | None = None) -> float:
        moment = self.clock() if now is None else now
        last, _what = self.last_activity()
        return max(0.0, moment - last) if last else float("inf")

    def is_idle(self, now: float | None = None) -> bool:
        return self.idle_for(now) >= self.idle_seconds_needed

    def activity_since(self, since: float) -> str:
        """What happened after `since`, or "" when nothing did."""
        last, what = self.last_activity()
        return f"the agent became active ({what})" if last > since else ""

    def stop_check(self, started: float | None = None) -> Callable[[], str]:
        """A `should_stop` for a dream: any activity after `started` stops it at a stage boundary."""
        since = self.clock() if started is None else started
        return lambda: self.activity_since(since)
