"""A query that names a line's label (who said it: "Ana:", "user:") ranks that person's lines above the ones
that only mention or address them."""
from __future__ import annotations

import dataclasses

import pytest
from tests.support.files import write

from core.config import SearchSettings
from core.index import SearchIndex
from core.index.hybrid import Tuning
from core.index.labels import label_rerank, line_label

LOG = """# 2026-11-02

- [7:10 pm] Ben: Ana, your painting is great, Ana!
- [7:11 pm] Ana: Thanks! Last weekend I finished a painting of a horse in the field behind our barn, it took me weeks.
- [7:12 pm] Ben: Ana, painting suits you.
- [7:13 pm] Ben: Did Ana paint before? Ana painting, who knew.
"""
LATER = """# 2026-11-03

- [8:30 am] Ana: Ok, see you at the market on Sunday morning then.
"""
BEN = """# 2026-11-04

- [9:10 am] Ben: The painting dried.
"""


@pytest.mark.parametrize("text, label", [
    ("- [1:56 pm] Melanie: You would be great", ("melanie",)),
    ("user: what did I say about tea?", ("user",)),
    ("- **Editor**: vim", ("editor",)),
    ("* Maya O'Neil: hi", ("maya", "o", "neil")),
    ("10:30 meeting moved", ()),                    # a time is no label
    ("see https://example.org/x", ()),              # nor a URL
    ("- Deploys always go out on Fridays: never on Mondays", ()),   # a sentence, not a label
    ("# Decisions: the log", ()),                   # a heading is not a speaker line
    ("- 2026-12-01: shipped", ()),
    ("", ()),
])
def test_line_label(text, label):
    assert line_label(text) == label


def test_label_rerank_lifts_lines_whose_label_the_query_names():
    ranked = [(1, 1.0), (2, 0.8), (3, 0.5)]
    labels = {1: ("ben",), 2: ("ana",), 3: ()}
    assert [i for i, _ in label_rerank(ranked, labels, {"ana", "painted"}, 0.75)] == [2, 1, 3]
    assert label_rerank(ranked, labels, {"ana"}, 0.0) == ranked            # off
    assert label_rerank(ranked, labels, {"carol"}, 0.75) == ranked         # nobody named


def _index(ws, boost: float) -> SearchIndex:
    return SearchIndex(ws, ws / ".reverie" / f"index-{boost}.db", SearchSettings(), embedder=False,
                       tuning=dataclasses.replace(Tuning(), label_boost=boost))


def test_keyword_search_puts_the_named_speakers_line_first(ws):
    write(ws, "memory/2026-11-02.md", LOG)
    write(ws, "memory/2026-11-03.md", LATER)
    write(ws, "memory/2026-11-04.md", BEN)
    plain, labelled = _index(ws, 0.0), _index(ws, Tuning().label_boost)
    try:
        plain.sync()
        labelled.sync()
        question = "What has Ana painted?"
        # Without the label rule BM25 prefers Ben's short lines that say "Ana" and "painting" over and over.
        assert plain.search(question, k=4, mode="keyword").hits[0].line != 4
        hits = labelled.search(question, k=4, mode="keyword").hits
        assert hits[0].line == 4 and hits[0].text.startswith("- [7:11 pm] Ana:")
        assert {(h.path[-5:-3], h.line) for h in hits} == {("02", n) for n in (3, 4, 5, 6)}   # the rest lower
        # A line tied to the question by its label alone ("Ana: Ok, see you ...") is not lifted above the ones about painting.
        before = [(h.path[-5:-3], h.line) for h in plain.search(question, k=10, mode="keyword").hits]
        after = [(h.path[-5:-3], h.line) for h in labelled.search(question, k=10, mode="keyword").hits]
        assert before.index(("04", 3)) < before.index(("03", 3))
        assert after.index(("04", 3)) < after.index(("03", 3))
    finally:
        plain.close()
        labelled.close()


def test_hybrid_search_with_the_real_model_puts_the_named_speakers_line_first(ws, minilm):
    write(ws, "memory/2026-11-02.md", LOG)
    index = SearchIndex(ws, ws / ".reverie" / "index.db", SearchSettings(), embedder=minilm)
    try:
        index.sync()
        assert index.wait_embeddings(120)
        hits = index.search("What has Ana painted?", k=4, mode="hybrid").hits
        assert hits[0].line == 4 and hits[0].match == "both"
    finally:
        index.close()
