"""Bringing the index up to date with the files: scan, then apply the difference.

A file is re-read only when its size or mtime changed, and re-indexed only when
its content hash changed too. Re-indexing a file matches its new rows against
its old ones (same content -> keep the row and its vector, only the line number
moves; same embedded text -> update the row in place and keep its vector), so an
append to a daily log writes the new lines and the one line whose neighbour
changed, and an edit in the middle of MEMORY.md re-embeds only the edited line.

New rows start with `vec = 0` (pending); the embedding worker gives them
vectors (from the content-hash cache when it can). Rows with nothing to embed
(lines.py: a bare timestamp or number) start with `vec = 2` and are never
embedded; so are the rows of a file over search.large_file_bytes, which is read
and written in blocks instead (keyword only; core/index/large.py). Deleted rows leave the
vector index at once, under the same lock the worker adds under, so a vector
for a deleted row can never be left behind.
"""
from __future__ import annotations

import hashlib
import sqlite3
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from core.index import cjk
from core.index.db import Database
from core.index.large import KEYWORD_ONLY, LARGE_FILE_BYTES, blocks, grown_from, is_large
from core.index.lines import IndexOptions, Row, file_rows, indexed_files, is_indexed
from core.store.textio import decode_lossy
from core.store.layout import outside_links
from core.store.paths import WorkspacePaths

MAX_PROBLEMS = 100      # problems kept per large file (a damaged 200 MB log must not fill the index with them)

Progress = Callable[[int, int, str], None]   # (files done, files to look at, path)
NOT_EMBEDDED = 2     # lines.vec of a row with nothing to embed (0: pending, 1: in the vector index)


@dataclass
class SyncReport:
    added: list[str] = field(default_factory=list)      # files new to the index
    updated: list[str] = field(default_factory=list)    # files whose content changed
    removed: list[str] = field(default_factory=list)    # files gone from the workspace
    problems: list[str] = field(default_factory=list)   # e.g. "memory/x.md: 3 byte(s) are not UTF-8 ..."
    rows_written: int = 0
    rows_deleted: int = 0
    seconds: float = 0.0

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.removed)

    def merge(self, other: "SyncReport") -> None:
        self.added += other.added
        self.updated += other.updated
        self.removed += other.removed
        self.problems += other.problems
        self.rows_written += other.rows_written
        self.rows_deleted += other.rows_deleted


