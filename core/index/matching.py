"""Why a line matched a query, and what that means for its rank.

A hit matched by "words" when its own line holds words of the query (after the
index's stemming, fts.held), by "meaning" when its vector's cosine with the
query's reaches the floor (Tuning.min_similarity), by "both", or "nearby" when
keyword search found it only through its context (neighbouring lines, date,
heading: lines.py). In keyword mode the tier orders hits before their score:
lines holding every word, then lines holding some, then nearby ones, so a line
found through its neighbours never outranks one that says the words.
"""
from __future__ import annotations

import re

from core.index.query import Query

_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")

WORDS, MEANING, BOTH, NEARBY = "words", "meaning", "both", "nearby"


def is_heading(text: str) -> bool:
    """A markdown heading line: it names a topic, it does not answer anything by itself."""
    return _HEADING.match(text) is not None


def tier(words: tuple[str, ...], query: Query) -> int:
    """0: the line holds every word of the query; 1: some; 2: none (found nearby)."""
    if not words:
        return 2
    return 0 if len(set(words)) >= len(query.groups) else 1


def label(words: tuple[str, ...], similarity: float | None, floor: float) -> str:
    meaning = similarity is not None and similarity >= floor
    if words:
        return BOTH if meaning else WORDS
    return MEANING if meaning else NEARBY


def explain(hit) -> str:
    """Why a hit matched, as the CLI and the search view say it: "words: tea", "meaning 0.52", "both", "nearby"."""
    similarity = f" {hit.similarity:.2f}" if hit.similarity is not None else ""
    if hit.match == BOTH:
        return f"words: {', '.join(hit.words)} + meaning{similarity}"
    if hit.match == WORDS:
        return f"words: {', '.join(hit.words)}"
    if hit.match == MEANING:
        return f"meaning{similarity}"
    return "matched nearby"
