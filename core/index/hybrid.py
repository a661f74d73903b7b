"""Fusing keyword and vector results, recency, near-duplicate collapse.

Fusion is weighted reciprocal rank fusion: a line scores
    w_fts / (k0 + rank in keyword results) + w_vec / (k0 + rank in vector results)
(rank 1 is the best; absent from a list adds nothing). Ranks, not raw scores:
BM25 and cosine live on unrelated scales that shift with every query (BM25
grows with query length and with the rarity of its words), and rank fusion
needs no per-corpus calibration. k0 = 10 and w_vec = 0.6 were chosen with
`reverie bench locomo` on the development split (categories 1-4, recall@10):
keyword 0.769, vector 0.569, RRF k0=60 w=1 0.733, k0=10 w=0.6 0.807; every
k0 in 5..20 with w_vec in 0.5..0.7 gave 0.79-0.81, so the choice is not a
knife edge. A small k0 lets the top few of each list dominate: either list's
best line is usually right, its 30th rarely.

Recency (optional, `search.recency_half_life_days` > 0): a line dated d days
before the newest dated line keeps (1 - RECENCY_SHARE) + RECENCY_SHARE * 2^(-d/h)
of its score; undated lines (MEMORY.md) are not penalised: curated memory is
current by definition.

Near-duplicate collapse: a hit whose text is the same as a better hit's up to
case, spacing and punctuation, or whose vector has cosine >= the threshold with
a better hit's, is dropped (the same fact flushed twice should not fill the
page).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

RECENCY_SHARE = 0.5
_NORMAL = re.compile(r"[\W_]+", re.UNICODE)


@dataclass(frozen=True)
class Tuning:
    """Search-time knobs; defaults are the measured best (bench locomo, dev split)."""

    fts_context_weight: float = 0.5     # bm25 weight of the context column (the line's own words: 1.0)
    rrf_k: float = 10.0
    w_fts: float = 1.0
    w_vec: float = 0.6
    candidates: int = 100               # per list, before fusion
    collapse: bool = True
    near_duplicate_cosine: float = 0.95


def fuse(fts: list[tuple[int, float]], vec: list[tuple[int, float]], tuning: Tuning) -> list[tuple[int, float, tuple[str, ...]]]:
    """(id, fused score, which lists found it) best first."""
    scores: dict[int, float] = {}
    found: dict[int, list[str]] = {}
    for name, hits, weight in (("fts", fts, tuning.w_fts), ("vector", vec, tuning.w_vec)):
        for rank, (row_id, _score) in enumerate(hits, start=1):
            scores[row_id] = scores.get(row_id, 0.0) + weight / (tuning.rrf_k + rank)
            found.setdefault(row_id, []).append(name)
    order = sorted(scores, key=lambda i: -scores[i])
    return [(i, scores[i], tuple(found[i])) for i in order]


def recency_factor(day: int, newest: int, half_life_days: float) -> float:
    if half_life_days <= 0 or day <= 0 or newest <= 0:
        return 1.0
    age = max(0, newest - day)
    return (1.0 - RECENCY_SHARE) + RECENCY_SHARE * 0.5 ** (age / half_life_days)


def normal_text(text: str) -> str:
    return _NORMAL.sub(" ", text.lower()).strip()


def collapse(ordered: list[int], texts: dict[int, str], vectors: dict[int, np.ndarray], threshold: float,
             keep: int) -> list[int]:
    """The first `keep` ids of `ordered` with near-duplicates of better ones removed."""
    kept: list[int] = []
    seen_text: set[str] = set()
    dim = next((len(v) for v in vectors.values()), 0)
    kept_vectors = np.zeros((keep, dim), dtype=np.float32)
    n_vectors = 0
    for row_id in ordered:
        norm = normal_text(texts.get(row_id, ""))
        if norm and norm in seen_text:
            continue
        vector = vectors.get(row_id)
        if vector is not None and n_vectors and float(np.max(kept_vectors[:n_vectors] @ vector)) >= threshold:
            continue
        kept.append(row_id)
        seen_text.add(norm)
        if vector is not None:
            kept_vectors[n_vectors] = vector
            n_vectors += 1
        if len(kept) >= keep:
            break
    return kept
