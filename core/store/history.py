"""Undo history: a snapshot of a file's previous version before every change.

`.reverie/history/<path key>/<entry id>.snap` holds the bytes before the change and
`<entry id>.json` what changed (reason, hashes, whether it was undone). Undo
restores the newest not-yet-undone snapshot through the same compare-and-swap
write, which snapshots again, so an undo can itself be undone.

Crash safety: the entry is written before the rename that makes the change, so a
change that landed always has its entry. A process killed between the two leaves
an entry for a change that never landed (a phantom): the next state of the file
(the next entry's "before", or the file as it is now) still has the entry's "before"
hash, not its "after". Phantoms are recognised that way and left out of the list
and of undo.

Pruning (`HistoryPolicy`, run every `PRUNE_EVERY` entries of a file): every entry
of the last `keep_all_days` days is kept; older ones up to `daily_until_days` keep
the newest entry of each day; older still, the newest of each ISO week. Then, while
a file's history is over `max_bytes`, its oldest entries go, but never the newest
`keep_latest`.
"""
from __future__ import annotations

import datetime as dt
import json
import os
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path

from core.errors import FormatError, NotFoundError
from core.store.atomic import atomic_write
from core.store.fileio import read_bytes

PRUNE_EVERY = 25                # entries of one file between two prunes


@dataclass(frozen=True)
class HistoryPolicy:
    keep_all_days: int = 7
    daily_until_days: int = 90
    max_bytes: int = 200 * 1024 * 1024   # per file
    keep_latest: int = 20


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


_FIELDS = {f.name for f in fields(HistoryEntry)}


def _key(rel_path: str) -> str:
    return rel_path.replace("/", "__")


