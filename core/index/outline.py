"""The topic an OpenClaw hook writes into a log's file name, as words for its lines' keyword context.

OpenClaw's session hooks name a log by its date and what it was about
(`memory/2026-03-14-mail-access.md`, `memory/2026-03-28-league-table.md`). A line deep in
such a file ("- Authentication: failing with ...") is what a question about that topic asks for, and
without the name's words only its neighbours could say so. Context only (lines.py): the embedded text
is unchanged, so no vector is recomputed.

Measured and not kept: the whole heading path (the `#` title and every parent heading above a
line's own section) in the context as well. On the real-workspace questions (`tune` half) it cost
Chinese keyword search 0.682 -> 0.545 hit@5: a Chinese heading's bigrams, carried by every line of
its subtree, drown the few a question shares with the answering line (docs/benchmarks.md).
"""
from __future__ import annotations

import re

_DATE_HEAD = re.compile(r"^\d{4}-?\d{2}-?\d{2}(?:[-_T]?\d{2}:?\d{2}(?::?\d{2})?)?")
_SEPARATORS = re.compile(r"[-_.\s]+")
_LETTER = re.compile(r"[^\W\d_]", re.UNICODE)


def file_topic(rel: str) -> str:
    """The words of a file's name under memory/ that say what it is about ("mail access"), or ""."""
    if not rel.startswith("memory/"):
        return ""                      # MEMORY.md, TOOLS.md ...: their name says nothing about a line
    stem = rel.rsplit("/", 1)[-1]
    stem = stem[:-3] if stem.lower().endswith(".md") else stem
    stem = _DATE_HEAD.sub("", stem)
    return " ".join(w for w in _SEPARATORS.split(stem) if _LETTER.search(w))