class Syncer:
    def __init__(self, root: Path, db: Database, options: IndexOptions, on_deleted: Callable[[list[int]], None],
                 on_pending: Callable[[], None]):
        self.root = root
        self.db = db
        self.options = options
        self._on_deleted = on_deleted    # drop these ids from the vector index (called under the write lock)
        self._on_pending = on_pending    # wake the embedding worker
        self.large_file_bytes = LARGE_FILE_BYTES   # SearchIndex sets search.large_file_bytes

    def sync(self, progress: Progress | None = None) -> SyncReport:
        started = time.perf_counter()
        report = SyncReport()
        report.problems += outside_links(WorkspacePaths(self.root))   # links out are named, never skipped silently
        files = indexed_files(self.root)
        known = {path: (size, mtime) for path, size, mtime in
                 self.db.conn().execute("SELECT path, size, mtime_ns FROM files")}
        for number, (rel, path) in enumerate(sorted(files.items()), start=1):
            if progress is not None:
                progress(number - 1, len(files), rel)
            report.merge(self._file(rel, path, known.get(rel)))
        gone = sorted(set(known) - set(files))
        for rel in gone:
            report.merge(self._remove(rel))
        if progress is not None:
            progress(len(files), len(files), "")
        self._maintain(report)
        report.seconds = time.perf_counter() - started
        if report.rows_written:
            self._on_pending()
        return report

    def _maintain(self, report: SyncReport) -> None:
        """Keep queries fast and the cache bounded after a large change.

        FTS5 keeps every transaction's rows (and deletions) as a new segment and a
        query reads them all: after re-deriving a whole workspace a query was 20x
        slower (49 ms -> 2.5 ms once merged). Cached vectors of texts no line has
        any more are kept (an undo brings them back for free) until they
        outnumber the live ones.
        """
        churn = report.rows_written + report.rows_deleted
        if churn < 1000:
            return
        with self.db.write_lock:
            with self.db.write() as conn:
                conn.execute("INSERT INTO lines_fts(lines_fts) VALUES('optimize')")
                live = conn.execute("SELECT count(DISTINCT ehash) FROM lines").fetchone()[0]
                cached = conn.execute("SELECT count(*) FROM embeddings").fetchone()[0]
                if cached > 2 * live + 1000:
                    conn.execute("DELETE FROM embeddings WHERE hash NOT IN (SELECT ehash FROM lines)")

    def reindex_file(self, rel: str) -> SyncReport:
        started = time.perf_counter()
        rel = rel.replace("\\", "/").lstrip("/")
        report = SyncReport()
        if not is_indexed(rel) or ".." in rel.split("/"):
            return report
        path = self.root / rel
        row = self.db.conn().execute("SELECT size, mtime_ns FROM files WHERE path = ?", (rel,)).fetchone()
        if path.is_file() and rel in indexed_files_one(self.root, rel):
            report.merge(self._file(rel, path, tuple(row) if row else None))
        elif row is not None:
            report.merge(self._remove(rel))
        report.seconds = time.perf_counter() - started
        if report.rows_written:
            self._on_pending()
        return report

    # ----- one file ----------------------------------------------------------------------------
    def _file(self, rel: str, path: Path, known: tuple[int, int] | None) -> SyncReport:
        report = SyncReport()
        try:
            stat = path.stat()
            if known is not None and known == (stat.st_size, stat.st_mtime_ns):
                return report
            if is_large(stat.st_size, self.large_file_bytes):
                return self._large_file(rel, path, stat)
            data = path.read_bytes()
        except OSError as exc:
            report.problems.append(f"{rel}: cannot be read ({exc.strerror or exc}); left as it was in the index")
            return report
        if data.startswith(b"\xef\xbb\xbf"):
            data = data[3:]
        digest = hashlib.blake2b(data, digest_size=16).hexdigest()   # of the bytes, whatever their encoding
        old = self.db.conn().execute("SELECT hash FROM files WHERE path = ?", (rel,)).fetchone()
        if old is not None and old[0] == digest:
            with self.db.write() as conn:   # touched, not changed: remember the new stat only
                conn.execute("UPDATE files SET size = ?, mtime_ns = ? WHERE path = ?", (stat.st_size, stat.st_mtime_ns, rel))
            return report
        decoded = decode_lossy(data)
        problems = []
        if not decoded.clean:
            problems.append(f"{rel}: {decoded.replaced} byte(s) are not UTF-8 (first at byte {decoded.first_bad_offset}); "
                            f"indexed with U+FFFD in their place")
        rows, row_problems = file_rows(rel, decoded.text, self.options)
        problems += row_problems
        with self.db.write_lock:
            with self.db.write() as conn:
                written, deleted_ids = self._apply(conn, rel, rows)
                conn.execute("INSERT INTO files(path, size, mtime_ns, hash, lines, problem) VALUES(?, ?, ?, ?, ?, ?) "
                             "ON CONFLICT(path) DO UPDATE SET size = excluded.size, mtime_ns = excluded.mtime_ns, "
                             "hash = excluded.hash, lines = excluded.lines, problem = excluded.problem",
                             (rel, stat.st_size, stat.st_mtime_ns, digest, len(rows), "\n".join(problems)))
            if deleted_ids:
                self._on_deleted(deleted_ids)
        (report.added if old is None else report.updated).append(rel)
        report.problems += problems
        report.rows_written += written
        report.rows_deleted += len(deleted_ids)
        return report

    def _apply(self, conn: sqlite3.Connection, rel: str, rows: list[Row]) -> tuple[int, list[int]]:
        old = conn.execute("SELECT id, line, fhash, ehash FROM lines WHERE path = ?", (rel,)).fetchall()
        by_full: dict[str, list[tuple[int, int]]] = defaultdict(list)
        by_embed: dict[str, list[int]] = defaultdict(list)
        for row_id, line, fhash, ehash in old:
            by_full[fhash].append((row_id, line))
            by_embed[ehash].append(row_id)
        used: set[int] = set()
        rest: list[Row] = []
        moves = []
        for row in rows:   # 1. same content: keep the row, maybe at a new line number
            candidates = by_full.get(row.fhash)
            if candidates:
                row_id, line = candidates.pop()
                used.add(row_id)
                if line != row.line:
                    moves.append((row.line, row_id))
            else:
                rest.append(row)
        if moves:
            conn.executemany("UPDATE lines SET line = ? WHERE id = ?", moves)
        written = 0
        inserts = []
        for row in rest:   # 2. same embedded text: rewrite the row, keep its vector
            ids = [i for i in by_embed.get(row.ehash, ()) if i not in used]
            if ids:
                row_id = ids[0]
                used.add(row_id)
                conn.execute("UPDATE lines SET line = ?, text = ?, sources = ?, day = ?, fhash = ? WHERE id = ?",
                             (row.line, row.text, " ".join(row.sources), row.day, row.fhash, row_id))
                conn.execute("DELETE FROM lines_fts WHERE rowid = ?", (row_id,))
                conn.execute("INSERT INTO lines_fts(rowid, body, context) VALUES(?, ?, ?)",
                             (row_id, cjk.expand(row.body), cjk.expand(row.context)))
                written += 1
            else:
                inserts.append(row)
        deleted = [row_id for row_id, *_ in old if row_id not in used]   # 3. gone
        if deleted:
            conn.executemany("DELETE FROM lines WHERE id = ?", [(i,) for i in deleted])
            conn.executemany("DELETE FROM lines_fts WHERE rowid = ?", [(i,) for i in deleted])
        if inserts:   # 4. new: ids given here (one writer: BEGIN IMMEDIATE), so both tables fill in one call each
            last = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'lines'").fetchone()
            ids = range((last[0] if last else 0) + 1, (last[0] if last else 0) + 1 + len(inserts))
            conn.executemany(
                "INSERT INTO lines(id, path, line, text, sources, day, ehash, etext, fhash, vec) "
                "VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(i, rel, row.line, row.text, " ".join(row.sources), row.day, row.ehash, row.etext, row.fhash,
                  0 if row.etext else NOT_EMBEDDED) for i, row in zip(ids, inserts)])
            conn.executemany("INSERT INTO lines_fts(rowid, body, context) VALUES(?, ?, ?)",
                             [(i, cjk.expand(row.body), cjk.expand(row.context)) for i, row in zip(ids, inserts)])
            written += len(inserts)
        return written, deleted

    def _large_file(self, rel: str, path: Path, stat) -> SyncReport:
        """A file over large_file_bytes: read and written a block at a time, keyword-only (core/index/large.py);
        when it only grew, only its new lines are read."""
        report = SyncReport()
        old = self.db.conn().execute("SELECT size, hash, lines FROM files WHERE path = ?", (rel,)).fetchone()
        problems: list[str] = []
        with open(path, "rb") as handle:
            grown = grown_from(handle, old[0], old[1]) if old is not None and stat.st_size > old[0] else None
            if grown is None:
                start, digest, count = None, hashlib.blake2b(digest_size=16), 0
                report.rows_deleted = self._clear(rel)
            else:
                (start, digest), count = grown, old[2]
            for rows, block_problems in blocks(handle, rel, self.options, digest, start):
                with self.db.write_lock:
                    with self.db.write() as conn:
                        self._insert_block(conn, rel, rows)
                count += len(rows)
                report.rows_written += len(rows)
                problems += block_problems[:MAX_PROBLEMS - len(problems)]
        problems.insert(0, f"{rel} is {stat.st_size / 1e6:,.0f} MB, over search.large_file_bytes: indexed in blocks, "
                           "for keyword search only (no meaning search)")
        with self.db.write_lock:
            with self.db.write() as conn:
                conn.execute("INSERT INTO files(path, size, mtime_ns, hash, lines, problem) VALUES(?, ?, ?, ?, ?, ?) "
                             "ON CONFLICT(path) DO UPDATE SET size = excluded.size, mtime_ns = excluded.mtime_ns, "
                             "hash = excluded.hash, lines = excluded.lines, problem = excluded.problem",
                             (rel, stat.st_size, stat.st_mtime_ns, digest.hexdigest(), count, "\n".join(problems)))
        (report.added if old is None else report.updated).append(rel)
        report.problems += problems
        return report

    @staticmethod
    def _insert_block(conn: sqlite3.Connection, rel: str, rows: list[Row]) -> None:
        """Rows of a large file, keyword-only, in two executemany calls (ids taken after the highest ever
        given, as AUTOINCREMENT would: an id is never reused, it may be a vector label)."""
        if not rows:
            return
        seq = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'lines'").fetchone()
        top = max(seq[0] if seq else 0, conn.execute("SELECT coalesce(max(id), 0) FROM lines").fetchone()[0])
        # No embedded text and no hashes: a keyword-only row is never embedded, and never matched for reuse
        # (if the file shrinks under the limit, its rows are written anew).
        conn.executemany("INSERT INTO lines(id, path, line, text, sources, day, ehash, etext, fhash, vec) "
                         "VALUES(?, ?, ?, ?, ?, ?, '', '', '', ?)",
                         [(top + n, rel, row.line, row.text, " ".join(row.sources), row.day, KEYWORD_ONLY)
                          for n, row in enumerate(rows, start=1)])
        conn.executemany("INSERT INTO lines_fts(rowid, body, context) VALUES(?, ?, ?)",
                         [(top + n, cjk.expand(row.body), cjk.expand(row.context))
                          for n, row in enumerate(rows, start=1)])

    def _clear(self, rel: str) -> int:
        """Delete every row of `rel` in SQL (a huge file's ids are never all held); returns how many."""
        with self.db.write_lock:
            with self.db.write() as conn:
                embedded = [r[0] for r in conn.execute("SELECT id FROM lines WHERE path = ? AND vec = 1", (rel,))]
                conn.execute("DELETE FROM lines_fts WHERE rowid IN (SELECT id FROM lines WHERE path = ?)", (rel,))
                deleted = conn.execute("DELETE FROM lines WHERE path = ?", (rel,)).rowcount
            if embedded:
                self._on_deleted(embedded)
        return deleted

    def _remove(self, rel: str) -> SyncReport:
        report = SyncReport()
        with self.db.write_lock:
            with self.db.write() as conn:
                ids = [r[0] for r in conn.execute("SELECT id FROM lines WHERE path = ?", (rel,))]
                conn.executemany("DELETE FROM lines_fts WHERE rowid = ?", [(i,) for i in ids])
                conn.execute("DELETE FROM lines WHERE path = ?", (rel,))
                conn.execute("DELETE FROM files WHERE path = ?", (rel,))
            if ids:
                self._on_deleted(ids)
        report.removed.append(rel)
        report.rows_deleted = len(ids)
        return report


