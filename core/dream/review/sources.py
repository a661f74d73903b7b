"""Resolving provenance refs to the lines and messages they name.

`memory/2026-11-30.md#L12-L14` resolves when the file exists (in memory/, or in
memory/archive/ after retention moved it) and has those lines;
`session:<id>#<n>` when sessions/<id>.log.jsonl has a message on line n (messages
are numbered by their 1-based line in the log); `session:<id>` when that session has
a log or a summary in the session cache. Files are read once per resolver.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from core.errors import PathEscapeError
from core.store.memory_md import Source
from core.store.paths import WorkspacePaths, confine
from core.store.sessions import read_jsonl
from core.store.textio import decode_lossy


@dataclass(frozen=True)
class Resolved:
    ref: str
    ok: bool
    path: str = ""                               # workspace-relative file it was found in
    lines: tuple[tuple[int, str], ...] = ()      # (line number, text) of a daily-log range
    messages: tuple[tuple[int, str, str], ...] = ()   # (message number, role, content) of a session
    note: str = ""                               # why not, or "moved to the archive"


@dataclass
class SourceResolver:
    paths: WorkspacePaths
    _files: dict[str, list[str] | None] = field(default_factory=dict)
    _cache_ids: set[str] | None = None
    _cache_summaries: dict[str, str] = field(default_factory=dict)

    def _lines(self, rel: str) -> list[str] | None:
        if rel not in self._files:
            try:
                path = confine(self.paths.root, rel)
                text = decode_lossy(path.read_bytes()).text
                lines = text.split("\n")
                if lines and lines[-1] == "":
                    lines.pop()
                self._files[rel] = lines
            except (FileNotFoundError, IsADirectoryError, PathEscapeError, PermissionError):
                self._files[rel] = None
        return self._files[rel]

    def _session_cache(self) -> set[str]:
        if self._cache_ids is None:
            self._cache_ids = set()
            for _line, entry in read_jsonl(self.paths.session_cache, self.paths.root).records:
                sid = str(entry.get("session_id") or "")
                if sid:
                    self._cache_ids.add(sid)
                    self._cache_summaries[sid] = str(entry.get("summary") or "")
        return self._cache_ids

    def resolve(self, ref: str) -> Resolved:
        source = Source(ref)
        if source.is_session:
            return self._session(source)
        rel = source.path
        found = rel
        lines = self._lines(rel)
        if lines is None and rel.startswith("memory/") and "/" not in rel[len("memory/"):]:
            found = "memory/archive/" + rel[len("memory/"):]
            lines = self._lines(found)
        if lines is None:
            return Resolved(ref, False, note=f"{rel} does not exist")
        span = source.lines
        if span is None:
            return Resolved(ref, True, path=found, note="" if found == rel else "moved to the archive")
        start, end = span
        if start < 1 or end < start or end > len(lines):
            return Resolved(ref, False, path=found, note=f"{found} has {len(lines)} lines, not {start}-{end}")
        picked = tuple((n, lines[n - 1]) for n in range(start, end + 1))
        if not any(text.strip() for _n, text in picked):
            return Resolved(ref, False, path=found, lines=picked, note="those lines are empty")
        return Resolved(ref, True, path=found, lines=picked, note="" if found == rel else "moved to the archive")

    def _session(self, source: Source) -> Resolved:
        ref = source.ref
        sid = ref[len("session:"):].split("#", 1)[0]
        try:
            log = self.paths.session_log(sid)
        except PathEscapeError:
            return Resolved(ref, False, note=f"{sid!r} is not a valid session id")
        rel = self.paths.relative(log)
        span = source.lines
        if span is None:
            if log.exists():
                return Resolved(ref, True, path=rel)
            if sid in self._session_cache():
                summary = self._cache_summaries.get(sid, "")
                return Resolved(ref, True, path=self.paths.relative(self.paths.session_cache),
                                messages=((0, "summary", summary),), note="session summary (log not kept)")
            return Resolved(ref, False, note=f"session {sid} has no log and no cached summary")
        if not log.exists():
            return Resolved(ref, False, note=f"session log {rel} does not exist (pruned?)")
        number = span[0]
        for line, message in read_jsonl(log, self.paths.root).records:
            if line == number:
                content = message.get("content")
                if not isinstance(content, str):
                    content = str(content or "")
                return Resolved(ref, True, path=rel, messages=((line, str(message.get("role") or "?"), content),))
        return Resolved(ref, False, path=rel, note=f"{rel} has no message {number}")

    def mark(self, ref: str) -> str:
        """A fingerprint of the daily-log lines `ref` names ("" for a session or a ref that does not
        resolve): a rejected fact is known again by it, and is new again once its lines change."""
        found = self.resolve(ref)
        if not found.ok or not found.lines:
            return ""
        return hashlib.sha1("\n".join(text for _n, text in found.lines).encode("utf-8")).hexdigest()[:16]

    def all_resolve(self, refs) -> bool:
        refs = tuple(refs)
        return bool(refs) and all(self.resolve(ref).ok for ref in refs)
