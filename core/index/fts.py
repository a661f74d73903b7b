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
lines and only add noise and time), unless the query has nothing else. So are
the words of how a request is phrased (REQUEST_WORDS: "can you recommend",
"any tips", "remind me"): in session logs they match the assistant's own
replies, not the facts. Measured (keyword only): LongMemEval recall_any@5
0.857 -> 0.881, LoCoMo recall@10 0.769 -> 0.763 ("What did X recommend?"
loses a word that is in the answer); hybrid LoCoMo recall@10 0.807 either way.
Tuning.request_words=True keeps them. The work per query is bounded at any
index size (see plan()).

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

# How a request is phrased ("can you recommend", "any tips for", "remind me what"), not what it is about:
# in session logs these words match the assistant's own replies ("I'd recommend ...") instead of the facts.
REQUEST_WORDS = frozenset("""
recommend recommendation recommendations suggest suggestion suggestions tip tips advice idea ideas remind
recall wondering interesting might please help tell know
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


def parse_query(text: str, request_words: bool = False) -> Query:
    """The safe FTS5 query of `text`; request_words=True keeps REQUEST_WORDS as terms."""
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
    content = [w for w in words if w not in STOPWORDS and (request_words or w not in REQUEST_WORDS)]
    if not content and not cjk_terms:
        content = words
    terms = list(dict.fromkeys([_quote(w) for w in content] + cjk_terms))[:MAX_TERMS]
    marks = list(dict.fromkeys(content + marks))[:MAX_TERMS]
    return Query(tuple(terms), tuple(marks))


# At most ~this many rows are scored by bm25 per query (3-5 µs each here). 600, not 1,000: keyword p95
# at 100k lines 11.2 -> 9.0 ms CPU; LoCoMo recall@10 keyword 0.763 -> 0.765, hybrid 0.795 -> 0.793,
# LongMemEval unchanged (their workspaces rarely match more rows than that).
RANK_BUDGET = 600


def _count(conn: sqlite3.Connection, expression: str, cap: int) -> int:
    """How many rows match, counting no further than `cap` (cheap: no scoring)."""
    return conn.execute("SELECT count(*) FROM (SELECT 1 FROM lines_fts WHERE lines_fts MATCH ? LIMIT ?)",
                        (expression, cap)).fetchone()[0]


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
    if len(query.terms) == 1 or _count(conn, full, budget + 1) <= budget:
        if len(query.terms) == 1 and _count(conn, full, budget + 1) > budget:
            return full, False
        return full, True
    counts = sorted((_count(conn, term, budget + 1), term) for term in query.terms)
    rare, used = [], 0
    for count, term in counts:
        if used + count > budget:
            break
        rare.append(term)
        used += count
    every = " AND ".join(query.terms)
    parts = list(rare)
    if _count(conn, every, budget - used + 1) <= budget - used:
        parts.append(f"({every})")
    if parts:
        return " OR ".join(parts), True
    return every, False


def search(conn: sqlite3.Connection, query: Query, limit: int, context_weight: float) -> list[tuple[int, float]]:
    """(rowid, score) best first; score is -bm25 (higher is better), or 0 for newest-first answers."""
    if query.empty:
        return []
    expression, ranked = plan(conn, query)
    if not ranked:
        rows = conn.execute("SELECT rowid FROM lines_fts WHERE lines_fts MATCH ? ORDER BY rowid DESC LIMIT ?",
                            (expression, limit)).fetchall()
        return [(rowid, 0.0) for (rowid,) in rows]
    rows = conn.execute(
        "SELECT rowid, bm25(lines_fts, 1.0, ?) AS s FROM lines_fts WHERE lines_fts MATCH ? ORDER BY s LIMIT ?",
        (context_weight, expression, limit)).fetchall()
    return [(rowid, -score) for rowid, score in rows]


# ----- highlighting ----------------------------------------------------------------------------
@functools.lru_cache(maxsize=512)
def _patterns(marks: tuple[str, ...]):
    """(Latin regex, its word prefixes, its whole words, CJK regex) for a query's marks.

    A Latin term of 4+ letters matches words that share its stem-ish prefix;
    shorter ones match whole words. Word boundaries are checked in Python (see
    spans): a character class holding all of CJK costs ~20 ms to compile.
    """
    latin, prefixes, exact, pieces = [], [], set(), []
    for mark in marks:
        if cjk.has_cjk(mark):
            pieces.append(re.escape(mark))
        elif len(mark) >= 4:
            prefixes.append(mark[: max(4, len(mark) - 2)])
            latin.append(re.escape(prefixes[-1]) + r"[^\W_]*")
        else:
            exact.add(mark)
            latin.append(re.escape(mark) + r"[^\W_]*")
    by_length = lambda items: sorted(items, key=len, reverse=True)   # noqa: E731  longest alternative first
    return (re.compile("|".join(by_length(latin)), re.IGNORECASE) if latin else None, tuple(prefixes),
            frozenset(exact), re.compile("|".join(by_length(pieces))) if pieces else None)


def _latin_word_char(ch: str) -> bool:
    return ch.isalnum() and not cjk.has_cjk(ch)


def spans(text: str, query: Query) -> list[tuple[int, int]]:
    """Character ranges of `text` that match the query, sorted and not overlapping."""
    latin, prefixes, exact, pieces = _patterns(query.marks)
    found = []
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
