"""Whole-file edits of workspace text (MEMORY.md, a daily log, progress.md).

Every replace goes through compare-and-swap on the hash the writer read, and a
history snapshot of the previous version is taken first, so every change can be
undone. When the file changed only by an append since the writer read it (an
agent appended a line while the person was editing), the append is merged onto
the writer's text instead of failing: nothing anyone wrote is lost.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

from core.errors import ConflictError, NotFoundError
from core.store.atomic import cas_replace, read_bytes_and_hash
from core.store.hashing import sha256_bytes
from core.store.history import History, HistoryEntry
from core.store.paths import WorkspacePaths, confine
from core.store.textio import decode_lossy, escape_controls


@dataclass(frozen=True)
class Snapshot:
    """A file as one reader saw it: text and the hash to hand back for the write."""

    path: str
    text: str
    hash: str
    replaced_bytes: int = 0   # undecodable bytes shown as U+FFFD


@dataclass(frozen=True)
class WriteResult:
    path: str
    hash: str
    entry: HistoryEntry | None
    merged_append: str = ""   # text an outside writer appended meanwhile, kept (before lines we added at the end)


def with_append(base: str, mine: str, appended: str) -> str:
    """`mine` (the writer's edit of `base`) with `appended` (what another writer added to the end of
    `base` meanwhile) in its place: right after the end of `base`, before the lines the writer added
    at the end, so an append-only log keeps its order (the shell's line, then the person's).
    Edits elsewhere keep their place; with no lines added at the end, the append goes last."""
    old = base.rstrip("\n").split("\n") if base.strip("\n") else []
    new = mine.rstrip("\n").split("\n") if mine.strip("\n") else []
    added = appended.strip("\n").split("\n") if appended.strip("\n") else []
    cut = len(new)
    opcodes = difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes()
    if opcodes and opcodes[-1][0] == "insert" and opcodes[-1][1] == len(old):
        cut = opcodes[-1][3]              # the writer's own lines after the end of what it read
    elif not old:
        cut = 0
    lines = new[:cut] + added + new[cut:]
    ends = mine.endswith("\n") or appended.endswith("\n") or not mine
    return "\n".join(lines) + ("\n" if ends and lines else "")


class DocumentStore:
    def __init__(self, paths: WorkspacePaths, history: History):
        self.paths = paths
        self.history = history

    def _resolve(self, rel_path: str) -> tuple[Path, str]:
        path = confine(self.paths.root, rel_path)
        return path, self.paths.relative(path)

    def _lock(self, rel: str) -> Path:
        return self.paths.locks_dir / (rel.replace("/", "__") + ".lock")

    def read(self, rel_path: str) -> Snapshot:
        path, rel = self._resolve(rel_path)
        data, digest = read_bytes_and_hash(path, root=self.paths.root)
        decoded = decode_lossy(data)
        return Snapshot(path=rel, text=decoded.text, hash=digest, replaced_bytes=decoded.replaced)

    def write(self, rel_path: str, text: str | bytes, expected_hash: str, *, reason: str,
              base_text: str | None = None, undoes: str = "") -> WriteResult:
        """Replace the file with `text` if it still has `expected_hash`.

        Text has its control characters escaped (a NUL or an ESC never lands in a file a terminal
        shows); bytes (a version from history) are written exactly. With `base_text` (the text the
        writer started from), a file that has only grown by an append since then is merged: the
        appended part goes where it was written, after `base_text`'s end and before the lines the
        writer added at the end (`with_append`). Otherwise ConflictError.
        """
        path, rel = self._resolve(rel_path)
        if isinstance(text, bytes):
            new_data, text = text, text.decode("utf-8", errors="replace")
        else:
            text = escape_controls(text)
            new_data = text.encode("utf-8")
        merged = ""
        for _attempt in range(3):
            entry_box: list[HistoryEntry] = []

            def snapshot(old: bytes, _rel=rel, _new=new_data) -> None:
                entry_box.append(self.history.record(_rel, old, sha256_bytes(old) if old or path.exists() else "",
                                                     sha256_bytes(_new), reason, undoes=undoes))
            try:
                _old, written = cas_replace(path, new_data, expected_hash, self._lock(rel), before_replace=snapshot,
                                            root=self.paths.root)
            except ConflictError:
                if base_text is None:
                    raise
                current = self.read(rel)
                if not current.text.startswith(base_text) or current.text == base_text:
                    raise
                appended = current.text[len(base_text):]
                merged = appended
                new_data = with_append(base_text, text, appended).encode("utf-8")
                expected_hash = current.hash
                base_text = None  # one merge; a second race is a real conflict
                continue
            return WriteResult(path=rel, hash=sha256_bytes(written), entry=entry_box[0] if entry_box else None,
                               merged_append=merged)
        raise ConflictError(f"{rel} keeps changing on disk; try again")

    def undo(self, rel_path: str) -> WriteResult:
        """Restore the version before the newest change that has not been undone."""
        _path, rel = self._resolve(rel_path)
        current = self.read(rel)
        entry = self.history.latest_undoable(rel, current.hash)
        if entry is None:
            raise NotFoundError(f"nothing to undo for {rel}")
        if current.hash != entry.hash_after:
            raise ConflictError(f"{rel} changed after the change being undone ({entry.reason}); "
                                f"restore a version from its history instead (`reverie history` lists them, "
                                f"`reverie restore` puts one back)",
                                expected_hash=entry.hash_after, actual_hash=current.hash)
        before = self.history.snapshot(entry)
        result = self.write(rel, before, current.hash, reason=f"undo: {entry.reason}", undoes=entry.id)
        self.history.mark_undone(entry, by=result.entry.id if result.entry else "")
        return result

    def restore(self, rel_path: str, entry_id: str, expected_hash: str) -> WriteResult:
        """Put back the version saved in history entry `entry_id` (itself undoable)."""
        _path, rel = self._resolve(rel_path)
        entry = self.history.get(entry_id, rel)
        before = self.history.snapshot(entry)
        return self.write(rel, before, expected_hash, reason=f"restore version from {entry.time} ({entry.id})")

    def landed_history(self, rel_path: str) -> list[HistoryEntry]:
        """The changes of one file that really landed, newest first."""
        _path, rel = self._resolve(rel_path)
        return self.history.landed(rel, self.read(rel).hash)
