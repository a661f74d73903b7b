"""The index build in a child process (the desktop app's): same rows, and the parent's vectors follow."""
from __future__ import annotations

import sqlite3

import pytest
from tests.support.files import write

from core.cancel import Cancelled
from core.config import SearchSettings
from core.index import SearchIndex

FACTS = ["- Maya drinks tea, never coffee", "- The cat is called Pixel and sleeps on the router",
         "- Deploys go out on Thursdays after the standup", "- The staging database lives on port 5433"]


def rows(root):
    with sqlite3.connect(root / ".reverie" / "index.db") as conn:
        return conn.execute("SELECT path, line, text, sources, day, ehash FROM lines ORDER BY path, line").fetchall()


def test_a_child_sync_writes_what_an_in_process_sync_writes(tmp_path):
    roots = []
    for name in ("here", "child"):
        root = tmp_path / name
        write(root, "MEMORY.md", "# MEMORY\n\n## Facts\n" + "\n".join(FACTS) + " <!-- src:memory/2026-11-01.md#L3 -->\n")
        write(root, "memory/2026-11-01.md", "# 2026-11-01\n\n" + "\n".join(FACTS) + "\n")
        write(root, "memory/2026-11-02.md", b"# 2026-11-02\n\n- caf\xe9 latin-1 bytes\n")
        roots.append(root)
    reports = []
    for root, in_child in zip(roots, (False, True)):
        index = SearchIndex(root, root / ".reverie" / "index.db", SearchSettings(), embedder=False)
        try:
            reports.append(index.sync(in_child=in_child))
            assert index.search("Pixel router", k=3, mode="fts").hits[0].path in ("MEMORY.md", "memory/2026-11-01.md")
        finally:
            index.close()
    here, child = reports
    assert rows(roots[0]) == rows(roots[1])
    assert sorted(child.added) == sorted(here.added) and child.rows_written == here.rows_written
    assert child.problems and child.problems == here.problems           # the non-UTF-8 file, reported the same


def test_progress_and_an_incremental_second_run(tmp_path):
    root = tmp_path / "ws"
    write(root, "memory/2026-11-01.md", "# 2026-11-01\n\n" + "\n".join(FACTS) + "\n")
    with SearchIndex(root, root / ".reverie" / "index.db", SearchSettings(), embedder=False) as index:
        seen = []
        first = index.sync(lambda done, total, rel: seen.append((done, total, rel)), in_child=True)
        assert first.added == ["memory/2026-11-01.md"] and seen[-1] == (1, 1, "")
        write(root, "memory/2026-11-01.md", "# 2026-11-01\n\n" + "\n".join(FACTS) + "\n- One more line\n")
        second = index.sync(in_child=True)
        assert second.updated == ["memory/2026-11-01.md"] and 1 <= second.rows_written < first.rows_written


def indexed_with_vectors(root, embedder, facts_rel: str, lunch_rel: str):
    """FACTS in one file, a lunch in another, synced in a child; vectors embedded as it goes."""
    path = write(root, facts_rel, "## Facts\n" + "\n".join(FACTS) + "\n")
    write(root, lunch_rel, "# 2026-11-01\n\n- Lunch was a bifana near the office\n")
    index = SearchIndex(root, root / ".reverie" / "index.db", SearchSettings(), embedder=embedder, background=False)
    index.sync(in_child=True)
    return index, path


def test_rows_a_child_sync_deletes_leave_the_parents_vector_index(tmp_path, minilm):
    root = tmp_path / "ws"
    index, path = indexed_with_vectors(root, minilm, "MEMORY.md", "memory/2026-11-01.md")
    with index:
        assert index.status().vectors == index.status().lines - index.status().not_embedded == 6
        assert index.search("what is the cat's name", k=1, mode="vector").hits[0].text == FACTS[1]
        path.write_text("## Facts\n" + "\n".join(f for f in FACTS if "Pixel" not in f) + "\n", encoding="utf-8")
        (root / "memory" / "2026-11-01.md").unlink()
        report = index.sync(in_child=True)
        assert report.removed == ["memory/2026-11-01.md"] and report.rows_deleted >= 2
        texts = [h.text for h in index.search("what is the cat's name", k=10, mode="vector").hits]
        assert FACTS[1] not in texts and not any("bifana" in t for t in texts)
        assert index.status().vectors == index.status().lines - index.status().not_embedded


def test_a_cancelled_child_sync_still_drops_the_vectors_of_rows_it_deleted(tmp_path, minilm):
    root = tmp_path / "ws"
    index, first = indexed_with_vectors(root, minilm, "memory/2026-11-01.md", "memory/2026-11-02.md")
    with index:
        first.write_text("# 2026-11-01\n\n- Only this line is left\n", encoding="utf-8")
        write(root, "memory/2026-11-02.md", "# 2026-11-02\n\n- Dinner was caldo verde\n")

        def stop_after_the_first_file(done, total, rel):
            if done >= 1:
                raise Cancelled("the app is quitting")
        with pytest.raises(Cancelled):
            index.sync(stop_after_the_first_file, in_child=True)
        # The first file's old rows are gone from the database: their vectors must be gone too.
        texts = [h.text for h in index.search("what is the cat's name", k=10, mode="vector").hits]
        assert FACTS[1] not in texts
        assert len(index.worker.vectors) <= index.status().lines
