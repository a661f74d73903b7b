"""Why a line matched a query, and what that means for its rank.

A hit matched by "words" when its own line holds words of the query (after the
index's stemming, fts.held), by "meaning" when its vector's cosine with the
query's reaches the floor (Tuning.min_similarity), by "both", or "nearby" when
keyword search found it only through its context (neighbouring lines, date,
heading: lines.py). In keyword mode the tier orders hits before their score:
lines holding words of the query first, nearby ones after, so a line found
through its neighbours never outranks one that says the words. Among the
lines that hold words, BM25 (more of the rarer words) and section diversity
(hybrid.py) decide, as before.
"""
from __future__ import annotations

import re

_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")

WORDS, MEANING, BOTH, NEARBY = "words", "meaning", "both", "nearby"


def is_heading(text: str) -> bool:
    """A markdown heading line: it names a topic, it does not answer anything by itself."""
    return _HEADING.match(text) is not None


def tier(words: tuple[str, ...]) -> int:
    """0: the line holds words of the query; 1: it holds none (found nearby)."""
    return 0 if words else 1


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