class History:
    def __init__(self, history_dir: Path, root: Path | None = None, policy: HistoryPolicy | None = None):
        self.dir = history_dir
        self.root = root or history_dir.parent.parent     # <workspace>/.reverie/history
        self.policy = policy or HistoryPolicy()

    def _folder(self, rel_path: str) -> Path:
        return self.dir / _key(rel_path)

    def _write(self, path: Path, data: bytes | str) -> None:
        atomic_write(path, data, root=self.root)

    def record(self, rel_path: str, before: bytes, hash_before: str, hash_after: str, reason: str,
               undoes: str = "", now: dt.datetime | None = None) -> HistoryEntry:
        folder = self._folder(rel_path)
        now = now or dt.datetime.now(dt.timezone.utc)
        entry_id = f"{now.strftime('%Y%m%dT%H%M%S%fZ')}-{os.getpid()}-{hash_after[:8] or 'empty'}"
        entry = HistoryEntry(id=entry_id, path=rel_path, time=now.isoformat(timespec="seconds"),
                             reason=reason, hash_before=hash_before, hash_after=hash_after,
                             size_before=len(before), undoes=undoes)
        # Snapshot first, metadata second: an entry whose .json exists always has its bytes.
        self._write(folder / f"{entry_id}.snap", before)
        self._write(folder / f"{entry_id}.json", json.dumps(asdict(entry), ensure_ascii=False))
        if self._count(folder) % PRUNE_EVERY == 0:
            self.prune(rel_path, now=now)
        return entry

    @staticmethod
    def _count(folder: Path) -> int:
        try:
            return sum(1 for e in os.scandir(folder) if e.name.endswith(".json"))
        except OSError:
            return 0

    def _load(self, meta: Path) -> HistoryEntry:
        try:
            data = json.loads(read_bytes(self.root, meta).decode("utf-8"))
            return HistoryEntry(**{k: v for k, v in data.items() if k in _FIELDS})
        except (ValueError, RecursionError, TypeError) as exc:
            raise FormatError(f"history entry {meta} is damaged ({exc}); move it aside") from exc

    def entries(self, rel_path: str | None = None) -> list[HistoryEntry]:
        """Every recorded entry (phantoms included), newest first. With no path, of every file."""
        folders = [self._folder(rel_path)] if rel_path else (sorted(self.dir.iterdir()) if self.dir.exists() else [])
        found = []
        for folder in folders:
            if not folder.is_dir() or folder.is_symlink():
                continue
            for meta in folder.glob("*.json"):
                try:
                    found.append(self._load(meta))
                except FileNotFoundError:
                    continue          # pruned meanwhile
        return sorted(found, key=lambda e: e.id, reverse=True)

    def landed(self, rel_path: str, current_hash: str) -> list[HistoryEntry]:
        """The entries of changes that really happened (phantoms left out), newest first.

        `current_hash` is the hash of the file now ("" when it does not exist)."""
        out = []
        following = current_hash          # the state after the entry, as the next one saw it
        for entry in self.entries(rel_path):
            phantom = following == entry.hash_before != entry.hash_after
            if not phantom:
                out.append(entry)
                following = entry.hash_before
        return out

    def get(self, entry_id: str, rel_path: str | None = None) -> HistoryEntry:
        entries = self.entries(rel_path)
        for entry in entries:
            if entry.id == entry_id:
                return entry
        matches = [e for e in entries if e.id.startswith(entry_id)] if entry_id else []
        if len(matches) == 1:
            return matches[0]
        if matches:
            raise NotFoundError(f"history entry {entry_id!r} is ambiguous ({len(matches)} match); give more of its id")
        raise NotFoundError(f"no history entry {entry_id!r}" + (f" for {rel_path}" if rel_path else "") +
                            "; `reverie history` lists them")

    def snapshot(self, entry: HistoryEntry) -> bytes:
        path = self._folder(entry.path) / f"{entry.id}.snap"
        try:
            return read_bytes(self.root, path)
        except FileNotFoundError as exc:
            raise NotFoundError(f"the snapshot of history entry {entry.id} is missing") from exc

    def rewrite_snapshots(self, rel_path: str, rewrite) -> int:
        """Replace every snapshot of `rel_path` with `rewrite(text)` where that differs (Redact: a secret
        must not live on in the history). The entries' hashes stay those of the versions that were on
        disk, so which changes landed is still read the same way. Returns how many snapshots changed."""
        changed = 0
        for entry in self.entries(rel_path):
            try:
                data = self.snapshot(entry)
            except NotFoundError:
                continue
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                text = data.decode("utf-8", errors="replace")
            new = rewrite(text)
            if new != text:
                self._write(self._folder(entry.path) / f"{entry.id}.snap", new.encode("utf-8"))
                changed += 1
        return changed

    def mark_undone(self, entry: HistoryEntry, by: str) -> None:
        updated = replace(entry, undone_by=by)
        self._write(self._folder(entry.path) / f"{entry.id}.json", json.dumps(asdict(updated), ensure_ascii=False))

    def latest_undoable(self, rel_path: str, current_hash: str | None = None) -> HistoryEntry | None:
        """The newest landed change that is neither undone nor itself an undo.

        An undo that landed counts even when the process died before marking what it undid."""
        entries = self.entries(rel_path) if current_hash is None else self.landed(rel_path, current_hash)
        undone = {e.undoes for e in entries if e.undoes}
        for entry in entries:
            if not entry.undone_by and not entry.undoes and entry.id not in undone:
                return entry
        return None

    # ----- pruning ---------------------------------------------------------------------------
    def prune(self, rel_path: str | None = None, *, now: dt.datetime | None = None) -> int:
        """Apply the policy to one file's history (or every file's); returns the entries removed."""
        now = now or dt.datetime.now(dt.timezone.utc)
        paths = [rel_path] if rel_path else sorted({e.path for e in self.entries()})
        return sum(self._prune_one(rel, now) for rel in paths)

    def _prune_one(self, rel_path: str, now: dt.datetime) -> int:
        policy = self.policy
        entries = self.entries(rel_path)        # newest first
        keep: list[HistoryEntry] = []
        seen_buckets: set[str] = set()
        for number, entry in enumerate(entries):
            when = _entry_time(entry)
            age_days = (now - when).total_seconds() / 86400
            if number < policy.keep_latest or age_days < policy.keep_all_days:
                keep.append(entry)
                continue
            year, week, _ = when.isocalendar()
            bucket = when.date().isoformat() if age_days < policy.daily_until_days else f"{year}-W{week:02d}"
            if bucket not in seen_buckets:      # the newest entry of its day (or week)
                seen_buckets.add(bucket)
                keep.append(entry)
        size = sum(self._size(e) for e in keep)
        while size > policy.max_bytes and len(keep) > policy.keep_latest:
            size -= self._size(keep.pop())      # the oldest kept one
        kept_ids = {e.id for e in keep}
        removed = 0
        for entry in entries:
            if entry.id not in kept_ids:
                self._remove(entry)
                removed += 1
        return removed

    def _size(self, entry: HistoryEntry) -> int:
        try:
            return os.lstat(self._folder(entry.path) / f"{entry.id}.snap").st_size
        except OSError:
            return 0

    def _remove(self, entry: HistoryEntry) -> None:
        folder = self._folder(entry.path)
        for suffix in (".json", ".snap"):       # metadata first: no entry is ever left without its bytes
            try:
                os.unlink(folder / f"{entry.id}{suffix}")
            except FileNotFoundError:
                pass


def _entry_time(entry: HistoryEntry) -> dt.datetime:
    try:
        return dt.datetime.strptime(entry.id.split("-")[0], "%Y%m%dT%H%M%S%fZ").replace(tzinfo=dt.timezone.utc)
    except ValueError:
        return dt.datetime.fromisoformat(entry.time)