def indexed_files_one(root: Path, rel: str) -> dict[str, Path]:
    """indexed_files() for one path: the same confinement rules, without listing folders."""
    path = root / rel
    try:
        path.resolve().relative_to(root.resolve())
    except (OSError, ValueError):
        return {}
    return {rel: path} if path.is_file() else {}


def sync_job(args: dict, job) -> dict:
    """`Syncer.sync` in a child process (core/jobproc.py; the desktop app's index build).

    The child writes the rows through its own connection (WAL: the app's searches read
    on meanwhile, its writes wait on SQLite's busy timeout). The vector index lives in
    the app, so the ids of deleted rows go back to it, also when the sync stops half-way
    (cancelled, a disk error): rows already deleted must leave the vector index too.
    """
    from core.jobproc import portable_exception

    db = Database(Path(args["db"]))
    deleted: list[int] = []
    pending = [False]
    syncer = Syncer(Path(args["root"]), db, args["options"], on_deleted=deleted.extend,
                    on_pending=lambda: pending.__setitem__(0, True))
    report, error = None, None
    try:
        report = syncer.sync(lambda done, total, rel: job.progress((done, total, rel)))
    except Exception as exc:   # noqa: BLE001 - reported to the parent after its deletions are known
        error = portable_exception(exc)
    finally:
        db.close()
    return {"report": report, "deleted": deleted, "pending": pending[0], "error": error}
