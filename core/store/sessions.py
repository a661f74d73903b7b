"""Session logs `sessions/<id>.log.jsonl` (append-only) and the session cache.

Session logs come from agents and importers and may be damaged: a malformed
line is skipped and reported with its line number, never fatal. The cache
`sessions/cache.jsonl` keeps the summaries of the last N sessions (short-term
memory for the context builder and the dream).
"""
from __future__ import annotations

import datetime as dt
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from core.store.atomic import append_counted, atomic_write, fsync_dir
from core.store.fileio import confined_glob, read_bytes
from core.store.jsonsafe import parse_json_line
from core.store.locks import locked
from core.store.paths import WorkspacePaths
from core.store.textio import decode_lossy


@dataclass(frozen=True)
class LineProblem:
    line: int
    message: str


@dataclass
class JsonlRead:
    records: list[tuple[int, dict[str, Any]]] = field(default_factory=list)   # (1-based line, object)
    problems: list[LineProblem] = field(default_factory=list)

    @property
    def objects(self) -> list[dict[str, Any]]:
        return [obj for _line, obj in self.records]


def read_jsonl(path: Path, root: Path | None = None) -> JsonlRead:
    """Every JSON object in the file; anything else is reported by line number and skipped.

    With `root` (a workspace file) the file is read only if it really lies inside it; without,
    it is a file from elsewhere (a transcript being imported)."""
    result = JsonlRead()
    try:
        data = read_bytes(root, path) if root is not None else path.read_bytes()
    except FileNotFoundError:
        return result
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]          # a UTF-8 byte-order mark (Windows editors write one): not part of line 1
    decoded = decode_lossy(data)
    if not decoded.clean:
        result.problems.append(LineProblem(0, f"{decoded.replaced} byte(s) are not UTF-8; shown as \ufffd"))
    for number, raw in enumerate(decoded.text.split("\n"), start=1):
        if not raw.strip():
            continue
        value, why = parse_json_line(raw)
        if why:
            result.problems.append(LineProblem(number, why))
            continue
        if not isinstance(value, dict):
            result.problems.append(LineProblem(number, f"expected a JSON object, found {type(value).__name__}"))
            continue
        result.records.append((number, value))
    return result


def jsonl_line(obj: dict[str, Any]) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n"


def append_jsonl(path: Path, objects: Iterable[dict[str, Any]], *, root: Path | None = None) -> int:
    """Append objects as one durable write. Returns the 1-based line number of the first one."""
    text = "".join(jsonl_line(obj) for obj in objects)
    if not text:
        return 0
    return append_counted(path, text, root=root)[1] + 1


@dataclass(frozen=True)
class SessionInfo:
    id: str
    path: Path
    size: int
    modified: dt.datetime


def list_sessions(paths: WorkspacePaths) -> list[SessionInfo]:
    """Session logs, newest first."""
    found = []
    if paths.sessions_dir.is_dir():
        for path in confined_glob(paths.root, paths.sessions_dir, "*.log.jsonl"):
            stat = path.stat()
            found.append(SessionInfo(id=path.name[: -len(".log.jsonl")], path=path, size=stat.st_size,
                                     modified=dt.datetime.fromtimestamp(stat.st_mtime)))
    return sorted(found, key=lambda s: s.modified, reverse=True)


class SessionCache:
    """The last `size` session summaries, oldest first."""

    def __init__(self, paths: WorkspacePaths, size: int = 10):
        self.paths = paths
        self.size = size

    def read(self) -> JsonlRead:
        return read_jsonl(self.paths.session_cache, self.paths.root)

    def add(self, session_id: str, summary: str, **extra: Any) -> dict[str, Any]:
        entry = {"session_id": session_id, "ended": dt.datetime.now().astimezone().isoformat(timespec="seconds"),
                 "summary": summary, **extra}
        with locked(self.paths.locks_dir / "session_cache.lock"):
            kept = [obj for obj in self.read().objects if obj.get("session_id") != session_id]
            kept = (kept + [entry])[-self.size:]
            atomic_write(self.paths.session_cache, "".join(jsonl_line(obj) for obj in kept), root=self.paths.root)
        return entry


def prune_session_log(paths: WorkspacePaths, session_id: str) -> str:
    """Delete a session log past its retention; returns its relative path ("" when it was already gone)."""
    path = paths.session_log(session_id)
    try:
        os.unlink(path)
    except FileNotFoundError:
        return ""
    fsync_dir(path.parent)
    return paths.relative(path)
