"""Keyword search: a parsed query (query.py) becomes bounded FTS5 work; which words a line holds; snippets.

The words of a query are joined with OR, so BM25 ranks lines by how many of
the rarer words they hold instead of demanding all of them (a question shares
only some words with the line that answers it). A row's text is two columns:
`body`, the line's own words, and `context`, its date, heading and
neighbouring lines (lines.py). held() says which of the query's words a line
holds in its own body, with the index's stemming: a line found only through
its context matched *nearby*. The work per query is bounded at any index size
(see plan()).

Snippets mark matched words with « and » (brackets would clash with the
`[10:42]` times of daily logs). Matching there is by word prefix, a close
stand-in for the porter stemmer the index uses.
"""
from __future__ import annotations

import functools
import re
import sqlite3

from core.index import cjk
from core.index.query import MAX_TERMS, Query, parse_query

__all__ = ["MAX_TERMS", "Query", "parse_query", "known", "plan", "search", "held", "spans", "snippet"]

SNIPPET_CHARS = 200
OPEN, CLOSE = "«", "»"


# At most ~this many rows are scored by bm25 per query (3-5 µs each here). 600, not 1,000: keyword p95
# at 100k lines 11.2 -> 9.0 ms CPU; LoCoMo recall@10 keyword 0.763 -> 0.765, hybrid 0.795 -> 0.793,
# LongMemEval unchanged (their workspaces rarely match more rows than that).
RANK_BUDGET = 600


def _count(conn: sqlite3.Connection, expression: str, cap: int) -> int:
    """How many rows match, counting no further than `cap` (cheap: no scoring)."""
    return conn.execute("SELECT count(*) FROM (SELECT 1 FROM lines_fts WHERE lines_fts MATCH ? LIMIT ?)",
                        (expression, cap)).fetchone()[0]


def known(conn: sqlite3.Connection, query: Query) -> bool:
    """Whether any word of the query occurs anywhere in the index (a line or its context)."""
    return not query.empty and _count(conn, query.match, 1) > 0


def plan(conn: sqlite3.Connection, query: Query, budget: int = RANK_BUDGET) -> tuple[str, bool]:
    """(FTS5 expression, ranked?) that keeps the work of one query bounded at any index size.

    bm25 must score every matching row before ORDER BY can pick the best, and an
    OR of common words matches most of a large index (its context column holds
    five lines' words). So: the OR of all words when it matches at most
    `budget` rows (always so in a small workspace); otherwise the OR of the
    rarest words that together stay within the budget, plus every line holding
    all the words when those are few; and when even that is too much (a query
    of only very common words), the lines holding all of them, newest first.
    """
    full = query.match
    words = [g.expression for g in query.groups]
    if len(words) == 1 or _count(conn, full, budget + 1) <= budget:
        if len(words) == 1 and _count(conn, full, budget + 1) > budget:
            return full, False
        return full, True
    counts = sorted((_count(conn, word, budget + 1), word) for word in words)
    rare, used = [], 0
    for count, word in counts:
        if used + count > budget:
            break
        rare.append(word)
        used += count
    every = " AND ".join(words)
    parts = list(rare)
    if _count(conn, every, budget - used + 1) <= budget - used:
        parts.append(f"({every})")
    if parts:
        return " OR ".join(parts), True
    return every, False


def search(conn: sqlite3.Connection, query: Query, limit: int, context_weight: float,
           where: str = "", params: tuple = ()) -> list[tuple[int, float]]:
    """(rowid, score) best first; score is -bm25 (higher is better), or 0 for newest-first answers.

    `where`: an SQL condition on the row's `lines` entry (alias l), e.g. a kind or date filter.
    """
    if query.empty:
        return []
    expression, ranked = plan(conn, query)
    join = f" JOIN lines l ON l.id = lines_fts.rowid AND ({where})" if where else ""
    if not ranked:
        rows = conn.execute(f"SELECT lines_fts.rowid FROM lines_fts{join} WHERE lines_fts MATCH ? "
                            f"ORDER BY lines_fts.rowid DESC LIMIT ?", (*params, expression, limit)).fetchall()
        return [(rowid, 0.0) for (rowid,) in rows]
    rows = conn.execute(
        f"SELECT lines_fts.rowid, bm25(lines_fts, 1.0, ?) AS s FROM lines_fts{join} WHERE lines_fts MATCH ? "
        f"ORDER BY s LIMIT ?", (context_weight, *params, expression, limit)).fetchall()
    return [(rowid, -score) for rowid, score in rows]


