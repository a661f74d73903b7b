"""Speaker labels: a query that names who said a line ranks that person's lines higher.

Conversation logs, session logs and many notes open a line with a short label
and a colon: who said it ("- [1:56 pm] Melanie: ...", "user: ...") or what it
is about ("- Editor: vim"). A question that names the label asks for those
lines: "What has Melanie painted?" is answered by what Melanie said, not by
the lines that address her ("Wow, Melanie! The colours ..."), though those
hold both words too. Such a line gains Tuning.label_boost of its score, when
it also answers the query beyond its label (close in meaning, or holding
another query word in its own words or its neighbours'): "What did the user
say about tea?" lifts the user's lines about tea, not every line the user
wrote. The figures behind the rule are in hybrid.py's docstring.
"""
from __future__ import annotations

import re
import sqlite3

from core.index import fts

_LABEL = re.compile(r"^\s*(?:[-*+]\s+)?(?:\[[^\]\n]{0,40}\]\s*)?(?:\*\*|__)?"
                    r"([^\W\d_][^\W_]*(?:[ '.-][^\W_]+){0,3})(?:\*\*|__)?:\s", re.UNICODE)


def line_label(text: str) -> tuple[str, ...]:
    """The lowercase words of the label that opens a line: who said it ("Melanie:", "user:") or what it is
    about ("Editor:"); () when it has none. A time ("10:30") or a URL ("https://") is no label."""
    found = _LABEL.match(text or "")
    return tuple(re.findall(r"[^\W_]+", found.group(1).lower())) if found else ()


def label_rerank(ranked: list[tuple[int, float]], labels: dict[int, tuple[str, ...]], query_words: set[str],
                 boost: float) -> list[tuple[int, float]]:
    """A line whose label is named by the query gains `boost` of its score. Scores are any
    higher-is-better scale (fused, BM25 or cosine), so the rule works in every mode."""
    if boost <= 0 or not query_words or not labels:
        return ranked
    lifted = [(i, s * (1.0 + boost) if query_words.intersection(labels.get(i, ())) else s) for i, s in ranked]
    lifted.sort(key=lambda pair: -pair[1])
    return lifted


def lift_named_speakers(conn: sqlite3.Connection, ranked: list[tuple[int, float]], query: fts.Query,
                        held: dict[int, tuple[str, ...]], close: set[int], boost: float) -> list[tuple[int, float]]:
    """`ranked` with the lines whose label the query names, and that answer it beyond the label, lifted.

    `held`: the query words lines already known to hold (more are looked up as needed); `close`: the
    lines close to the query in meaning."""
    if boost <= 0 or not ranked or query.empty:
        return ranked
    ids = [i for i, _ in ranked]
    marks = ",".join("?" * len(ids))
    words = {w.lower() for w in query.words}
    named = {i: label for i, text in conn.execute(f"SELECT id, text FROM lines WHERE id IN ({marks})", ids)
             if words.intersection(label := line_label(text))}
    unknown = [i for i in named if i not in close and i not in held]
    if unknown:
        held = {**held, **fts.held(conn, query, unknown)}

    def beyond(i: int, found: dict[int, tuple[str, ...]]) -> bool:
        return bool({w.lower() for w in found.get(i, ())} - set(named[i]))

    rest = [i for i in named if i not in close and not beyond(i, held)]
    around = fts.held(conn, query, rest, column="context") if rest else {}
    labels = {i: label for i, label in named.items() if i in close or beyond(i, held) or beyond(i, around)}
    return label_rerank(ranked, labels, words, boost)
