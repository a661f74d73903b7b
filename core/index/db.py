"""The index database: `<workspace>/.reverie/index.db` (SQLite, WAL, one writer).

Everything in it is derived from the workspace files and can be rebuilt from
them; deleting the file loses nothing but time. The schema is versioned with
`PRAGMA user_version`; a database written by a newer Reverie, or one too
damaged to open, is refused with an IndexError_ naming the file (delete it and
the index is rebuilt).

One connection per thread (sqlite3 objects are not shared across threads);
writes from every thread of the process go through one lock, so there is one
writer at a time, and WAL lets readers answer while it writes. Another process
writing the same database waits on SQLite's busy timeout.

Each connection is closed by the thread that uses it, never under it: Python's
sqlite3 crashes the process (a NULL dereference) when one thread closes a connection
while another thread is inside a statement on it. A connection belongs to the
thread state that opened it (a Python thread, or one task of a Qt pool thread,
whose thread state ends with the task); it is closed once that thread state has ended,
or by the thread itself at its next `conn()` once the database is closed. `close()`
closes only its own thread's connection and those whose thread state has ended
(so do later `conn()` calls that open a connection).
"""
from __future__ import annotations

import sqlite3
import threading
import weakref
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from core.errors import IndexError_
from core.store.dirfd import checked_path

SCHEMA_VERSION = 2

# A `##`-`######` heading line: where a section (a conversation, a flush block, a MEMORY.md topic)
# starts. search.py asks for the nearest one above a hit with exactly this condition, so the partial
# index below answers it in one index step instead of a walk back over the file's rows.
HEADING_CONDITION = " OR ".join(f"text GLOB '{'#' * n} *'" for n in range(2, 7))

# Porter stemming so "painted" finds "paint"; remove_diacritics so "cafe" finds "café".
# CJK text reaches this tokenizer already cut into bigrams (see cjk.py).
FTS_TOKENIZER = "porter unicode61 remove_diacritics 2"

_MIGRATIONS: dict[int, str] = {
    1: f"""
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE files (
        path TEXT PRIMARY KEY,
        size INTEGER NOT NULL,
        mtime_ns INTEGER NOT NULL,
        hash TEXT NOT NULL,
        lines INTEGER NOT NULL,
        problem TEXT NOT NULL DEFAULT ''
    );
    CREATE TABLE lines (
        id INTEGER PRIMARY KEY AUTOINCREMENT,   -- never reused: it is also the vector label
        path TEXT NOT NULL,
        line INTEGER NOT NULL,
        text TEXT NOT NULL,                     -- what a hit shows (comments stripped)
        sources TEXT NOT NULL DEFAULT '',       -- MEMORY.md provenance refs, space separated
        day INTEGER NOT NULL DEFAULT 0,         -- date of the line (proleptic ordinal), 0 unknown
        ehash TEXT NOT NULL,                    -- hash of the text that is embedded
        etext TEXT NOT NULL,                    -- the text that is embedded
        fhash TEXT NOT NULL,                    -- hash of everything the row carries (change test)
        vec INTEGER NOT NULL DEFAULT 0          -- 1 once its vector is in the vector index
    );
    CREATE INDEX lines_path ON lines(path, line);
    CREATE INDEX lines_pending ON lines(vec) WHERE vec = 0;
    CREATE TABLE embeddings (hash TEXT PRIMARY KEY, vector BLOB NOT NULL);
    CREATE VIRTUAL TABLE lines_fts USING fts5(body, context, tokenize='{FTS_TOKENIZER}');
    """,
    2: f"CREATE INDEX lines_headings ON lines(path, line) WHERE {HEADING_CONDITION};",
}


class _Owner:
    """Kept in the opening thread's thread-local storage, so a dead weak reference to it says that
    thread state has ended (a Python thread exited, a pool task returned): its connection is free."""

    __slots__ = ("__weakref__",)


