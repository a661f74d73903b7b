"""The vector index: hnswlib, cosine, persisted next to index.db.

Labels are `lines.id` of the database (never reused), so the database says
which vectors should exist (`lines.vec = 1`) and this file is only a fast copy
of them. Its integrity is checked before hnswlib reads it (a truncated or
foreign file could crash the loader): a sidecar `<file>.sum` holds the file's
size, a blake2b digest, the model id and the dimension. Missing, damaged, or
for another model: rebuilt from the vectors in the database. Loaded but
behind (a crash between a database commit and the next save): reconciled by
adding and deleting the difference.

hnswlib is not safe for concurrent add and query, so every call holds one lock.
Parameters were chosen with `reverie bench vectors --n 2000 --scale 100000`
(recall@10 against exact search, 100k vectors of which 98k are noisy copies of
2k real MiniLM embeddings: dense clusters, harder than real data). M=16 held
recall@10 0.698 at ef=96 and only 0.870 at ef=800 (p50 0.58 ms): its graph
cannot walk between the clusters. M=32 (ef_construction 200, build 42 s
against 36 s) gave 0.991 at ef=100 (p50 0.14 ms) and 1.000 at ef=400. So M=32,
and ef grows with the index (ef_for): 96 up to 10k vectors, +16 per doubling
after, so recall holds as a workspace grows past what was measured. A file
built with another M is rebuilt from the database (no model needed).
"""
from __future__ import annotations

import hashlib
import math
import os
import threading
from pathlib import Path
from typing import Callable, Iterable, Iterator

import numpy as np

from core.store.dirfd import checked_path

M = 32
EF_CONSTRUCTION = 200
EF_SEARCH = 96          # ef up to EF_FLAT vectors
EF_FLAT = 10_000
EF_PER_DOUBLING = 16    # ef added per doubling of the index past EF_FLAT (see ef_for)
EF_MAX = 1_000


def ef_for(count: int) -> int:
    """The search ef for an index of `count` vectors: flat while small, then growing with its size.

    A graph search with a fixed ef finds a smaller share of the true neighbours
    as the index grows (measured: ef 96 gives recall@10 0.95+ at 10k vectors,
    0.70 at 100k). ef grows by EF_PER_DOUBLING per doubling past EF_FLAT.
    """
    if count <= EF_FLAT:
        return EF_SEARCH
    return min(EF_MAX, int(EF_SEARCH + EF_PER_DOUBLING * math.log2(count / EF_FLAT)))


