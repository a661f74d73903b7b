"""Vectors with the real MiniLM model and real hnswlib: cache, updates, rebuilds, concurrency, model change."""
from __future__ import annotations

import os
import shutil
import threading

import pytest
from tests.support.embedders import CountingEmbedder
from tests.support.files import write

from core.config import SearchSettings
from core.index import SearchIndex
from core.index.embedder import SentenceTransformerEmbedder, resolve_model

FACTS = ["- Maya drinks green tea every morning and avoids coffee",
         "- The staging database listens on port 5433",
         "- 周末我们去香山爬山了",
         "- The cat is called Pixel and hates the vacuum cleaner",
         "- Deploys happen on the first Monday of each month"]


def open_index(ws, embedder, **kw):
    return SearchIndex(ws, ws / ".reverie" / "index.db", SearchSettings(), embedder=embedder, **kw)


def test_second_index_run_embeds_nothing_and_moved_lines_keep_vectors(ws, minilm):
    write(ws, "memory/2026-11-01.md", "# 2026-11-01\n\n" + "\n".join(FACTS) + "\n")
    first = CountingEmbedder(minilm)
    with open_index(ws, first, background=False) as index:
        index.sync()
        status = index.status()   # the title "# 2026-11-01" has no words: found by keyword, never embedded
        assert status.pending_embeddings == 0 and status.vectors == len(FACTS) and status.not_embedded == 1
        assert len(first.texts) == len(FACTS)
    second = CountingEmbedder(minilm)
    with open_index(ws, second, background=False) as index:
        index.sync()
        hits = index.search("hot drink in the morning", k=3, mode="vector").hits
        assert hits[0].line == 3
    assert second.texts == ["hot drink in the morning"]   # the query only
    # The same text on another day's log: embedded text differs only by date -> one new embedding per line;
    # the same file rewritten with the lines in another order keeps every vector whose embedded text is unchanged.
    third = CountingEmbedder(minilm)
    with open_index(ws, third, background=False) as index:
        write(ws, "memory/2026-11-01.md", "# 2026-11-01\n\n" + "\n".join(FACTS) + "\n\n- New line about Pixel the cat\n")
        report = index.sync()
        assert report.updated == ["memory/2026-11-01.md"]
    assert len(third.texts) == 1 and "Pixel" in third.texts[0]


def test_deleted_and_updated_lines_leave_the_vector_results(ws, minilm):
    path = write(ws, "MEMORY.md", "## Facts\n" + "\n".join(FACTS) + "\n")
    with open_index(ws, minilm, background=False) as index:
        index.sync()
        assert index.search("what is the cat's name", k=1, mode="vector").hits[0].text == FACTS[3]
        path.write_text("## Facts\n" + "\n".join(f for f in FACTS if "Pixel" not in f) +
                        "\n- The dog is called Biscuit and loves the beach\n", encoding="utf-8")
        index.reindex_file("MEMORY.md")
        texts = [h.text for h in index.search("what is the pet's name", k=10, mode="vector").hits]
        assert FACTS[3] not in texts and texts[0].startswith("- The dog is called Biscuit")
        assert index.status().vectors == index.status().lines