def held(conn: sqlite3.Connection, query: Query, ids: list[int], column: str = "body") -> dict[int, tuple[str, ...]]:
    """Row id -> the query's words its own line holds (not its context; `column="context"`: the reverse),
    for the given rows.

    Asked of the index itself, so "deploys" holds "deploy" exactly as the porter
    stemmer says; one lookup per word, bounded to the rows asked about.
    """
    if not ids or query.empty:
        return {}
    marks = ",".join("?" * len(ids))
    found: dict[int, list[str]] = {}
    for group in query.groups:
        for (rowid,) in conn.execute(f"SELECT rowid FROM lines_fts WHERE lines_fts MATCH ? AND rowid IN ({marks})",
                                     (f"{{{column}}}: " + group.held, *ids)):
            found.setdefault(rowid, []).append(group.word)
    return {rowid: tuple(words) for rowid, words in found.items()}


# ----- highlighting ----------------------------------------------------------------------------
@functools.lru_cache(maxsize=512)
def _patterns(marks: tuple[str, ...]):
    """(Latin regex, its word prefixes, its whole words, CJK regex, hyphenated-words regex) for a query's marks.

    A Latin term of 4+ letters matches words that share its stem-ish prefix;
    shorter ones match whole words; a hyphenated one ("on-call") matches its
    parts joined by a hyphen, a space or nothing, as the index does. Word
    boundaries are checked in Python (see spans): a character class holding all
    of CJK costs ~20 ms to compile.
    """
    latin, prefixes, exact, pieces, joined = [], [], set(), [], []
    for mark in marks:
        if cjk.has_cjk(mark):
            pieces.append(re.escape(mark))
        elif "-" in mark:
            joined.append(r"[-\s]?".join(re.escape(part) for part in mark.split("-")))
        elif len(mark) >= 4:
            prefixes.append(mark[: max(4, len(mark) - 2)])
            latin.append(re.escape(prefixes[-1]) + r"[^\W_]*")
        else:
            exact.add(mark)
            latin.append(re.escape(mark) + r"[^\W_]*")
    by_length = lambda items: sorted(items, key=len, reverse=True)   # noqa: E731  longest alternative first
    return (re.compile("|".join(by_length(latin)), re.IGNORECASE) if latin else None, tuple(prefixes),
            frozenset(exact), re.compile("|".join(by_length(pieces))) if pieces else None,
            re.compile("|".join(by_length(joined)), re.IGNORECASE) if joined else None)


def _latin_word_char(ch: str) -> bool:
    return ch.isalnum() and not cjk.has_cjk(ch)


def spans(text: str, query: Query) -> list[tuple[int, int]]:
    """Character ranges of `text` that match the query, sorted and not overlapping."""
    latin, prefixes, exact, pieces, joined = _patterns(query.marks)
    found = []
    if joined is not None:
        for match in joined.finditer(text):
            start, end = match.span()
            if not ((start > 0 and _latin_word_char(text[start - 1])) or
                    (end < len(text) and _latin_word_char(text[end]))):
                found.append((start, end))
    if latin is not None:
        for match in latin.finditer(text):
            start, end = match.span()
            if start > 0 and _latin_word_char(text[start - 1]):
                continue   # inside a word
            while end > start and cjk.has_cjk(text[end - 1]):
                end -= 1   # "Orion项目": the Latin word ends where the Chinese starts
            word = text[start:end].lower()
            if word in exact or any(word.startswith(p) for p in prefixes):
                found.append((start, end))
    if pieces is not None:
        found.extend(m.span() for m in pieces.finditer(text))
    found.sort()
    merged: list[tuple[int, int]] = []
    for start, end in found:
        if merged and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


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
