"""What search looks up about candidate rows beyond their text: their section, their stored vectors."""
from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

from core.index.db import HEADING_CONDITION

if TYPE_CHECKING:
    import numpy as np


def section_of(conn: sqlite3.Connection, ids: list[int]) -> dict[int, tuple[str, int]]:
    """Row id -> (path, line of the `##`+ heading it sits under), for rows under one.

    Only explicit sections group lines (a daily log's `## Memory Flush — ...`
    or `## Conversation at ...`, a MEMORY.md topic): a file without headings
    is a list of notes, not evidence that its lines are one conversation.
    One lookup of the heading index (db.py, lines_headings) per distinct
    section among the candidates, never a scan of whole files.
    """
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    by_path: dict[str, list[tuple[int, int]]] = {}
    for row_id, path, line in conn.execute(f"SELECT id, path, line FROM lines WHERE id IN ({marks})", ids):
        by_path.setdefault(path, []).append((line, row_id))
    out = {}
    for path, places in by_path.items():
        places.sort(reverse=True)
        heading = None        # the heading found for the lines above it, and not below
        for line, row_id in places:
            if heading is None or line < heading:
                found = conn.execute(
                    "SELECT line FROM lines WHERE path = ? AND line <= ? AND (" + HEADING_CONDITION + ") "
                    "ORDER BY line DESC LIMIT 1", (path, line)).fetchone()
                heading = found[0] if found else 0
            if heading:
                out[row_id] = (path, heading)
    return out


def vectors_of(conn: sqlite3.Connection, hashes: list[str]) -> dict[str, np.ndarray]:
    """Embedded-text hash -> its cached vector, for those that have one."""
    if not hashes:
        return {}
    distinct = list(dict.fromkeys(hashes))
    marks = ",".join("?" * len(distinct))
    import numpy as np

    return {h: np.frombuffer(v, dtype=np.float32) for h, v in conn.execute(
        f"SELECT hash, vector FROM embeddings WHERE hash IN ({marks})", distinct)}
