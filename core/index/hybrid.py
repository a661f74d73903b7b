"""Fusing keyword and vector results, sections, time, recency, near-duplicate collapse.

Fusion is weighted reciprocal rank fusion: a line scores
    w_fts / (k0 + rank in keyword results) + w_vec / (k0 + rank in vector results)
(rank 1 is the best; absent from a list adds nothing). Ranks, not raw scores:
BM25 and cosine live on unrelated scales that shift with every query (BM25
grows with query length and with the rarity of its words), and rank fusion
needs no per-corpus calibration. k0 = 10 was chosen with `reverie bench
locomo` on the development split (categories 1-4, recall@10): keyword 0.769,
vector 0.569, RRF k0=60 w=1 0.733, k0=10 w=0.6 0.807; every k0 in 5..20 with
w_vec in 0.5..0.7 gave 0.79-0.81, so the choice is not a knife edge. A small
k0 lets the top few of each list dominate: either list's best line is usually
right, its 30th rarely. w_vec = 0.8 (not 0.6): LongMemEval's preference
questions ("Can you recommend some recent publications ...?") share few words
with the line that answers them and only the vector list finds it; LoCoMo
recall@10 0.807 -> 0.795 for it, LongMemEval recall_any@5 one question more
(the figures in the section below).

Sections (section_decay, section_free, section_boost): lines under one `##`
heading (a daily log's `## Memory Flush — ...` or `## Conversation at ...`, a
MEMORY.md topic) are one section; lines under no heading are each their own.
An agent asking for k hits gains little from k adjacent lines of one
conversation: past its first `section_free` hits, each further hit of a
section has its score multiplied by section_decay per hit already taken
(MMR-like, over the fused candidates). And a line whose section holds other
strong candidates gains section_boost times their summed score (the best
SECTION_TOP): a conversation that keeps coming up is likelier the one asked
about. Measured with `reverie bench longmemeval` (dev split, 42 questions,
hybrid, recall_any@5 / turn recall@10; halves by sha1(question_id) % 2, H0
18 questions tuned on, H1 24 checked): all off (w_vec 0.6) 0.857 / 0.711
(H0 0.778, H1 0.917); decay 0.7 + free 1: 0.929 / 0.667 (H0 0.944, H1 0.917,
H1 recall_any@10 0.917 -> 1.000); with w_vec 0.8 (the default) 0.952 / 0.644
(H0 0.944, H1 0.958). Keyword-only: 0.857 -> 0.929; free 2 loses it again.
Diversity costs turn recall (fewer lines of the right conversation on the
page). section_boost 0.2 on top: 0.929 (one question lost), so it is off:
the vector list always brings a section's unrelated lines as candidates, and
their summed small scores let a heading's worth of notes outrank the one line
holding every word of the query (tests/index/test_long_rows.py, hybrid).
A file without headings is not a section: LoCoMo's one-session-per-file logs
lost recall@10 0.807 -> 0.717 when whole files were sections (its evidence is
several lines of one session), so on LoCoMo these knobs change nothing
(LoCoMo with these defaults: keyword 0.763, vector 0.569, hybrid 0.795).

Time (time_boost, off): "four weeks ago", "a couple of days ago", "last
weekend", "in March" are read against `today` (SearchIndex.search(today=...),
the clock's date by default); candidates dated in that window gain time_boost
of their score and the time phrase leaves the words searched. On the
LongMemEval temporal questions it changed no recall_any@5 and lost one
recall_any@10 (0.5 and 1.0 alike): the gold day holds many other sessions,
and the misses there are misses of meaning (a "business milestone" that was
"signed a contract with my first client"), not of date. Kept as a knob, off.

Recency (optional, `search.recency_half_life_days` > 0): a line dated d days
before the newest dated line keeps (1 - RECENCY_SHARE) + RECENCY_SHARE * 2^(-d/h)
of its score; undated lines (MEMORY.md) are not penalised: curated memory is
current by definition.

Near-duplicate collapse: a hit whose text is the same as a better hit's up to
case, spacing and punctuation, or whose vector has cosine >= the threshold with
a better hit's, is dropped (the same fact flushed twice should not fill the
page).
"""
from __future__ import annotations

import calendar
import datetime as dt
import heapq
import re
from dataclasses import dataclass
from typing import Hashable

import numpy as np

RECENCY_SHARE = 0.5
_NORMAL = re.compile(r"[\W_]+", re.UNICODE)


