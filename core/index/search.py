"""SearchIndex: the one search index the app, the CLI, the MCP server and the benchmarks use.

    index = SearchIndex(root, root / ".reverie/index.db", settings.search)
    index.sync()                                  # incremental: changed files only
    index.search("tea or coffee", k=10)           # SearchResults: .hits (counted), .nearby (context), .mode
    index.reindex_file("memory/2026-11-30.md")    # after an append
    index.close()

Modes: "keyword", "meaning", "hybrid" (default: SearchSettings.default_mode; the
older names "fts" and "vector" are accepted). Every front end (the view, the
CLI, the JSON, the MCP tool) shows these same names.
Keyword search answers from SQLite alone, at once; vectors fill in behind, in
a background thread (worker.py). A meaning or hybrid search while embedding is
still going answers from what has vectors and says how many lines are pending.
If the embedding model cannot load, meaning and hybrid searches answer with
keyword results (`mode` says "keyword") and status() names the problem.

Each hit says why it matched (`match`): "words" (the line holds query words,
listed in `words`), "meaning" (its vector is close: `similarity`, the cosine),
"both", or "nearby" (keyword search found it only through the words of its
neighbouring lines, date or heading). In keyword mode a nearby line never
outranks one that holds words.
Meaning has a floor (Tuning.min_similarity, and the higher min_similarity_alone
when no word of the query occurs in the index): a query nothing answers gets no
hits, not the nearest page of noise; headings alone are never meaning hits.
Filters (filters.py) narrow a search by kind of file and date range.

One hit per (path, line): a long line is indexed as several windows
(lines.py) and shows as one hit, from its best window (text and snippet of
that window).

Snippets mark matched words with « and » (see fts.py).
"""
from __future__ import annotations

import dataclasses
import threading
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING

from core.cancel import Cancelled, CancelToken
from core.config import SearchSettings
from core.errors import CoreError
from core.index import cjk, fts
from core.index.db import Database
from core.index.filters import SearchFilter, kind_of
from core.index.hybrid import Tuning, collapse, fuse, recency_factor, section_rerank
from core.index.labels import lift_named_speakers
from core.index.priors import apply_priors
from core.index.lines import IndexOptions
from core.index.matching import is_heading, label, tier
from core.index.results import (ALIASES, MODES, IndexStatus, SearchHit, SearchModeError, SearchResults,  # noqa: F401
                                canonical_mode)
from core.index.query import expand, joined_words
from core.index.rowdata import section_of, vectors_of
from core.index.sync import NOT_EMBEDDED, Progress, Syncer, SyncReport
from core.index.worker import EmbeddingWorker

if TYPE_CHECKING:     # numpy is imported where vectors are used: keyword search never loads it
    import numpy as np

MAX_K = 1000
MAX_QUERY_EMBED_CHARS = 2_000
ROWS_VERSION = "7"   # bump when lines.py changes what a row carries: every file is re-derived


