"""Priors on where an answer lives: curated memory before raw logs, a line before its heading.

MEMORY.md, the OpenClaw files (USER.md, TOOLS.md, AGENTS.md ...) and undated notes under memory/
are what the agent or the person kept on purpose: the distilled fact (a decision-table row, "| date |
Removed the second vector store (redundant) |"), where the dated logs hold the talk around it, often many lines that repeat the
question's words without answering it. So after fusion a curated line gains `boost` of its score
(Tuning.curated_boost). Nothing here reads the query: it is a prior on the file, not on the words.
Benchmarks whose workspaces hold only logs (LoCoMo, LongMemEval) are unchanged by construction; the
real-workspace question set measures it (docs/benchmarks.md).

A heading line names a topic and rarely answers: holding the question's words in few others, it
outranked the line under it that does ("## Backup target" above "- backup target is now the NAS").
So a `##`+ heading's score is multiplied by Tuning.heading_weight (0.5): it still shows
when nothing else holds the words. Measured (docs/benchmarks.md): 18% of keyword mode's top-5 slots
on the real questions' tune half were headings and none answered; LoCoMo and LongMemEval (logs
without headings) and the busy workspace are unchanged.
"""
from __future__ import annotations

import sqlite3

from core.index.db import HEADING_CONDITION
from core.index.filters import kind_of


def apply_priors(conn: sqlite3.Connection, ranked: list[tuple[int, float]], curated_boost: float,
                 heading_weight: float = 1.0) -> list[tuple[int, float]]:
    """`ranked` (id, score) with curated lines' scores multiplied by 1 + curated_boost and heading lines'
    by heading_weight, best first again (one lookup of the candidates)."""
    if not ranked or (curated_boost <= 0 and heading_weight == 1.0):
        return ranked
    ids = [i for i, _ in ranked]
    marks = ",".join("?" * len(ids))
    factor = {}
    for i, path, heading in conn.execute(f"SELECT id, path, ({HEADING_CONDITION}) FROM lines WHERE id IN ({marks})", ids):
        f = (1.0 + curated_boost if curated_boost > 0 and kind_of(path) == "memory" else 1.0) * \
            (heading_weight if heading else 1.0)
        if f != 1.0:
            factor[i] = f
    if not factor:
        return ranked
    return sorted(((i, s * factor.get(i, 1.0)) for i, s in ranked), key=lambda item: -item[1])
