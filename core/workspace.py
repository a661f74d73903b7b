"""The facade: one `Workspace` object owns a workspace folder.

It owns the store (files are the truth), the derived search index, and the
settings. Every mutation returns a frozen `Changes` value that the GUI fans
out to its views. The GUI, the CLI, the MCP server and the harness all go
through this class, never around it.
"""
from __future__ import annotations

import datetime as dt
import threading
from pathlib import Path
from typing import Any

from core.config import Settings, dump_settings
from core.errors import CoreError, PathEscapeError, WorkspaceError
from core.store import checkpoints as checkpoint_store
from core.store import handoffs as handoff_store
from core.store.checkpoints import validate_checkpoint
from core.store.daily import FLUSH_HEADING, Appended, DailyLog, append_to_daily, as_bullets, list_daily_logs
from core.store.documents import DocumentStore, Snapshot
from core.store.handoffs import FIELDS as HANDOFF_FIELDS
from core.store.handoffs import LIST_FIELDS as HANDOFF_LIST_FIELDS
from core.store.hashing import file_hash
from core.store.history import History, HistoryEntry
from core.store.layout import create_layout, ensure_private_dirs, outside_links, remove_stale_temp_files
from core.store.memory_md import Bullet, Source, parse_bullet, parse_document, set_flag, strip_comments
from core.store.paths import OPENCLAW_FILES, WorkspacePaths, confine
from core.store.private import proposal_file, read_settings, read_state_record, update_state_record, write_config
from core.store.recovery import RecoveryStore
from core.store.secret_files import SecretFinding, findings_in, redact_files, secret_files
from core.store.sessions import JsonlRead, SessionCache, SessionInfo, list_sessions, read_jsonl
from core.store.superseded import (SupersededFact, forget_superseded, read_superseded, record_superseded,
                                   superseded_path)
from core.types import Changes, kind_of

# The facade's vocabulary: the types and pure helpers of the workspace format that front ends
# need to show and edit what they read (parsing a bullet, stripping a comment, validating a
# checkpoint). Front ends import them from here, never from core.store.
__all__ = ["Workspace", "MEMORY_TEMPLATE", "Changes", "Snapshot", "HistoryEntry", "JsonlRead", "Bullet", "Source",
           "parse_bullet", "parse_document", "set_flag", "strip_comments", "validate_checkpoint", "FLUSH_HEADING",
           "HANDOFF_FIELDS", "HANDOFF_LIST_FIELDS", "file_hash", "WorkspacePaths", "SecretFinding",
           "SupersededFact"]

MEMORY_TEMPLATE = """# MEMORY

Curated long-term memory. One fact per bullet; a dream keeps it in shape.

## User profile

## Preferences

## Decisions

## Learnings

## Projects
"""