def test_corrupted_or_missing_vector_file_is_rebuilt_without_the_model(ws, minilm):
    write(ws, "memory/2026-11-01.md", "\n".join(FACTS) + "\n")
    with open_index(ws, minilm, background=False) as index:
        index.sync()
    vector_file = ws / ".reverie" / "index.hnsw"
    assert vector_file.exists()
    data = bytearray(vector_file.read_bytes())
    data[len(data) // 2: len(data) // 2 + 64] = os.urandom(64)
    vector_file.write_bytes(bytes(data))
    counting = CountingEmbedder(minilm)
    with open_index(ws, counting, background=False) as index:
        index.sync()
        assert index.search("port of the staging database", k=1, mode="vector").hits[0].line == 2
        assert any("rebuilt" in p for p in index.status().problems)
    assert counting.texts == ["port of the staging database"]   # rebuilt from cached vectors
    vector_file.unlink()
    with open_index(ws, minilm, background=False) as index:
        assert index.search("port of the staging database", k=1, mode="vector").hits[0].line == 2


def test_search_during_background_indexing_answers_and_says_what_is_pending(ws, minilm):
    write(ws, "memory/2026-11-01.md", "".join(f"- note {i}: the build number {1000 + i} passed on runner {i % 7}\n"
                                               for i in range(250)) + "- Maya drinks green tea\n")
    with open_index(ws, minilm, background=True) as index:
        index.sync()
        seen_pending, errors, answers = [], [], []

        def searcher():
            try:
                while True:
                    keyword = index.search("green tea", k=3, mode="fts")
                    answers.append(keyword.hits[0].line)
                    hybrid = index.search("green tea", k=3, mode="hybrid")
                    seen_pending.append(hybrid.pending_embeddings)
                    if hybrid.pending_embeddings == 0:
                        return
            except Exception as exc:   # the test fails below with it
                errors.append(exc)

        threads = [threading.Thread(target=searcher) for _ in range(2)]
        for t in threads:
            t.start()
        assert index.wait_embeddings(timeout=600)
        for t in threads:
            t.join(timeout=120)
        assert not errors
        assert set(answers) == {251}
        assert max(seen_pending) > 0 and seen_pending[-1] == 0
        assert index.search("a hot drink Maya likes", k=1, mode="hybrid").hits[0].line == 251
        assert index.status().vectors == 251


def test_model_change_invalidates_the_cache(ws, minilm, tmp_path):
    write(ws, "memory/2026-11-01.md", "\n".join(FACTS) + "\n")
    with open_index(ws, minilm, background=False) as index:
        index.sync()
    # The same weights in another folder are, to the index, another model: hard links keep the copy cheap.
    _name, folder = resolve_model("")
    other = tmp_path / "other-model"
    shutil.copytree(folder, other, copy_function=os.link)
    changed = CountingEmbedder(SentenceTransformerEmbedder(str(other)))
    assert changed.model_id != minilm.model_id
    with open_index(ws, changed, background=False) as index:
        index.sync()
        assert index.status().pending_embeddings == 0
        assert index.status().embedding_model == changed.model_id
    assert len(changed.texts) == len(FACTS)


def test_result_shape(ws, minilm):
    write(ws, "MEMORY.md", "## Preferences\n- Drinks tea, not coffee <!-- id:m-1 src:memory/2026-11-07.md#L3 -->\n")
    write(ws, "memory/2026-11-07.md", "- [09:05] Maya drinks tea, not coffee\n")
    with open_index(ws, minilm, background=False) as index:
        index.sync()
        for mode in ("keyword", "meaning", "hybrid"):
            results = index.search("tea", k=5, mode=mode)
            assert results.mode == mode and results.pending_embeddings == 0
            hit = next(h for h in results.hits if h.path == "MEMORY.md" and h.line == 2)
            assert hit.text == "- Drinks tea, not coffee" and hit.sources == ("memory/2026-11-07.md#L3",)
            assert isinstance(hit.score, float) and "«tea»" in hit.snippet
        assert [h.path for h in index.search("tea", k=1).hits] and index.search("tea").mode == "hybrid"


def test_missing_model_falls_back_to_keywords(ws, tmp_path):
    write(ws, "MEMORY.md", "- Drinks tea\n")
    settings = SearchSettings(embedding_model=str(tmp_path / "no-such-model"))
    with SearchIndex(ws, ws / ".reverie" / "index.db", settings) as index:
        index.sync()
        results = index.search("tea", mode="hybrid")
        assert results.mode == "keyword" and results.hits[0].line == 1
        assert any("no-such-model" in p for p in index.status().problems)
        assert index.wait_embeddings(timeout=1) is False


@pytest.mark.parametrize("bad", ["", "x"])
def test_embedder_rejects_nothing_silently(minilm, bad):
    vectors = minilm.embed_batch([bad])
    assert vectors.shape == (1, minilm.dim)