class Database:
    def __init__(self, path: Path):
        self.path = path
        self.write_lock = threading.RLock()
        self._local = threading.local()
        self._all: dict[sqlite3.Connection, weakref.ref] = {}    # connection -> its owner, while open
        self._all_lock = threading.Lock()
        self._closed = False
        checked_path(path)      # its folders made, never through a link (.reverie/ is the workspace's own)
        self._migrate()

    # ----- connections -----------------------------------------------------------------------
    def conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if self._closed:
            if conn is not None:
                self._local.conn = None
                self._forget(conn)      # this thread's own: nothing else runs a statement on it
            raise IndexError_(f"the search index {self.path} is closed")
        if conn is None:
            self._close_orphans()
            conn = self._open()
            owner = _Owner()
            with self._all_lock:
                self._all[conn] = weakref.ref(owner)
                closed = self._closed
            self._local.conn, self._local.owner = conn, owner
            if closed:                  # closed while this one opened
                return self.conn()
        return conn

    def _close_orphans(self) -> list[sqlite3.Connection]:
        """Close the connections whose thread state has ended (nobody can be in a statement on them).
        Not from the ending thread itself: Python is tearing that thread state down then."""
        with self._all_lock:
            orphans = [conn for conn, owner in self._all.items() if owner() is None]
        for conn in orphans:
            self._forget(conn)
        return orphans

    def _forget(self, conn: sqlite3.Connection) -> None:
        with self._all_lock:
            self._all.pop(conn, None)
        try:
            conn.close()
        except sqlite3.Error:
            pass

    def _open(self) -> sqlite3.Connection:
        try:
            conn = sqlite3.connect(checked_path(self.path), timeout=30.0, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")   # derived data: a lost last commit is re-derived
            conn.execute("PRAGMA busy_timeout=30000")
        except sqlite3.DatabaseError as exc:
            raise IndexError_(f"cannot open the search index {self.path} ({exc}); "
                              f"delete it and it will be rebuilt from the files") from exc
        return conn

    def open_connections(self) -> int:
        """Connections not closed yet (a thread's own, and those waiting to be swept)."""
        with self._all_lock:
            return len(self._all)

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One transaction as the process's only writer."""
        with self.write_lock:
            conn = self.conn()
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def close(self) -> None:
        """No new statements from now on. This thread's connection, and those whose thread state has
        ended, are closed now; one another thread may be using is closed by that thread (`conn()`)."""
        mine = getattr(self._local, "conn", None)
        with self._all_lock:
            self._closed = True
        self._local.conn = None
        if mine is not None:
            self._forget(mine)
        self._close_orphans()

    # ----- schema ----------------------------------------------------------------------------
    def _migrate(self) -> None:
        try:
            conn = self.conn()
            version = conn.execute("PRAGMA user_version").fetchone()[0]
        except sqlite3.DatabaseError as exc:
            raise IndexError_(f"the search index {self.path} is damaged ({exc}); "
                              f"delete it and it will be rebuilt from the files") from exc
        if version > SCHEMA_VERSION:
            raise IndexError_(f"the search index {self.path} was written by a newer Reverie "
                              f"(schema {version} > {SCHEMA_VERSION}); delete it to rebuild")
        for target in range(version + 1, SCHEMA_VERSION + 1):
            with self.write() as c:
                for statement in _split(_MIGRATIONS[target]):
                    c.execute(statement)
                c.execute(f"PRAGMA user_version = {target}")

    # ----- meta --------------------------------------------------------------------------------
    def get_meta(self, key: str, default: str = "") -> str:
        row = self.conn().execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else default

    def set_meta(self, conn: sqlite3.Connection, key: str, value: str) -> None:
        conn.execute("INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                     (key, value))


def _split(script: str) -> list[str]:
    # executescript() would COMMIT our transaction; run the statements one by one instead.
    return [s.strip() for s in script.split(";") if s.strip() and not s.strip().startswith("--")]