@dataclass(frozen=True)
class Tuning:
    """Search-time knobs; defaults are the measured best (bench locomo and longmemeval, dev splits)."""

    fts_context_weight: float = 0.5     # bm25 weight of the context column (the line's own words: 1.0)
    rrf_k: float = 10.0
    w_fts: float = 1.0
    w_vec: float = 0.8
    candidates: int = 100               # per list, before fusion
    collapse: bool = True
    near_duplicate_cosine: float = 0.95
    section_boost: float = 0.0          # share of its section's best other scores a hit gains (off: see above)
    section_decay: float = 0.7          # score factor per hit already taken from its section (past the free ones)
    section_free: int = 1               # hits a section gives before section_decay starts
    request_words: bool = False         # keep "recommend", "tips", "remind" ... as keyword terms (fts.py)
    time_boost: float = 0.0             # extra share of score for lines dated where the query points ("3 weeks ago")


def fuse(fts: list[tuple[int, float]], vec: list[tuple[int, float]], tuning: Tuning) -> list[tuple[int, float, tuple[str, ...]]]:
    """(id, fused score, which lists found it) best first."""
    scores: dict[int, float] = {}
    found: dict[int, list[str]] = {}
    for name, hits, weight in (("fts", fts, tuning.w_fts), ("vector", vec, tuning.w_vec)):
        for rank, (row_id, _score) in enumerate(hits, start=1):
            scores[row_id] = scores.get(row_id, 0.0) + weight / (tuning.rrf_k + rank)
            found.setdefault(row_id, []).append(name)
    order = sorted(scores, key=lambda i: -scores[i])
    return [(i, scores[i], tuple(found[i])) for i in order]


def recency_factor(day: int, newest: int, half_life_days: float) -> float:
    if half_life_days <= 0 or day <= 0 or newest <= 0:
        return 1.0
    age = max(0, newest - day)
    return (1.0 - RECENCY_SHARE) + RECENCY_SHARE * 0.5 ** (age / half_life_days)


def normal_text(text: str) -> str:
    return _NORMAL.sub(" ", text.lower()).strip()


def collapse(ordered: list[int], texts: dict[int, str], vectors: dict[int, np.ndarray], threshold: float,
             keep: int) -> list[int]:
    """The first `keep` ids of `ordered` with near-duplicates of better ones removed."""
    kept: list[int] = []
    seen_text: set[str] = set()
    dim = next((len(v) for v in vectors.values()), 0)
    kept_vectors = np.zeros((keep, dim), dtype=np.float32)
    n_vectors = 0
    for row_id in ordered:
        norm = normal_text(texts.get(row_id, ""))
        if norm and norm in seen_text:
            continue
        vector = vectors.get(row_id)
        if vector is not None and n_vectors and float(np.max(kept_vectors[:n_vectors] @ vector)) >= threshold:
            continue
        kept.append(row_id)
        seen_text.add(norm)
        if vector is not None:
            kept_vectors[n_vectors] = vector
            n_vectors += 1
        if len(kept) >= keep:
            break
    return kept


SECTION_TOP = 3     # a section's strength: its best few candidates, not its size


def section_rerank(ranked: list[tuple[int, float]], section_of: dict[int, Hashable], boost: float,
                   decay: float, free: int = 0) -> list[tuple[int, float]]:
    """Section evidence and section diversity over fused (id, score) candidates.

    boost: a hit gains `boost` times the sum of the best SECTION_TOP other
    candidates' scores in its section, so a line in a conversation that keeps
    coming up beats an equally good lone line elsewhere.
    decay: each hit already taken from a section beyond its first `free`
    multiplies the next one's score by `decay` (MMR-like), so k hits are not k
    adjacent lines of one conversation. Ids without a section are their own section.
    """
    if not ranked or (boost <= 0 and decay >= 1):
        return ranked
    groups: dict[Hashable, list[float]] = {}
    for row_id, score in ranked:
        groups.setdefault(section_of.get(row_id, ("row", row_id)), []).append(score)
    for scores in groups.values():
        scores.sort(reverse=True)
    boosted = []
    for row_id, score in ranked:
        best = groups[section_of.get(row_id, ("row", row_id))]
        others = sum(best[: SECTION_TOP + 1]) - score if score >= best[min(SECTION_TOP, len(best)) - 1] \
            else sum(best[:SECTION_TOP])
        boosted.append((row_id, score + boost * others))
    if decay >= 1:
        return sorted(boosted, key=lambda item: -item[1])
    # Lazy greedy: a popped entry whose section took more hits since it was scored goes back, rescored.
    taken: dict[Hashable, int] = {}
    heap = [(-score, n, row_id, score, 0) for n, (row_id, score) in enumerate(boosted)]
    heapq.heapify(heap)
    out = []
    while heap:
        _, n, row_id, base, seen = heapq.heappop(heap)
        key = section_of.get(row_id, ("row", row_id))
        now = taken.get(key, 0)
        if now != seen:
            heapq.heappush(heap, (-base * decay ** max(0, now - free), n, row_id, base, now))
            continue
        out.append((row_id, base * decay ** max(0, now - free)))
        taken[key] = now + 1
    return out