def _digest(path: Path) -> str:
    h = hashlib.blake2b(digest_size=16)
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class VectorIndex:
    def __init__(self, path: Path, dim: int, model_id: str, *, ef: int | None = None):
        import hnswlib

        self._hnswlib = hnswlib
        self.path = path
        self.sum_path = path.with_name(path.name + ".sum")
        self.dim = dim
        self.model_id = model_id
        self.ef = ef               # None: ef_for(the index's size); a number: that ef, fixed
        self.lock = threading.RLock()
        self._index = None
        self._live: set[int] = set()
        self._dirty = False
        self.rebuilt_reason = ""

    # ----- open --------------------------------------------------------------------------------
    def open(self, wanted: set[int], vectors_for: Callable[[list[int]], Iterator[tuple[int, np.ndarray]]]) -> None:
        """Load the file (or rebuild it) and make it hold exactly the ids in `wanted`."""
        with self.lock:
            reason = self._check_file()
            if not reason:
                try:
                    index = self._hnswlib.Index(space="cosine", dim=self.dim)
                    index.load_index(str(self.path), max_elements=0, allow_replace_deleted=False)
                    index.set_ef(self.ef or EF_SEARCH)
                    self._index = index
                except (RuntimeError, MemoryError, ValueError) as exc:
                    reason = f"the vector file could not be loaded ({exc})"
            if reason:
                self.rebuilt_reason = reason if self.path.exists() or self.sum_path.exists() else ""
                self._new(len(wanted))
                self._add_from(sorted(wanted), vectors_for)
                self._live = set(wanted)
                self._dirty = True
                return
            have = set(self._index.get_ids_list())
            self._live = have & wanted   # ids deleted in the file are never wanted again (ids are not reused)
            for stale in have - wanted:
                self._mark_deleted(stale)
            missing = sorted(wanted - have)
            if missing:
                self._add_from(missing, vectors_for)
                self._live.update(missing)
            self._dirty = bool(missing) or bool(have - wanted)

    def _check_file(self) -> str:
        if not self.path.exists():
            return "no vector file"
        try:
            fields = self.sum_path.read_text(encoding="utf-8").split("\t")
        except OSError:
            return "the vector file has no valid checksum"
        if len(fields) == 4:
            return f"the vector file was built with older parameters (now M={M})"
        try:
            size, digest, model, dim, links = fields
        except ValueError:
            return "the vector file has no valid checksum"
        if model != self.model_id or int(dim) != self.dim:
            return "the vector file is for another embedding model"
        if links != str(M):
            return f"the vector file was built with M={links} (now M={M})"
        if self.path.stat().st_size != int(size) or _digest(self.path) != digest:
            return "the vector file is damaged (checksum mismatch)"
        return ""

    def _new(self, capacity: int) -> None:
        index = self._hnswlib.Index(space="cosine", dim=self.dim)
        index.init_index(max_elements=max(1024, int(capacity * 1.25)), ef_construction=EF_CONSTRUCTION, M=M)
        index.set_ef(self.ef or EF_SEARCH)
        index.set_num_threads(1)   # two shared cores: never take both from the foreground
        self._index = index

    def _add_from(self, ids: list[int], vectors_for) -> None:
        for start in range(0, len(ids), 2048):
            chunk = list(vectors_for(ids[start:start + 2048]))
            if chunk:
                self._add([i for i, _ in chunk], np.stack([v for _, v in chunk]))

    # ----- changes -----------------------------------------------------------------------------
    def _add(self, ids: list[int], vectors: np.ndarray) -> None:
        needed = self._index.get_current_count() + len(ids)
        if needed > self._index.get_max_elements():
            self._index.resize_index(max(needed, int(self._index.get_max_elements() * 1.5)))
        self._index.add_items(vectors, np.asarray(ids, dtype=np.int64), num_threads=1)

    def add(self, ids: list[int], vectors: np.ndarray) -> None:
        if not ids:
            return
        with self.lock:
            self._add(ids, vectors)
            self._live.update(ids)
            self._dirty = True

    def _mark_deleted(self, label: int) -> None:
        try:
            self._index.mark_deleted(label)
        except RuntimeError:
            pass   # already deleted

    def delete(self, ids: Iterable[int]) -> None:
        with self.lock:
            for label in ids:
                if label in self._live:
                    self._mark_deleted(label)
                    self._live.discard(label)
                    self._dirty = True

    # ----- queries -----------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._live)

    def query(self, vector: np.ndarray, k: int, allowed: set[int] | None = None) -> list[tuple[int, float]]:
        """(id, cosine similarity) best first; `allowed`: only these ids (a search filter)."""
        with self.lock:
            k = min(k, len(self._live) if allowed is None else len(allowed))
            if k <= 0 or self._index is None:
                return []
            self._index.set_ef(max(self.ef or ef_for(len(self._live)), k))
            keep = allowed.__contains__ if allowed is not None else None
            while k > 0:
                try:
                    labels, distances = self._index.knn_query(vector.reshape(1, -1), k=k, filter=keep)
                    break
                except RuntimeError:   # fewer reachable live elements than k (many deletions)
                    k //= 2
            else:
                return []
            return [(int(label), 1.0 - float(dist)) for label, dist in zip(labels[0], distances[0])]

    # ----- persistence -------------------------------------------------------------------------
    def save(self) -> None:
        with self.lock:
            if not self._dirty or self._index is None:
                return
            tmp = checked_path(self.path.with_name(self.path.name + ".tmp"))   # no link in .reverie/ is written through
            self._index.save_index(str(tmp))
            os.replace(tmp, self.path)
            sum_tmp = checked_path(self.sum_path.with_name(self.sum_path.name + ".tmp"))
            sum_tmp.write_text(f"{self.path.stat().st_size}\t{_digest(self.path)}\t{self.model_id}\t{self.dim}\t{M}",
                               encoding="utf-8")
            os.replace(sum_tmp, self.sum_path)
            self._dirty = False

    def remove_files(self) -> None:
        for path in (self.path, self.sum_path):
            try:
                path.unlink()
            except FileNotFoundError:
                pass
