"""Curated memory before raw logs: a prior on where an answer lives.

MEMORY.md, the OpenClaw files (USER.md, TOOLS.md, AGENTS.md ...) and undated notes under memory/
are what the agent or the person kept on purpose: the distilled fact ("| 2026-03-09 | Removed Qdrant
(redundant ...) |"), where the dated logs hold the talk around it, often many lines that repeat the
question's words without answering it. So after fusion a curated line gains `boost` of its score
(Tuning.curated_boost). Nothing here reads the query: it is a prior on the file, not on the words.
Benchmarks whose workspaces hold only logs (LoCoMo, LongMemEval) are unchanged by construction; the
real-workspace question set measures it (docs/benchmarks.md).
"""
from __future__ import annotations

import sqlite3

from core.index.filters import kind_of


def lift_curated(conn: sqlite3.Connection, ranked: list[tuple[int, float]], boost: float) -> list[tuple[int, float]]:
    """`ranked` (id, score) with curated lines' scores multiplied by 1 + boost, best first again."""
    if boost <= 0 or not ranked:
        return ranked
    ids = [i for i, _ in ranked]
    marks = ",".join("?" * len(ids))
    curated = {i for i, path in conn.execute(f"SELECT id, path FROM lines WHERE id IN ({marks})", ids)
               if kind_of(path) == "memory"}
    if not curated:
        return ranked
    lifted = [(i, s * (1.0 + boost) if i in curated else s) for i, s in ranked]
    return sorted(lifted, key=lambda item: -item[1])


COVERAGE_TOP = 30       # candidates re-scored by coverage: the page and some room below it
_DF_CAP = 5_000         # document frequency counted no further: rarer than this is what matters


def lift_coverage(conn: sqlite3.Connection, ranked: list[tuple[int, float]], query, held: dict[int, tuple[str, ...]],
                  beta: float) -> list[tuple[int, float]]:
    """The top COVERAGE_TOP candidates re-scored by how much of the query's rarity their own line holds.

    coverage = sum of idf over the query words the line itself holds / sum over all its words; the score
    is multiplied by 1 + beta * coverage. Fusion and the context column reward a line whose neighbours
    say the words; this rewards the line that says them."""
    import math

    from core.index import fts

    if beta <= 0 or not ranked or query.empty:
        return ranked
    top = ranked[:COVERAGE_TOP]
    ids = [i for i, _ in top]
    missing = [i for i in ids if i not in held]
    if missing:
        held = {**held, **fts.held(conn, query, missing)}
    total = conn.execute("SELECT max(id) FROM lines").fetchone()[0] or 1
    idf = {}
    for group in query.groups:
        df = conn.execute("SELECT count(*) FROM (SELECT 1 FROM lines_fts WHERE lines_fts MATCH ? LIMIT ?)",
                          ("{body}: " + group.held, _DF_CAP)).fetchone()[0]
        idf[group.word] = math.log(1.0 + total / (1.0 + df))
    whole = sum(idf.values()) or 1.0
    scored = [(i, s * (1.0 + beta * sum(idf.get(w, 0.0) for w in held.get(i, ())) / whole)) for i, s in top]
    return sorted(scored, key=lambda item: -item[1]) + ranked[COVERAGE_TOP:]