class Workspace:
    def __init__(self, root: Path, settings: Settings | None = None):
        self.root = root.resolve()
        self.paths = WorkspacePaths(self.root)
        self.settings = settings or read_settings(self.paths)
        self.history = History(self.paths.history_dir, self.root)
        self.documents = DocumentStore(self.paths, self.history)
        self.recovery = RecoveryStore(self.paths)      # unsaved edits of an editor, kept until saved
        self._index = None
        self._index_lock = threading.Lock()
        self._keyword_only = False
        # rel path -> ((size, mtime_ns), findings): the app asks again on every change it sees
        self._secret_cache: dict[str, tuple[tuple[int, int], list[SecretFinding]]] = {}
        self._secret_lock = threading.Lock()
        self.removed_temp_files: list[str] = []        # set by open(): temp files of killed writes

    # ----- opening -------------------------------------------------------------------------
    @classmethod
    def create(cls, path: str | Path) -> "Workspace":
        """Make a workspace with the full layout; an existing one is completed, never overwritten."""
        root = Path(path).expanduser()
        if root.exists() and not root.is_dir():
            raise WorkspaceError(f"{root} exists and is not a folder")
        root.mkdir(parents=True, exist_ok=True)
        create_layout(WorkspacePaths(root.resolve()), MEMORY_TEMPLATE)
        workspace = cls(root)
        workspace._note_first_open()
        return workspace

    @classmethod
    def open(cls, path: str | Path) -> "Workspace":
        """Open an existing workspace as it is (an AgentScope or OpenClaw one included)."""
        root = Path(path).expanduser()
        if not root.is_dir():
            raise WorkspaceError(f"no workspace at {root}: the folder does not exist (create one with `reverie init {root}`)")
        if not (root / "MEMORY.md").exists() and not (root / "memory").is_dir() and not (root / ".reverie").is_dir():
            raise WorkspaceError(f"{root} is not a memory workspace: it has no MEMORY.md and no memory/ folder "
                                 f"(create one with `reverie init {root}`)")
        workspace = cls(root)
        ensure_private_dirs(workspace.paths)
        workspace.removed_temp_files = remove_stale_temp_files(workspace.paths)   # left by a killed writer
        workspace._note_first_open()
        return workspace

    def _note_first_open(self) -> None:
        """The dream's time gate counts from the workspace's first open (core/dream/schedule/gates.py)."""
        moment = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
        try:
            if read_state_record(self.paths).get("first_open"):
                return
            update_state_record(self.paths, lambda r: r if r.get("first_open") else {**r, "first_open": moment})
        except (OSError, CoreError):
            # A read-only workspace, or memory/ a link out (reported by `index` and the app), still
            # opens; with no clock recorded its first dream is due at once.
            pass

    def close(self) -> None:
        with self._index_lock:
            if self._index is not None:
                self._index.close()
                self._index = None

    def __enter__(self) -> "Workspace":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ----- settings ------------------------------------------------------------------------
    def save_settings(self, settings: Settings) -> Changes:
        write_config(self.paths, dump_settings(settings))
        self.settings = settings
        return Changes(paths=(".reverie/config.toml",), kinds=("settings",))

    # ----- reading -------------------------------------------------------------------------
    def resolve(self, rel_path: str) -> Path:
        """A caller-given path, confined to the workspace (PathEscapeError otherwise)."""
        return confine(self.root, rel_path)

    def relative(self, path: Path) -> str:
        return self.paths.relative(path)

    def read(self, rel_path: str) -> Snapshot:
        return self.documents.read(rel_path)

    def read_lines(self, rel_path: str, start: int = 1, end: int | None = None) -> list[tuple[int, str]]:
        """Numbered lines start..end (1-based, inclusive) of a workspace file."""
        lines = self.read(rel_path).text.split("\n")
        end = len(lines) if end is None else min(end, len(lines))
        return [(n, lines[n - 1]) for n in range(max(1, start), end + 1)]

    def flush_records(self) -> JsonlRead:
        """One record per flush (written, failed, duplicate), oldest first; damaged lines are counted."""
        return read_jsonl(self.paths.flush_record, self.root)

    def read_memory(self) -> Snapshot:
        return self.documents.read("MEMORY.md")

    # ----- whole-file writes (CAS + history) -------------------------------------------------
    def write_document(self, rel_path: str, text: str, expected_hash: str, *, reason: str = "edit",
                       base_text: str | None = None) -> Changes:
        result = self.documents.write(rel_path, text, expected_hash, reason=reason, base_text=base_text)
        return self._changed(result.path, hash=result.hash, merged_append=result.merged_append,
                             history_id=result.entry.id if result.entry else "")

    def write_memory(self, text: str, expected_hash: str, *, reason: str = "edit",
                     base_text: str | None = None) -> Changes:
        return self.write_document("MEMORY.md", text, expected_hash, reason=reason, base_text=base_text)

    def undo(self, rel_path: str = "MEMORY.md") -> Changes:
        result = self.documents.undo(rel_path)
        return self._changed(result.path, hash=result.hash)

    def restore(self, rel_path: str, entry_id: str, expected_hash: str) -> Changes:
        result = self.documents.restore(rel_path, entry_id, expected_hash)
        return self._changed(result.path, hash=result.hash)

    def history_entries(self, rel_path: str | None = None) -> list[HistoryEntry]:
        """The changes that landed (an entry of a write killed before its rename is left out), newest first."""
        if rel_path is not None:
            return self.documents.landed_history(rel_path)
        rels = sorted({entry.path for entry in self.history.entries()})
        landed = []
        for rel in rels:
            try:
                landed.extend(self.documents.landed_history(rel))
            except PathEscapeError:       # the file is now a link out: its past versions are still ours
                landed.extend(self.history.entries(rel))
        return sorted(landed, key=lambda e: e.id, reverse=True)

    def outside_links(self) -> list[str]:
        """Parts of the layout that are symbolic links leading outside the workspace, as sentences:
        Reverie neither reads nor writes through them, so front ends show these."""
        return outside_links(self.paths)

    # ----- daily logs (append-only) ----------------------------------------------------------
    def append_daily(self, text: str, *, day: dt.date | None = None, bullets: bool = True) -> Changes:
        """Append to a day's log; secret values are redacted first (info: lines, redacted count, text)."""
        body = as_bullets(text) if bullets else text
        if not body.strip():
            return Changes()
        appended: Appended = append_to_daily(self.paths, body, day)
        return self._changed(self.relative(appended.path), lines=(appended.first_line, appended.last_line),
                             redacted=appended.redacted, text=appended.text)

    def daily_logs(self, include_archive: bool = True) -> list[DailyLog]:
        return list_daily_logs(self.paths, include_archive)

    def agent_files(self) -> list[str]:
        """OpenClaw's top-level files present (USER.md, SOUL.md, …): shown and searched, never rewritten
        by a dream."""
        return [name for name in OPENCLAW_FILES if (self.root / name).is_file()]

    # ----- superseded values (memory/superseded.md) --------------------------------------------
    def record_superseded(self, facts: list[SupersededFact]) -> Changes:
        """Keep the old values accepted updates replaced; records already there are not written again."""
        written = record_superseded(self.paths, list(facts))
        if not written:
            return Changes()
        return self._changed(self.relative(superseded_path(self.paths)), superseded=written)

    def forget_superseded(self, facts: list[SupersededFact]) -> Changes:
        """Take records back out (an undone accept put their old values back into MEMORY.md)."""
        removed = forget_superseded(self.paths, list(facts))
        if not removed:
            return Changes()
        return self._changed(self.relative(superseded_path(self.paths)), superseded_removed=removed)

    def superseded(self, bullet_id: str | None = None) -> list[SupersededFact]:
        """The old values kept for a bullet (or all of them), oldest first."""
        return read_superseded(self.paths, bullet_id)

    # ----- sessions ----------------------------------------------------------------------------
    def sessions(self) -> list[SessionInfo]:
        return list_sessions(self.paths)

    def read_session(self, session_id: str) -> JsonlRead:
        return read_jsonl(self.paths.session_log(session_id), self.root)

    @property
    def session_cache(self) -> SessionCache:
        return SessionCache(self.paths, self.settings.memory.session_cache_size)

    # ----- checkpoints and hand-offs ---------------------------------------------------------
    def save_checkpoint(self, data: dict[str, Any]) -> Changes:
        path = checkpoint_store.save_checkpoint(self.paths, data)
        return self._changed(self.relative(path))

    def latest_checkpoint(self, session_id: str | None = None) -> dict[str, Any] | None:
        return checkpoint_store.latest_checkpoint(self.paths, session_id)

    def checkpoint_files(self, session_id: str | None = None) -> list[Path]:
        return checkpoint_store.list_checkpoints(self.paths, session_id)

    def read_checkpoint(self, path: Path) -> dict[str, Any]:
        """One checkpoint file (as `checkpoint_files` lists them), validated; FormatError when damaged."""
        return checkpoint_store.read_checkpoint(self.paths, path)

    def create_handoff(self, packet: dict[str, Any], task_id: str | None = None) -> tuple[dict[str, Any], Changes]:
        record = handoff_store.create_handoff(self.paths, packet, task_id)
        return record, self._changed(self.relative(self.paths.handoff(record["id"])))

    def read_handoff(self, handoff_id: str) -> dict[str, Any]:
        return handoff_store.read_handoff(self.paths, handoff_id)

    def handoffs(self) -> list[dict[str, Any]]:
        return handoff_store.list_handoffs(self.paths)

    # ----- secrets -------------------------------------------------------------------------------
    def find_secrets(self, paths: list[str] | None = None, *, in_child: bool = False) -> list[SecretFinding]:
        """Where a pasted secret sits (path, line, kind; never the value) in the files agents, dreams and
        prompts read: MEMORY.md, progress.md, daily logs, sessions, checkpoints, hand-offs (or just `paths`).
        `in_child`: the files not scanned since they last changed are scanned in a child process (the
        scan is pure Python: at 100k lines it would hold a GUI process's GIL for seconds)."""
        keys = {rel: self._file_key(rel) for rel in self._secret_scope(paths)}    # one stat per file
        if in_child:
            stale = [rel for rel, key in keys.items() if key is not None and self._cached_findings(rel, key) is None]
            if stale:
                from core.jobproc import run_in_child

                scanned = run_in_child("core.store.secret_files:scan_job", {"root": str(self.root), "rels": stale},
                                       nice=10, label="secret scan")
                with self._secret_lock:
                    self._secret_cache.update(scanned)
                # The child's key was taken just before its read: a file changed since our stat was
                # scanned as it is now, not scanned again here.
                keys.update({rel: scanned[rel][0] for rel in stale if rel in scanned})
        out: list[SecretFinding] = []
        for rel, key in keys.items():
            out.extend(self._secret_findings(rel, key))
        return out

    def _file_key(self, rel: str) -> tuple[int, int] | None:
        """(size, mtime_ns) of a file as it is now, the key its scan is cached under; None when it is gone."""
        try:
            stat = self.resolve(rel).stat()
        except (FileNotFoundError, CoreError):
            return None
        return stat.st_size, stat.st_mtime_ns

    def _cached_findings(self, rel: str, key: tuple[int, int]) -> list[SecretFinding] | None:
        """The findings of `rel` if it was scanned as it is now (`key`); None when it must be (re)scanned."""
        with self._secret_lock:
            cached = self._secret_cache.get(rel)
        return list(cached[1]) if cached and cached[0] == key else None

    def redact_secrets(self, paths: list[str] | None = None) -> Changes:
        """Rewrite the files that hold a secret with each value as `[redacted <kind>]` (CAS + history).
        info: `redacted` (values replaced) and `skipped` (path -> why a file was left as it is)."""
        rels = list(dict.fromkeys(f.path for f in self.find_secrets(paths)))
        result = redact_files(self.paths, self.documents, rels)
        changes = Changes(info={"redacted": result.redacted, "skipped": dict(result.skipped),
                                "snapshots": result.snapshots})
        for rel in result.paths:
            changes = changes | self._changed(rel)
        return changes

    def _secret_scope(self, paths: list[str] | None) -> list[str]:
        """Workspace-relative files: all the scanned ones, or those given (a folder: the scanned ones in it)."""
        if paths is None:
            return [self.relative(p) for p in secret_files(self.paths)]
        out = []
        for path in map(self.resolve, paths):
            if path.is_file():
                out.append(self.relative(path))
            elif path.is_dir():
                out.extend(self.relative(p) for p in secret_files(self.paths) if path in p.parents)
        return list(dict.fromkeys(out))

    def _secret_findings(self, rel: str, key: tuple[int, int] | None) -> list[SecretFinding]:
        if key is None:           # gone since it was listed
            return []
        cached = self._cached_findings(rel, key)
        if cached is not None:
            return cached
        try:
            text = self.read(rel).text
        except FileNotFoundError:
            return []
        findings = findings_in(rel, text)
        with self._secret_lock:
            self._secret_cache[rel] = (key, findings)
        return list(findings)

    # ----- search (derived) --------------------------------------------------------------------
    @property
    def index(self):
        """The search index, opened on first use (FTS now; embeddings fill in behind)."""
        with self._index_lock:
            if self._index is None:
                from core.index import SearchIndex

                self._index = SearchIndex(self.root, self.paths.index_db, self.settings.search,
                                          embedder=False if self._keyword_only else None)
            return self._index

    def keyword_only_index(self) -> None:
        """Open the index (on first use) without the embedding model: a command that only reads
        keyword hits never loads the model and never waits for background embedding to stop."""
        self._keyword_only = True

    @property
    def index_is_open(self) -> bool:
        return self._index is not None

    def sync_index(self, progress=None, **options):
        """Bring the index up to date; options as SearchIndex.sync (in_child, cancel, nice)."""
        return self.index.sync(progress, **options)

    def search(self, query: str, *, k: int = 10, mode: str | None = None, kinds=None, since=None, until=None):
        """Search the index; kinds / since / until narrow it (core/index/filters.py)."""
        return self.index.search(query, k=k, mode=mode, kinds=kinds, since=since, until=until)

    def notice_external_change(self, rel_path: str) -> None:
        """A file changed outside Reverie (the watcher saw it): bring the index up to date."""
        if self._index is not None:
            self._index.reindex_file(rel_path)

    # ----- what the callers above the facade changed ------------------------------------------------
    # core.dream and core.harness call this class, so their own writes (a proposal decided, a session
    # ended) cannot return through it. These name what such a call changed in the Changes of every
    # facade mutation, from the layout this class owns, so a front end publishes them the same way.
    def proposal_changes(self, proposal_id: str = "") -> Changes:
        """A proposal accepted or rejected: its record; with no id (a dream ran), every proposal."""
        path = proposal_file(self.paths, proposal_id) if proposal_id else self.paths.proposals_dir
        rel = self.relative(path) + ("" if proposal_id else "/")
        return Changes(paths=(rel,), kinds=("proposal",))

    def session_end_changes(self) -> Changes:
        """An agent session ended: its log and the session cache, and the daily log its flush appended to."""
        paths = (self.relative(self.paths.sessions_dir) + "/", self.relative(self.paths.memory_dir) + "/")
        return Changes(paths=paths, kinds=("session", "daily"))

    # ----- internals -----------------------------------------------------------------------------
    def _changed(self, rel_path: str, **info: Any) -> Changes:
        # The index's own rule says which files it reads (reindex_file ignores the rest): USER.md, SOUL.md
        # and the other top-level files are "file" by kind, yet indexed, and must not wait for a full sync.
        if self._index is not None:
            self._index.reindex_file(rel_path)
        return Changes(paths=(rel_path,), kinds=(kind_of(rel_path),), info=info)
