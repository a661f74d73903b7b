"""Curated memory before raw logs: a prior on where an answer lives.

MEMORY.md, the OpenClaw files (USER.md, TOOLS.md, AGENTS.md ...) and undated notes under memory/
are what the agent or the person kept on purpose: the distilled fact (a decision-table row, "| date |
Removed the second vector store (redundant) |"), where the dated logs hold the talk around it, often many lines that repeat the
question's words without answering it. So after fusion a curated line gains `boost` of its score
(Tuning.curated_boost). Nothing here reads the query: it is a prior on the file, not on the words.
Benchmarks whose workspaces hold only logs (LoCoMo, LongMemEval) are unchanged by construction; the
real-workspace question set measures it (docs/benchmarks.md).

A heading line names a topic and rarely answers: holding the question's words in few others, it
outranked the line under it that does ("## Backup target" above "- backup target is now the NAS").
So a `##`+ heading's score is multiplied by `weight` (Tuning.heading_weight, 0.5): it still shows
when nothing else holds the words. Measured (docs/benchmarks.md): 18% of keyword mode's top-5 slots
on the real questions' tune half were headings and none answered; LoCoMo and LongMemEval (logs
without headings) and the busy workspace are unchanged.
"""
from __future__ import annotations

import sqlite3

from core.index.db import HEADING_CONDITION
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



def weigh_headings(conn: sqlite3.Connection, ranked: list[tuple[int, float]], weight: float) -> list[tuple[int, float]]:
    """`ranked` (id, score) with `##`+ heading lines' scores multiplied by `weight`, best first again."""
    if weight == 1.0 or not ranked:
        return ranked
    ids = [i for i, _ in ranked]
    marks = ",".join("?" * len(ids))
    headings = {i for (i,) in conn.execute(f"SELECT id FROM lines WHERE id IN ({marks}) AND ({HEADING_CONDITION})", ids)}
    if not headings:
        return ranked
    return sorted(((i, s * weight if i in headings else s) for i, s in ranked), key=lambda item: -item[1])
