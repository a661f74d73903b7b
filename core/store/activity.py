"""The agent activity log: who used the workspace, when, and how (`.reverie/activity.jsonl`).

Every entry point records here: MCP calls (under the client's own name from its
`initialize`), `reverie agent` and the core harness, importers, the app's chat, and
writes that outside agents made to sessions/ and memory/ (seen by the scheduler).
The idle decision and the status displays read it, so an agent that only searches
and reads is as active as one that writes.

The person's own writes (`reverie log`, a save or an accept in the app) are logged
too, under the reserved name PERSON, and are not agent activity: they never enter
the per-agent summary, and `person_writes.json` keeps each file's mtime after the
person's newest write, so an idle check in any process can tell that write from a
later one by an agent (which leaves another mtime).

Two files, both private state: the append-only log (one JSON object a line, rotated
to `activity.1.jsonl` past ROTATE_BYTES so it never grows without end) and
`activity_last.json`, the newest record of each agent, so "last activity per agent"
costs one small read however long the log is. Both are written under one lock so
two processes recording at once both count.
"""
from __future__ import annotations

import datetime as dt
import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from core.store.atomic import append_durable, atomic_write, rename_in_folder
from core.store.fileio import read_text
from core.store.locks import locked
from core.store.paths import WorkspacePaths
from core.store.sessions import jsonl_line, read_jsonl

ROTATE_BYTES = 2_000_000
MAX_NAME_CHARS = 80
MAX_DETAIL_CHARS = 200
# What an activity was; readers group by them ("read" and "search" keep a workspace active as much as "write").
KINDS = ("search", "read", "write", "turn", "import", "session_end", "file")
PERSON = "person"        # the person at the keyboard: reserved, no agent is recorded under it


@dataclass(frozen=True)
class Activity:
    at: str          # ISO time, UTC
    agent: str       # "claude-code", "reverie agent", "harness", "files", ...
    kind: str        # one of KINDS
    detail: str = ""

    @property
    def timestamp(self) -> float:
        return dt.datetime.fromisoformat(self.at).timestamp()


def log_file(paths: WorkspacePaths) -> Path:
    return paths.private_dir / "activity.jsonl"


def _rotated(paths: WorkspacePaths) -> Path:
    return paths.private_dir / "activity.1.jsonl"


def _last_file(paths: WorkspacePaths) -> Path:
    return paths.private_dir / "activity_last.json"


def _person_file(paths: WorkspacePaths) -> Path:
    return paths.private_dir / "person_writes.json"


def _clean(text: str, limit: int) -> str:
    return " ".join(str(text or "").split())[:limit]


def _entry(agent: str, kind: str, detail: str, when: float | None) -> Activity:
    if kind not in KINDS:
        raise ValueError(f"unknown activity kind {kind!r}")
    moment = dt.datetime.fromtimestamp(time.time() if when is None else when, dt.timezone.utc)
    return Activity(moment.isoformat(), _clean(agent, MAX_NAME_CHARS) or "unknown", kind,
                    _clean(detail, MAX_DETAIL_CHARS))


def _append(paths: WorkspacePaths, entries: list[Activity]) -> None:
    """Append records to the log (rotating it first when it is full); the caller holds the lock."""
    path = log_file(paths)
    try:
        if path.stat().st_size > ROTATE_BYTES:
            rename_in_folder(paths.root, path, _rotated(paths).name)
    except FileNotFoundError:
        pass
    append_durable(path, "".join(jsonl_line(asdict(entry)) for entry in entries), root=paths.root)


def _lock(paths: WorkspacePaths):
    return locked(paths.locks_dir / "activity.lock")


def record_activity(paths: WorkspacePaths, agent: str, kind: str, detail: str = "",
                    when: float | None = None) -> Activity:
    """Append one record and make it the agent's newest; returns what was written."""
    entry = _entry(agent, kind, detail, when)
    if entry.agent == PERSON:      # an agent calling itself "person" must not pass for the person
        entry = Activity(entry.at, f"{PERSON} (agent)", entry.kind, entry.detail)
    with _lock(paths):
        _append(paths, [entry])
        last = _read_last(paths)
        previous = last.get(entry.agent)
        if previous is None or previous.timestamp <= entry.timestamp:
            last[entry.agent] = entry
            atomic_write(_last_file(paths), json.dumps({k: asdict(v) for k, v in last.items()},
                                                       ensure_ascii=False, indent=1) + "\n", root=paths.root)
    return entry


def record_person_writes(paths: WorkspacePaths, written: dict[str, float]) -> list[Activity]:
    """The person wrote these workspace files, which now have these mtimes: logged under PERSON (each
    record's time is the file's mtime), and kept as each file's person-written mtime. Files whose
    mtime has moved on since their record are dropped from it (a later write replaced the person's)."""
    entries = [_entry(PERSON, "write", rel, mtime) for rel, mtime in written.items()]
    if not entries:
        return []
    with _lock(paths):
        _append(paths, entries)
        kept = {}
        for rel, mtime in {**person_writes(paths), **written}.items():
            try:
                if os.stat(paths.root / rel).st_mtime == mtime:
                    kept[rel] = mtime
            except OSError:
                continue
        atomic_write(_person_file(paths), json.dumps(kept, ensure_ascii=False, indent=1) + "\n", root=paths.root)
    return entries


def _read_dict(paths: WorkspacePaths, path: Path) -> dict:
    """A private JSON object; a missing or damaged file reads as empty (the next write repairs it)."""
    try:
        data = json.loads(read_text(paths.root, path))
    except (OSError, ValueError, UnicodeDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def person_writes(paths: WorkspacePaths) -> dict[str, float]:
    """{workspace-relative path: its mtime right after the person's newest write of it}."""
    return {str(rel): float(mtime) for rel, mtime in _read_dict(paths, _person_file(paths)).items()
            if isinstance(mtime, (int, float))}


def _from_dict(data) -> Activity | None:
    if not isinstance(data, dict):
        return None
    try:
        entry = Activity(str(data["at"]), str(data["agent"]), str(data["kind"]), str(data.get("detail", "")))
        entry.timestamp    # a damaged time makes the record unreadable, not the reader
    except (KeyError, ValueError, TypeError):
        return None
    return entry


def _read_last(paths: WorkspacePaths) -> dict[str, Activity]:
    return {name: entry for name, value in _read_dict(paths, _last_file(paths)).items()
            if (entry := _from_dict(value)) is not None}


def last_by_agent(paths: WorkspacePaths) -> dict[str, Activity]:
    """The newest record of each agent, newest agent first."""
    last = _read_last(paths)
    return dict(sorted(last.items(), key=lambda item: item[1].timestamp, reverse=True))


def latest(paths: WorkspacePaths, *, exclude: tuple[str, ...] = ()) -> Activity | None:
    """The newest record of any agent (but those in `exclude`), None when nothing was recorded."""
    for name, entry in last_by_agent(paths).items():
        if name not in exclude:
            return entry
    return None


def read_since(paths: WorkspacePaths, since: float) -> list[Activity]:
    """Every record at or after `since` (seconds since the epoch), oldest first."""
    found = []
    for path in (_rotated(paths), log_file(paths)):
        for obj in read_jsonl(path, paths.root).objects:
            entry = _from_dict(obj)
            if entry is not None and entry.timestamp >= since:
                found.append(entry)
    return sorted(found, key=lambda e: e.timestamp)
