"""Keyword search: any query string becomes a safe FTS5 expression; snippets in Python.

Queries from people and agents are natural language, not FTS5 syntax. We never
pass them through: the query is cut into words (the same way unicode61 cuts
the indexed text; CJK runs into bigrams, see cjk.py), each word becomes a
double-quoted FTS5 string, and the words are joined with OR, so BM25 ranks
lines by how many of the rarer words they hold instead of demanding all of
them (a question shares only some words with the line that answers it).
Quoting makes every word a literal: `AND(`, `NEAR`, `-`, `*`, `col:` and
control characters can never reach the FTS5 parser as syntax.

Common English function words are dropped from the OR (they would match most
lines and only add noise and time), unless the query has nothing else.

Snippets mark matched words with « and » (brackets would clash with the
`[10:42]` times of daily logs). Matching there is by word prefix, a close
stand-in for the porter stemmer the index uses.
"""
from __future__ import annotations

import functools
import re
import sqlite3
from dataclasses import dataclass

from core.index import cjk

MAX_TERMS = 48           # a 100 kB paste must not become a 20,000-term query
MAX_TERM_CHARS = 64
SNIPPET_CHARS = 200
OPEN, CLOSE = "«", "»"

_WORD = re.compile(r"[^\W_]+", re.UNICODE)

STOPWORDS = frozenset("""
a about above after again against all am an and any are aren't as at be because been before being below
between both but by can can't cannot could did didn't do does doesn't doing don't down during each few for
from further had has have having he her here hers herself him himself his how i if in into is isn't it its
itself let me more most my myself no nor not of off on once only or other ought our ours ourselves out over
own same she should so some such than that the their theirs them themselves then there these they this
those through to too under until up very was wasn't we were what when where which while who whom why with
would you your yours yourself yourselves s t d ll m re ve y
""".split())


@dataclass(frozen=True)
class Query:
    terms: tuple[str, ...]          # FTS5 strings, already quoted
    marks: tuple[str, ...]          # lowercase words / CJK pieces to highlight in the original text

    @property
    def match(self) -> str:
        return " OR ".join(self.terms)

    @property
    def empty(self) -> bool:
        return not self.terms


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def parse_query(text: str) -> Query:
    words: list[str] = []
    cjk_terms: list[str] = []
    marks: list[str] = []
    for is_cjk, piece in cjk.split_runs(str(text)):
        if is_cjk:
            if len(piece) == 1:
                cjk_terms.extend([_quote(piece) + "*", _quote(piece)])
                marks.append(piece)
            else:
                grams = cjk.bigrams(piece)
                cjk_terms.extend(_quote(g) for g in grams)
                marks.extend(grams)
        else:
            words.extend(w.lower()[:MAX_TERM_CHARS] for w in _WORD.findall(piece))
    content = [w for w in words if w not in STOPWORDS]
    if not content and not cjk_terms:
        content = words
    terms = list(dict.fromkeys([_quote(w) for w in content] + cjk_terms))[:MAX_TERMS]
    marks = list(dict.fromkeys(content + marks))[:MAX_TERMS]
    return Query(tuple(terms), tuple(marks))


def search(conn: sqlite3.Connection, query: Query, limit: int, context_weight: float) -> list[tuple[int, float]]:
    """(rowid, score) best first; score is -bm25, so higher is better."""
    if query.empty:
        return []
    rows = conn.execute(
        "SELECT rowid, bm25(lines_fts, 1.0, ?) AS s FROM lines_fts WHERE lines_fts MATCH ? ORDER BY s LIMIT ?",
        (context_weight, query.match, limit)).fetchall()
    return [(rowid, -score) for rowid, score in rows]


# ----- highlighting ----------------------------------------------------------------------------
@functools.lru_cache(maxsize=512)
def _pattern(marks: tuple[str, ...]) -> re.Pattern | None:
    """One regex for all of a query's marks: a Latin term matches words sharing its stem-ish prefix."""
    word = f"[^\\W_{cjk._CJK_CLASS}]"   # a Latin-ish word character (CJK characters are words on their own)
    parts = []
    for mark in marks:
        if cjk.has_cjk(mark):
            parts.append(re.escape(mark))
        elif len(mark) >= 4:
            parts.append(f"(?<!{word})" + re.escape(mark[: max(4, len(mark) - 2)]) + f"{word}*")
        else:
            parts.append(f"(?<!{word})" + re.escape(mark) + f"(?!{word})")
    if not parts:
        return None
    # Longest first, so "deploy" wins over "de" where both could match.
    parts.sort(key=len, reverse=True)
    return re.compile("|".join(parts), re.IGNORECASE)


def spans(text: str, query: Query) -> list[tuple[int, int]]:
    """Character ranges of `text` that match the query, sorted and not overlapping."""
    pattern = _pattern(query.marks)
    if pattern is None:
        return []
    return [m.span() for m in pattern.finditer(text) if m.end() > m.start()]


def snippet(text: str, query: Query, width: int = SNIPPET_CHARS) -> str:
    """A window of `text` around its first match, matched words between « and »."""
    text = " ".join(text.split())
    found = spans(text, query)
    start = 0
    if found and len(text) > width:
        start = max(0, min(found[0][0] - width // 4, len(text) - width))
    end = min(len(text), start + width)
    out, pos = [], start
    for a, b in found:
        if b <= start or a >= end:
            continue
        a, b = max(a, start), min(b, end)
        out.append(text[pos:a])
        out.append(OPEN + text[a:b] + CLOSE)
        pos = b
    out.append(text[pos:end])
    return ("…" if start > 0 else "") + "".join(out) + ("…" if end < len(text) else "")