# ----- time named in the query ------------------------------------------------------------------
_NUMBER = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
           "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "couple": 2, "a couple": 2, "a couple of": 2,
           "couple of": 2, "few": 3, "a few": 3, "several": 3}
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}
_AGO = re.compile(r"\b(\d{1,3}|a couple of|a couple|couple of|a few|an?|one|two|three|four|five|six|seven|eight|nine"
                  r"|ten|eleven|twelve|few|several)\s+(day|week|month|year)s?\s+ago\b", re.IGNORECASE)
_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_IN_MONTH = re.compile(r"\b(?:in|during|since|of|last)\s+(" + "|".join(_MONTHS) + r")\b", re.IGNORECASE)
_NAMED = re.compile(r"\b(yesterday|today|tonight|this morning|last night|last weekend|last week|last month|last year)\b",
                    re.IGNORECASE)


def find_time(query: str, today: dt.date) -> tuple[tuple[dt.date, dt.date], str] | None:
    """The days a query points at ("two weeks ago", "last weekend", "in March"), relative to `today`.

    A span N units back is fuzzy in speech ("four weeks ago" is rarely 28 days
    to the day), so it gets a tolerance that grows with it: 1 + days // 4 on
    each side. A month name means the latest such month up to today. None when
    the query names no time. Also returns the query without the time phrase:
    "four weeks ago" points at days, its words are not what the line says
    (as keywords they found "a set of four" and "three weeks ago").
    """
    text = str(query)
    found = _find_time(text, today)
    if found is None:
        return None
    window, (start, end) = found
    rest = " ".join((text[:start] + " " + text[end:]).split())
    return window, rest if any(ch.isalnum() for ch in rest) else text   # "yesterday" alone: its words are all there is


def _find_time(text: str, today: dt.date):
    match = _AGO.search(text)
    if match:
        count = match.group(1).lower()
        days = (int(count) if count.isdigit() else _NUMBER[count]) * _UNIT_DAYS[match.group(2).lower()]
        centre, tolerance = today - dt.timedelta(days=days), 1 + days // 4
        return (centre - dt.timedelta(days=tolerance), centre + dt.timedelta(days=tolerance)), match.span()
    match = _NAMED.search(text)
    if match:
        return _named(match.group(1).lower(), today), match.span()
    match = _IN_MONTH.search(text)
    if match:
        month = _MONTHS[match.group(1).lower()]
        year = today.year if month <= today.month else today.year - 1
        # the month's name stays in the query: lines carry their date as words (lines.py)
        return (dt.date(year, month, 1), dt.date(year, month, calendar.monthrange(year, month)[1])), (0, 0)
    return None


def _named(named: str, today: dt.date) -> tuple[dt.date, dt.date]:
    if named in ("today", "tonight", "this morning"):
        return today, today
    if named in ("yesterday", "last night"):
        return today - dt.timedelta(days=1), today - dt.timedelta(days=1)
    if named == "last weekend":
        saturday = today - dt.timedelta(days=(today.weekday() - 5) % 7 or 7)
        return saturday, saturday + dt.timedelta(days=1)
    if named == "last week":
        return today - dt.timedelta(days=11), today - dt.timedelta(days=3)
    if named == "last month":
        last = today.replace(day=1) - dt.timedelta(days=1)
        return last.replace(day=1), last
    return dt.date(today.year - 1, 1, 1), dt.date(today.year - 1, 12, 31)


def time_rerank(ranked: list[tuple[int, float]], day_of: dict[int, int], window: tuple[dt.date, dt.date],
                boost: float) -> list[tuple[int, float]]:
    """Candidates dated inside `window` gain `boost` times their score; others keep theirs."""
    low, high = window[0].toordinal(), window[1].toordinal()
    out = [(i, s * (1 + boost) if low <= day_of.get(i, 0) <= high else s) for i, s in ranked]
    return sorted(out, key=lambda item: -item[1])
