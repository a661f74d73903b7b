"""Background embedding: pending rows get vectors without ever blocking keyword search.

One daemon thread per index. It takes pending rows (`vec = 0`) in batches,
looks their embedded text up in the content-hash cache (`embeddings` table:
hash -> vector, so a text is embedded once, ever, whatever line or file it
moves to), embeds only the misses, stores them, and adds the rows to the vector
index. The model runs outside every lock; only the short commit + add holds the
index's write lock, so a sync or a search never waits for the model.

The vector index is opened lazily: from its file when the database already
knows the model's dimension (no model load needed), otherwise after the model
loaded. If the model cannot load, the worker records why and stops; keyword
search goes on and `status()` says what is wrong.
"""
from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Callable

from core.index.db import Database

if TYPE_CHECKING:     # both load on first use of the vectors: keyword search never needs them
    from core.index.vectors import VectorIndex

BATCH_ROWS = 128      # rows looked at per round
EMBED_CHUNK = 32      # texts per model call: short calls keep a query's own embedding waiting little


class EmbeddingWorker:
    def __init__(self, db: Database, embedder, vector_path, *, background: bool = True):
        self.db = db
        self.embedder = embedder
        self.vector_path = vector_path
        self.background = background
        self.vectors: VectorIndex | None = None
        self.error = ""
        self.embedded_texts = 0          # model calls' texts since start (tests: a warm run embeds nothing)
        self._open_lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._idle = threading.Condition()
        self._busy = False
        self._pending, self._pending_at = 0, -1.0
        self._thread: threading.Thread | None = None

    # ----- lifecycle -------------------------------------------------------------------------
    def start(self) -> None:
        if self.background and self._thread is None and self.embedder is not None:
            self._thread = threading.Thread(target=self._run, name="reverie-embedder", daemon=True)
            self._thread.start()
        self.wake()

    def wake(self) -> None:
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=60)
            self._thread = None
        if self.vectors is not None:
            with self.db.write_lock:
                self.vectors.save()

    @property
    def alive(self) -> bool:
        return self.embedder is not None and not self.error and (not self.background or self._thread is not None)

    def pending(self, *, fresh: bool = True) -> int:
        """Rows without a vector (0 when there is no model: nothing is waiting for one).

        fresh=False may answer from a count at most half a second old: counting
        100k pending rows costs milliseconds, too much to pay on every search.
        """
        if self.embedder is None:
            return 0
        now = time.monotonic()
        if fresh or now - self._pending_at > 0.5:
            self._pending = self.db.conn().execute("SELECT count(*) FROM lines WHERE vec = 0").fetchone()[0]
            self._pending_at = now
        return self._pending

    def wait(self, timeout: float | None = None) -> bool:
        """True once nothing is pending; False on timeout or when embedding cannot run (no model)."""
        if self.embedder is None:
            return False
        if not self.background:
            self.run_until_idle()
            return self.pending() == 0
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if self.pending() == 0 and not self._busy:
                return True
            if not self.alive:
                return False
            self.wake()
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return False
            with self._idle:
                self._idle.wait(timeout=0.2 if left is None else min(0.2, left))

    # ----- the vector index --------------------------------------------------------------------
    def open_vectors(self, *, load_model: bool = True) -> VectorIndex | None:
        if self.vectors is not None or self.embedder is None:
            return self.vectors
        with self._open_lock:
            if self.vectors is not None:
                return self.vectors
            dim = int(self.db.get_meta("embedding_dim", "0") or 0)
            if not dim:
                if not load_model:
                    return None
                dim = int(self.embedder.dim)   # loads the model
                with self.db.write() as conn:
                    self.db.set_meta(conn, "embedding_dim", str(dim))
            from core.index.vectors import VectorIndex

            vectors = VectorIndex(self.vector_path, dim, self.embedder.model_id)
            with self.db.write_lock:
                wanted = {r[0] for r in self.db.conn().execute("SELECT id FROM lines WHERE vec = 1")}
                vectors.open(wanted, self._vectors_for)
                vectors.save()
            self.vectors = vectors
            return vectors

    def _vectors_for(self, ids: list[int]):
        import numpy as np

        marks = ",".join("?" * len(ids))
        for row_id, blob in self.db.conn().execute(
                f"SELECT l.id, e.vector FROM lines l JOIN embeddings e ON e.hash = l.ehash WHERE l.id IN ({marks})", ids):
            yield row_id, np.frombuffer(blob, dtype=np.float32)

    def delete(self, ids: list[int]) -> None:
        """Called by the syncer under the write lock."""
        if self.vectors is not None:
            self.vectors.delete(ids)

    # ----- the work ----------------------------------------------------------------------------
    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(timeout=5.0)
            self._wake.clear()
            if self._stop.is_set():
                break
            try:
                self.run_until_idle()
            except Exception as exc:   # the model or the disk failed: keyword search must go on
                self.error = f"embedding stopped: {exc}"
                break
            finally:
                with self._idle:
                    self._idle.notify_all()

    def run_until_idle(self, progress: Callable[[int], None] | None = None) -> int:
        done = 0
        while not self._stop.is_set():
            if self.open_vectors() is None:
                return done
            n = self._one_batch()
            if not n:
                break
            done += n
            if progress is not None:
                progress(done)
        if self.vectors is not None:
            with self.db.write_lock:
                self.vectors.save()
        return done

    def _one_batch(self) -> int:
        import numpy as np

        self._busy = True
        try:
            batch = self.db.conn().execute(
                "SELECT id, ehash, etext FROM lines WHERE vec = 0 LIMIT ?", (BATCH_ROWS,)).fetchall()
            if not batch:
                return 0
            hashes = list(dict.fromkeys(h for _, h, _ in batch))
            marks = ",".join("?" * len(hashes))
            cached = {h: np.frombuffer(v, dtype=np.float32) for h, v in self.db.conn().execute(
                f"SELECT hash, vector FROM embeddings WHERE hash IN ({marks})", hashes)}
            todo = {h: t for _, h, t in batch if h not in cached}
            fresh: dict[str, np.ndarray] = {}
            items = list(todo.items())
            for start in range(0, len(items), EMBED_CHUNK):
                chunk = items[start:start + EMBED_CHUNK]
                vectors = self.embedder.embed_batch([t for _, t in chunk])
                self.embedded_texts += len(chunk)
                fresh.update((h, np.asarray(v, dtype=np.float32)) for (h, _), v in zip(chunk, vectors))
                if self._stop.is_set():
                    break
            known = {**cached, **fresh}
            with self.db.write_lock:
                with self.db.write() as conn:
                    conn.executemany("INSERT OR IGNORE INTO embeddings(hash, vector) VALUES(?, ?)",
                                     [(h, v.tobytes()) for h, v in fresh.items()])
                    ids = [r[0] for r in batch if r[1] in known]
                    live = []
                    if ids:   # rows deleted or changed while the model ran are not ours any more
                        marks = ",".join("?" * len(ids))
                        live = conn.execute(f"SELECT id, ehash FROM lines WHERE vec = 0 AND id IN ({marks})",
                                            ids).fetchall()
                    conn.executemany("UPDATE lines SET vec = 1 WHERE id = ?", [(i,) for i, _ in live])
                if live:
                    self.vectors.add([i for i, _ in live], np.stack([known[h] for _, h in live]))
            return len(batch)
        finally:
            self._busy = False
