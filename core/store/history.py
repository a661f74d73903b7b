"""Undo history: a snapshot of a file's previous version before every change.

`.reverie/history/<path key>/<entry id>.snap` holds the bytes before the change and
`<entry id>.json` what changed (reason, hashes, whether it was undone). Undo
restores the newest not-yet-undone snapshot through the same compare-and-swap
write, which snapshots again, so an undo can itself be undone.
"""
from __future__ import annotations

import datetime as dt
import json
import os
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from core.errors import FormatError, NotFoundError
from core.store.atomic import atomic_write


@dataclass(frozen=True)
class HistoryEntry:
    id: str
    path: str            # workspace-relative
    time: str            # ISO 8601, UTC
    reason: str
    hash_before: str
    hash_after: str
    size_before: int
    undone_by: str = ""  # id of the entry that undid this one
    undoes: str = ""     # id of the entry this one undid


def _key(rel_path: str) -> str:
    return rel_path.replace("/", "__")


class History:
    def __init__(self, history_dir: Path):
        self.dir = history_dir

    def _folder(self, rel_path: str) -> Path:
        return self.dir / _key(rel_path)

    def record(self, rel_path: str, before: bytes, hash_before: str, hash_after: str, reason: str,
               undoes: str = "") -> HistoryEntry:
        folder = self._folder(rel_path)
        folder.mkdir(parents=True, exist_ok=True)
        now = dt.datetime.now(dt.timezone.utc)
        entry_id = f"{now.strftime('%Y%m%dT%H%M%S%fZ')}-{os.getpid()}-{hash_after[:8] or 'empty'}"
        entry = HistoryEntry(id=entry_id, path=rel_path, time=now.isoformat(timespec="seconds"),
                             reason=reason, hash_before=hash_before, hash_after=hash_after,
                             size_before=len(before), undoes=undoes)
        # Snapshot first, metadata second: an entry whose .json exists always has its bytes.
        atomic_write(folder / f"{entry_id}.snap", before)
        atomic_write(folder / f"{entry_id}.json", json.dumps(asdict(entry), ensure_ascii=False))
        return entry

    def entries(self, rel_path: str | None = None) -> list[HistoryEntry]:
        """Newest first. With no path, the history of every file."""
        folders = [self._folder(rel_path)] if rel_path else (sorted(self.dir.iterdir()) if self.dir.exists() else [])
        found = []
        for folder in folders:
            if not folder.is_dir():
                continue
            for meta in folder.glob("*.json"):
                try:
                    found.append(HistoryEntry(**json.loads(meta.read_text(encoding="utf-8"))))
                except (ValueError, TypeError) as exc:
                    raise FormatError(f"history entry {meta} is damaged ({exc}); move it aside") from exc
        return sorted(found, key=lambda e: e.id, reverse=True)

    def get(self, entry_id: str, rel_path: str | None = None) -> HistoryEntry:
        for entry in self.entries(rel_path):
            if entry.id == entry_id:
                return entry
        raise NotFoundError(f"no history entry {entry_id!r}")

    def snapshot(self, entry: HistoryEntry) -> bytes:
        path = self._folder(entry.path) / f"{entry.id}.snap"
        try:
            return path.read_bytes()
        except FileNotFoundError as exc:
            raise NotFoundError(f"the snapshot of history entry {entry.id} is missing") from exc

    def mark_undone(self, entry: HistoryEntry, by: str) -> None:
        updated = replace(entry, undone_by=by)
        atomic_write(self._folder(entry.path) / f"{entry.id}.json", json.dumps(asdict(updated), ensure_ascii=False))

    def latest_undoable(self, rel_path: str) -> HistoryEntry | None:
        """The newest change that is neither undone nor itself an undo."""
        for entry in self.entries(rel_path):
            if not entry.undone_by and not entry.undoes:
                return entry
        return None