class SearchIndex:
    def __init__(self, root: Path, db_path: Path, settings: SearchSettings | None = None, *, embedder=None,
                 background: bool = True, options: IndexOptions | None = None, tuning: Tuning | None = None):
        self.root = Path(root)
        self.settings = settings or SearchSettings()
        self.options = options or IndexOptions()
        self.tuning = tuning or Tuning()
        self.db = Database(Path(db_path))
        self._problems: list[str] = []
        self._query_cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._query_lock = threading.Lock()
        self._background: tuple[str, float] | None = None     # (model id, its background cosine)
        self._closed = False
        if embedder is False:      # keyword search only (benchmarks of FTS, tools that never embed)
            embedder = None
        elif embedder is None:
            from core.index.embedder import EmbedderError
            from core.index.embedding import default_embedder
            try:
                embedder = default_embedder(self.settings.embedding_model)
            except EmbedderError as exc:
                self._problems.append(str(exc))
                embedder = None
        self.embedder = embedder
        self._check_versions()
        vector_path = Path(db_path).with_name(Path(db_path).stem + ".hnsw")
        self.worker = EmbeddingWorker(self.db, embedder, vector_path, background=background)
        self.syncer = Syncer(self.root, self.db, self.options, on_deleted=self.worker.delete,
                             on_pending=self.worker.wake)
        self.syncer.large_file_bytes = self.settings.large_file_bytes
        self.worker.start()

    def _check_versions(self) -> None:
        """A new embedding model invalidates every vector; a new row format re-derives every file."""
        model = self.embedder.model_id if self.embedder is not None else ""
        rows = f"{ROWS_VERSION}:{dataclasses.astuple(self.options)}"
        old_model, old_rows = self.db.get_meta("embedding_model", None), self.db.get_meta("rows_version", None)
        with self.db.write() as conn:
            if model and old_model != model:
                conn.execute("DELETE FROM embeddings")
                conn.execute("UPDATE lines SET vec = 0 WHERE vec = 1")   # 2 stays: never embedded (large files, no content)
                conn.execute("DELETE FROM meta WHERE key = 'embedding_dim'")
                self.db.set_meta(conn, "embedding_model", model)
                for suffix in (".hnsw", ".hnsw.sum"):
                    self.db.path.with_name(self.db.path.stem + suffix).unlink(missing_ok=True)
            if old_rows != rows:
                conn.execute("UPDATE files SET hash = '', size = -1")
                self.db.set_meta(conn, "rows_version", rows)

    # ----- keeping up with the files ---------------------------------------------------------------
    def sync(self, progress: Progress | None = None, *, in_child: bool = False, cancel=None,
             nice: int = 10) -> SyncReport:
        """Bring the index up to date with the files. `in_child`: do the work in a child process
        at `nice` (the desktop app: its window must not wait behind this on the GIL), cancellable
        with `cancel` between files."""
        report = self._sync_in_child(progress, cancel, nice) if in_child else self.syncer.sync(progress)
        if not self.worker.background:
            self.worker.run_until_idle()
        return report

    def _sync_in_child(self, progress: Progress | None, cancel, nice: int) -> SyncReport:
        from core.jobproc import run_in_child

        relay = (lambda value: progress(*value)) if progress is not None else None
        args = {"root": str(self.root), "db": str(self.db.path), "options": self.options}
        cancel = cancel or CancelToken()
        outcome = run_in_child("core.index.sync:sync_job", args, progress=relay, cancel=cancel, nice=nice,
                               label="index")
        if outcome["deleted"]:
            with self.db.write_lock:     # the lock the embedding worker adds vectors under
                self.worker.delete(outcome["deleted"])
        if outcome["pending"]:
            self.worker.wake()
        if outcome["error"] is not None:
            raise outcome["error"]
        if cancel.cancelled:
            # The child finished before the cancel reached it; the caller still asked to stop,
            # as an in-process sync's progress raising would have.
            raise Cancelled(cancel.reason or "cancelled")
        return outcome["report"]

    def reindex_file(self, rel_path: str) -> SyncReport:
        report = self.syncer.reindex_file(rel_path)
        if report.rows_written and not self.worker.background:
            self.worker.run_until_idle()
        return report

    def wait_embeddings(self, timeout: float | None = None) -> bool:
        return self.worker.wait(timeout)

    def status(self) -> IndexStatus:
        conn = self.db.conn()
        files = conn.execute("SELECT count(*) FROM files").fetchone()[0]
        lines = conn.execute("SELECT count(*) FROM lines").fetchone()[0]
        not_embedded = conn.execute("SELECT count(*) FROM lines WHERE vec = ?", (NOT_EMBEDDED,)).fetchone()[0]
        problems = list(self._problems)
        problems += [p for (text,) in conn.execute("SELECT problem FROM files WHERE problem != ''")
                     for p in text.split("\n")]
        if self.worker.error:
            problems.append(self.worker.error)
        vectors = self.worker.vectors
        if vectors is not None and vectors.rebuilt_reason:
            problems.append(f"vector index rebuilt from the database: {vectors.rebuilt_reason}")
        return IndexStatus(files=files, lines=lines, pending_embeddings=self.worker.pending(), problems=problems,
                           vectors=len(vectors) if vectors is not None else 0,
                           embedding_model=self.embedder.model_id if self.embedder is not None else "",
                           not_embedded=not_embedded)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.worker.stop()
        self.db.close()

    def __enter__(self) -> "SearchIndex":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ----- searching -----------------------------------------------------------------------------
    def search(self, query: str, *, k: int = 10, mode: str | None = None, kinds=None, since=None, until=None,
               scope: SearchFilter | None = None) -> SearchResults:
        """The best k lines for `query`; `kinds`, `since`, `until` (or a ready `scope`) narrow it (filters.py)."""
        mode = self._mode(mode)
        scope = scope if scope is not None else SearchFilter.of(kinds, since, until)
        where, params = scope.sql()
        query = str(query if query is not None else "")
        k = max(1, min(int(k), MAX_K))
        conn = self.db.conn()
        parsed = fts.parse_query(query, self.tuning.request_words)
        if not parsed.empty:
            parsed = expand(conn, parsed)
        want = max(self.tuning.candidates, k * 2)
        sections = self.tuning.section_boost > 0 or self.tuning.section_decay < 1
        # A single list's own ranking needs no wide pool; re-ranking by section needs some room
        # below the top k, not all `candidates` (keyword-only p95 at 100k lines 11.9 -> 11.2 ms CPU).
        few = min(want, k * 5) if sections else k * 2
        keyword: list[tuple[int, float]] = []
        semantic: list[tuple[int, float]] = []
        vector = None
        if mode in ("keyword", "hybrid"):
            keyword = fts.search(conn, parsed, want if mode == "hybrid" else few, self.tuning.fts_context_weight,
                                 where, params)
        floor = self.tuning.min_similarity
        if mode in ("meaning", "hybrid"):
            vector = self._query_vector(query)
            if vector is None:
                mode = "keyword"
                if not keyword:
                    keyword = fts.search(conn, parsed, few, self.tuning.fts_context_weight, where, params)
            else:
                if self._gibberish(conn, parsed, bool(keyword)):
                    floor = max(floor, self.tuning.min_similarity_alone)
                floor = self._model_floor(floor)
                semantic = self._semantic(vector, want, where, params, floor)
        held: dict[int, tuple[str, ...]] = {}
        tiers: dict[int, int] = {}
        if mode == "hybrid":
            ranked = [(i, s) for i, s, _ in fuse(keyword, semantic, self.tuning)]
            if self.tuning.nearby_last:
                close = {i for i, _ in semantic}
                pool = [i for i, _ in ranked[: max(k * 3, 30)] if i not in close]
                held = fts.held(conn, parsed, pool)
                tiers = {i: tier(held.get(i, ())) for i in pool}
        elif mode == "keyword":
            ranked = keyword
            held = fts.held(conn, parsed, [i for i, _ in ranked])
            tiers = {i: tier(held.get(i, ())) for i, _ in ranked}
        else:
            ranked = semantic
        ranked = lift_named_speakers(conn, ranked, parsed, held, {i for i, _ in semantic},
                                     self.tuning.label_boost)
        ranked = apply_priors(conn, ranked, self.tuning.curated_boost, self.tuning.heading_weight)
        if sections:
            ranked = section_rerank(ranked, section_of(self.db.conn(), [i for i, _ in ranked]), self.tuning.section_boost,
                                    self.tuning.section_decay, self.tuning.section_free)
        hits = self._hits(ranked, parsed, k, vector, held, tiers, floor)
        return SearchResults(ranked=hits, pending_embeddings=self.worker.pending(fresh=False), mode=mode, query=query,
                             via="model" if vector is not None else "")

    def _mode(self, mode: str | None) -> str:
        return canonical_mode(mode, self.settings.default_mode)

    def _gibberish(self, conn, parsed: fts.Query, found: bool) -> bool:
        """No word of the query is in the index, nor a word the model knows ("zxqvbnm", "qqqq").

        Such a query is near every line a little (cosine 0.2-0.42 on the demo), so meaning alone
        must then be strong to count. A paraphrase in other words ("the pet's name" for "the dog
        is called Biscuit") is not gibberish: the model knows its words. CJK text is read by the
        model itself (no word list to ask).
        """
        if found or parsed.empty or fts.known(conn, parsed):
            return False
        from core.index.embedder import model_vocabulary

        vocabulary = model_vocabulary(self.settings.embedding_model)
        for word in parsed.words:
            if cjk.has_cjk(word) or not vocabulary or any(part in vocabulary for part in word.split("-")):
                return False
        return True

    def _model_floor(self, floor: float) -> float:
        """A floor measured on MiniLM's scale, moved to this index's model (calibration.py)."""
        from core.index.calibration import background, model_floor
        from core.index.embedder import BILINGUAL_MODEL, DEFAULT_MODEL

        model = self.embedder.model_id
        if model.split("@", 1)[0] in (DEFAULT_MODEL, BILINGUAL_MODEL):
            return floor                      # the scale the floors were measured on (bilingual.py: both halves)
        if self._background is None or self._background[0] != model:
            stored = self.db.get_meta("embedding_background", "")
            name, _, value = stored.rpartition("\t")
            if name == model and value:
                self._background = (model, float(value))
            else:
                self._background = (model, background(self.embedder))
                with self.db.write() as conn:
                    self.db.set_meta(conn, "embedding_background", f"{model}\t{self._background[1]:.6f}")
        return model_floor(floor, self._background[1])

    def _semantic(self, vector: np.ndarray, want: int, where: str, params: tuple,
                  floor: float) -> list[tuple[int, float]]:
        """The vector list: nearest lines at or above the meaning floor, headings left out, filter applied."""
        vectors = self.worker.open_vectors()
        if vectors is None:
            return []
        allowed = None
        if where:
            allowed = {i for (i,) in self.db.conn().execute(f"SELECT l.id FROM lines l WHERE l.vec = 1 AND {where}",
                                                           params)}
            if not allowed:
                return []
        found = [(i, s) for i, s in vectors.query(vector, want, allowed) if s >= floor]
        if not found:
            return []
        marks = ",".join("?" * len(found))
        headings = {i for i, text in self.db.conn().execute(f"SELECT id, text FROM lines WHERE id IN ({marks})",
                                                            [i for i, _ in found]) if is_heading(text)}
        return [(i, s) for i, s in found if i not in headings]

    def _query_vector(self, query: str) -> np.ndarray | None:
        if self.embedder is None or self.worker.error:
            return None
        text = query[:MAX_QUERY_EMBED_CHARS]
        with self._query_lock:
            cached = self._query_cache.get(text)
            if cached is not None:
                self._query_cache.move_to_end(text)
                return cached
        import numpy as np

        from core.index.embedder import embed_queries

        try:
            vector = np.asarray(embed_queries(self.embedder, [text])[0], dtype=np.float32)
        except CoreError as exc:
            if str(exc) not in self._problems:
                self._problems.append(str(exc))
            return None
        with self._query_lock:
            self._query_cache[text] = vector
            while len(self._query_cache) > 256:
                self._query_cache.popitem(last=False)
        return vector

    def _hits(self, ranked: list[tuple[int, float]], parsed: fts.Query, k: int, vector: np.ndarray | None,
              held: dict[int, tuple[str, ...]], tiers: dict[int, int], floor: float) -> list[SearchHit]:
        if not ranked:
            return []
        pool = ranked[: max(k * 3, 30)]
        ids = [i for i, _ in pool]
        marks = ",".join("?" * len(ids))
        rows = {r[0]: r for r in self.db.conn().execute(
            f"SELECT id, path, line, text, sources, day, ehash FROM lines WHERE id IN ({marks})", ids)}
        scores = dict(pool)
        half_life = self.settings.recency_half_life_days
        if half_life > 0:
            newest = self.db.conn().execute("SELECT max(day) FROM lines").fetchone()[0] or 0
            scores = {i: s * recency_factor(rows[i][5], newest, half_life) for i, s in scores.items() if i in rows}
        # Keyword mode: lines holding the words first, nearby ones after (tiers); within a tier, by score.
        order = sorted((i for i in ids if i in rows), key=lambda i: (tiers.get(i, 0), -scores[i]))
        seen: set[tuple[str, int]] = set()   # one hit per line: a long line's windows share it (lines.py)
        order = [i for i in order if not ((rows[i][1], rows[i][2]) in seen or seen.add((rows[i][1], rows[i][2])))]
        # Keyword mode reads no vectors: near-duplicates go by their text alone (and numpy stays unloaded).
        wanted = vector is not None
        vectors = vectors_of(self.db.conn(), [rows[i][6] for i in order]) if wanted else {}
        if self.tuning.collapse:
            order = collapse(order, {i: rows[i][3] for i in order},
                             {i: vectors[rows[i][6]] for i in order if rows[i][6] in vectors},
                             self.tuning.near_duplicate_cosine, k)
        order = order[:k]
        missing = [i for i in order if i not in held]
        if missing:
            held = {**held, **fts.held(self.db.conn(), parsed, missing)}
        hits = []
        for row_id in order:
            _, path, line, text, sources, _day, ehash = rows[row_id]
            similarity = float(vectors[ehash] @ vector) if vector is not None and ehash in vectors else None
            words = joined_words(held.get(row_id, ()))
            hits.append(SearchHit(path=path, line=line, text=text, score=float(scores[row_id]),
                                  snippet=fts.snippet(text, parsed),
                                  sources=tuple(sources.split()) if sources else (),
                                  match=label(words, similarity, floor), words=words,
                                  similarity=similarity, kind=kind_of(path)))
        return hits
