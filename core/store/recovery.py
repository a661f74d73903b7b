"""Recovery copies of unsaved edits, under `.reverie/recovery/`, so a crash loses nothing.

An editor with unsaved changes saves its buffer here a moment after each edit (on
a background task; the write is the store's atomic write). A clean save, a reload
or a discard removes the copy. When a file is opened and a copy of it is there,
the editor offers to bring the unsaved text back.
"""
from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from pathlib import Path

from core.store.atomic import atomic_write
from core.store.fileio import read_text
from core.store.paths import WorkspacePaths


@dataclass(frozen=True)
class RecoveryCopy:
    path: str          # workspace-relative path of the edited file
    text: str          # the unsaved buffer
    base_hash: str     # the hash of the file the edits started from
    saved_at: str


class RecoveryStore:
    def __init__(self, paths: WorkspacePaths):
        self.dir = paths.recovery_dir
        self.root = paths.root

    def _file(self, rel_path: str) -> Path:
        return self.dir / (rel_path.replace("/", "__") + ".json")

    def save(self, rel_path: str, text: str, base_hash: str) -> None:
        record = {"path": rel_path, "text": text, "base_hash": base_hash,
                  "saved_at": dt.datetime.now().astimezone().isoformat(timespec="seconds")}
        self.dir.mkdir(parents=True, exist_ok=True)
        atomic_write(self._file(rel_path), json.dumps(record, ensure_ascii=False), root=self.root)

    def load(self, rel_path: str) -> RecoveryCopy | None:
        try:
            data = json.loads(read_text(self.root, self._file(rel_path)))
            return RecoveryCopy(str(data["path"]), str(data["text"]), str(data.get("base_hash", "")),
                                str(data.get("saved_at", "")))
        except (FileNotFoundError, ValueError, RecursionError, KeyError, TypeError, UnicodeDecodeError):
            return None   # no copy, or a damaged one: nothing to offer

    def discard(self, rel_path: str) -> None:
        try:
            self._file(rel_path).unlink()
        except FileNotFoundError:
            pass

    def all(self) -> list[RecoveryCopy]:
        found = []
        if self.dir.is_dir():
            for path in sorted(self.dir.glob("*.json")):
                try:
                    rel = str(json.loads(read_text(self.root, path))["path"])
                except (ValueError, RecursionError, KeyError, TypeError, UnicodeDecodeError):
                    continue
                copy = self.load(rel)
                if copy is not None:
                    found.append(copy)
        return found
