"""Section diversity and section evidence (Tuning.section_decay / section_boost) on a real index."""
from __future__ import annotations

import pytest
from tests.support.files import write

from core.config import SearchSettings
from core.index import SearchIndex
from core.index.hybrid import Tuning, section_rerank
from core.index.rowdata import section_of

LOG = """# 2026-11-20

## Conversation at 08:10
- user: I want tips for my commute to work, the commute by bike takes long.
- assistant: Commute tips for work: leave early so the commute to work is calm.
- user: More commute to work tips? My commute is 40 minutes.
- assistant: Commute tip: plan the commute to work route the night before.
- user: And tips for a rainy commute to work?
- assistant: Rainy commute to work tips: pack a rain jacket.

## Conversation at 19:30
- user: I listen to history podcasts on my commute and love them.
- assistant: Podcasts are a great way to spend the time.

## Conversation at 21:00
- user: My sister visits next week.
"""
QUERY = "tips for my commute to work"
PODCASTS = 12


def _index(ws, **tuning):
    write(ws, "memory/2026-11-20.md", LOG)
    index = SearchIndex(ws, ws / ".reverie" / "index.db", SearchSettings(), embedder=False, tuning=Tuning(**tuning))
    index.sync()
    return index


def _lines(index, k=5, mode="fts"):
    return [h.line for h in index.search(QUERY, k=k, mode=mode).hits]


def test_without_decay_one_conversation_fills_the_page(ws):
    with _index(ws, section_decay=1.0, section_boost=0.0) as index:
        top = _lines(index)
        assert all(4 <= line <= 9 for line in top), top      # all five from the first conversation


def test_section_decay_lets_another_conversation_in(ws):
    with _index(ws, section_decay=0.5, section_free=0) as index:
        top = _lines(index)
        assert PODCASTS in top[:3], top
        assert top[0] in range(4, 10)                        # the best hit stays first
        assert len(_lines(index, k=20)) == len(set(_lines(index, k=20)))


def test_the_defaults_diversify(ws):
    with _index(ws) as index:
        top = _lines(index)
        assert PODCASTS in top[:5] and top[0] in range(4, 10), top


def test_section_free_hits_are_not_decayed():
    ranked = [(1, 1.0), (2, 0.9), (3, 0.8), (4, 0.7)]
    sections = {1: "a", 2: "a", 3: "a", 4: "b"}
    assert [i for i, _ in section_rerank(ranked, sections, 0.0, 0.5, free=1)] == [1, 2, 4, 3]
    assert [i for i, _ in section_rerank(ranked, sections, 0.0, 0.5, free=2)] == [1, 2, 3, 4]


def test_section_rerank_boost_and_decay_on_scores():
    ranked = [(1, 1.0), (2, 0.9), (3, 0.8), (4, 0.7), (5, 0.65)]
    sections = {1: "a", 2: "a", 3: "a", 4: "b", 5: "c"}
    assert section_rerank(ranked, sections, 0.0, 1.0) == ranked
    decayed = section_rerank(ranked, sections, 0.0, 0.5)
    assert [i for i, _ in decayed] == [1, 4, 5, 2, 3]
    assert decayed[3] == (2, pytest.approx(0.45)) and decayed[4] == (3, pytest.approx(0.2))
    # section evidence: a lone line (5) loses to one whose section has other strong candidates (4 with 6, 7)
    ranked = [(5, 1.0), (4, 0.95), (6, 0.5), (7, 0.5), (8, 0.1)]
    boosted = section_rerank(ranked, {4: "b", 6: "b", 7: "b", 5: "c"}, 0.2, 1.0)
    assert [i for i, _ in boosted][:2] == [4, 5]
    assert dict(boosted)[4] == pytest.approx(0.95 + 0.2 * 1.0) and dict(boosted)[8] == pytest.approx(0.1)


def test_only_lines_under_a_heading_are_grouped(ws):
    write(ws, "memory/2026-11-21.md", "# 2026-11-21\n\n- Commute to work tips from Sam.\n- Commute to work by train.\n")
    write(ws, "memory/2026-11-22.md", "# 2026-11-22\n\n- A tip for the commute: audiobooks.\n")
    with SearchIndex(ws, ws / ".reverie" / "index.db", SearchSettings(), embedder=False) as index:
        index.sync()
        ids = [i for (i,) in index.db.conn().execute("SELECT id FROM lines ORDER BY path, line")]
        sections = section_of(index.db.conn(), ids)
        assert sections == {}   # notes of a day without headings are not one conversation
    write(ws, "memory/2026-11-23.md", "# 2026-11-23\n\n- Before any section.\n\n## Memory Flush — 10:00\n"
          "- Commute to work by train.\n- A tip for the commute.\n\n## Memory Flush — 18:00\n- Commute home.\n")
    with SearchIndex(ws, ws / ".reverie" / "index.db", SearchSettings(), embedder=False) as index:
        index.sync()
        ids = [i for (i,) in index.db.conn().execute("SELECT id FROM lines WHERE path = 'memory/2026-11-23.md'")]
        line_of = dict(index.db.conn().execute("SELECT id, line FROM lines WHERE path = 'memory/2026-11-23.md'"))
        by_line = {line_of[i]: sec for i, sec in section_of(index.db.conn(), ids).items()}
        assert by_line == {5: ("memory/2026-11-23.md", 5), 6: ("memory/2026-11-23.md", 5),
                           7: ("memory/2026-11-23.md", 5), 9: ("memory/2026-11-23.md", 9),
                           10: ("memory/2026-11-23.md", 9)}


@pytest.mark.slow
def test_section_decay_in_hybrid_search(ws, minilm):
    write(ws, "memory/2026-11-20.md", LOG)
    with SearchIndex(ws, ws / ".reverie" / "index.db", SearchSettings(), embedder=minilm, background=False,
                     tuning=Tuning(section_decay=0.5, section_free=0)) as index:
        index.sync()
        results = index.search(QUERY, k=5, mode="hybrid")
        assert results.mode == "hybrid"
        top = [h.line for h in results.hits]
        assert PODCASTS in top[:4], top
