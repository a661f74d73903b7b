"""Incremental indexing: what is indexed, what changes, what is reported."""
from __future__ import annotations

import json
import os
import sqlite3

from tests.support.files import write

from core.config import SearchSettings
from core.index import SearchIndex
from core.index.lines import IndexOptions


def rows(ws):
    with sqlite3.connect(ws / ".reverie" / "index.db") as conn:
        return conn.execute("SELECT id, path, line, text FROM lines ORDER BY path, line").fetchall()


def test_what_is_indexed_and_what_is_not(ws, keyword_index, tmp_path):
    write(ws, "MEMORY.md", "# MEMORY\n")
    write(ws, "AGENTS.md", "agents read this\n")
    write(ws, "progress.md", "## Goal\nship the parser\n")
    write(ws, "memory/2026-11-01.md", "- daily words\n")
    write(ws, "memory/archive/2025-01-01.md", "- archived words\n")
    write(ws, "sessions/s1.log.jsonl", json.dumps({"role": "user", "content": "session words"}) + "\n")
    write(ws, "sessions/cache.jsonl", json.dumps({"summary": "cache words"}) + "\n")
    write(ws, "large_tool_results/s1/c1.txt", "evicted words\n")
    write(ws, ".reverie/secret.md", "private words\n")
    write(ws, "notes.md", "stray words\n")
    outside = write(tmp_path, "outside.md", "outside words\n")
    os.symlink(outside, ws / "memory" / "2026-11-02.md")
    report = keyword_index.sync()
    assert sorted(report.added) == ["AGENTS.md", "MEMORY.md", "memory/2026-11-01.md", "memory/archive/2025-01-01.md",
                                    "progress.md", "sessions/s1.log.jsonl"]
    found = {h.path for h in keyword_index.search("words", k=50, mode="fts").hits}
    assert found == {"memory/2026-11-01.md", "memory/archive/2025-01-01.md", "sessions/s1.log.jsonl"}


def test_second_sync_reads_nothing_and_touch_without_change_rewrites_nothing(ws, keyword_index):
    path = write(ws, "memory/2026-11-01.md", "- one\n- two\n")
    first = keyword_index.sync()
    assert first.rows_written == 2
    again = keyword_index.sync()
    assert not again.changed and again.rows_written == 0
    os.utime(path, ns=(1, 1))
    touched = keyword_index.sync()
    assert not touched.changed and touched.rows_written == 0


def test_append_touches_only_that_file_and_keeps_row_ids(ws, keyword_index):
    write(ws, "memory/2026-11-01.md", "# 2026-11-01\n\n- alpha\n- beta\n")
    write(ws, "memory/2026-11-02.md", "- gamma\n")
    keyword_index.sync()
    before = {r[0]: r for r in rows(ws)}
    with open(ws / "memory" / "2026-11-01.md", "a", encoding="utf-8") as handle:
        handle.write("- delta\n")
    report = keyword_index.reindex_file("memory/2026-11-01.md")
    assert report.updated == ["memory/2026-11-01.md"] and report.rows_deleted == 0
    # the new line, and the lines that now carry it as a neighbour (their embedded text is unchanged)
    assert report.rows_written <= 1 + IndexOptions().context_neighbours
    after = {r[0]: r for r in rows(ws)}
    assert set(before) < set(after)
    assert keyword_index.search("delta", mode="fts").hits[0].line == 5


def test_edit_in_the_middle_moves_lines_and_keeps_the_rest(ws, keyword_index):
    write(ws, "MEMORY.md", "## A\n- one fact\n- two fact\n- three fact\n")
    keyword_index.sync()
    ids = {text: i for i, _p, _l, text in rows(ws)}
    write(ws, "MEMORY.md", "## A\n- zero fact\n- one fact\n- two fact\n- three fact\n")
    keyword_index.sync()
    now = {text: (i, line) for i, _p, line, text in rows(ws)}
    assert now["- three fact"] == (ids["- three fact"], 5)
    assert keyword_index.search("zero", mode="fts").hits[0].line == 2


def test_removed_file_leaves_the_index(ws, keyword_index):
    path = write(ws, "memory/2026-11-01.md", "- ephemeral words\n")
    keyword_index.sync()
    path.unlink()
    assert keyword_index.sync().removed == ["memory/2026-11-01.md"]
    assert keyword_index.search("ephemeral", mode="fts").hits == []
    write(ws, "memory/2026-11-03.md", "- back again\n")
    (ws / "memory" / "2026-11-03.md").unlink()
    assert keyword_index.reindex_file("memory/2026-11-03.md").rows_written == 0


def test_memory_md_sources_and_comments_stripped(ws, keyword_index):
    write(ws, "MEMORY.md", "## Preferences\n"
                           "- Prefers tea over coffee <!-- id:m-3f2a src:memory/2026-11-30.md#L12-L14 src:session:abc#7 pin -->\n")
    keyword_index.sync()
    hit = keyword_index.search("tea", mode="fts").hits[0]
    assert hit.text == "- Prefers tea over coffee"
    assert hit.sources == ("memory/2026-11-30.md#L12-L14", "session:abc#7")
    assert keyword_index.search("m-3f2a pin", mode="fts").hits == [] or \
        all("m-3f2a" not in h.text for h in keyword_index.search("m-3f2a", mode="fts").hits)


def test_session_rows_are_jsonl_lines_with_tool_calls(ws, keyword_index):
    lines = [
        json.dumps({"role": "user", "content": "please run the migration"}),
        "{not json",
        json.dumps({"role": "assistant", "content": "", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "run_shell", "arguments": '{"cmd": "alembic upgrade"}'}}]}),
        json.dumps({"role": "tool", "name": "run_shell", "tool_call_id": "c1", "content": [{"type": "text", "text": "ok 3 revisions"}]}),
    ]
    write(ws, "sessions/abc.log.jsonl", "\n".join(lines) + "\n")
    report = keyword_index.sync()
    assert any("sessions/abc.log.jsonl:2" in p for p in report.problems)
    call = keyword_index.search("alembic", mode="fts").hits[0]
    assert (call.path, call.line) == ("sessions/abc.log.jsonl", 3) and "run_shell" in call.text
    assert keyword_index.search("revisions", mode="fts").hits[0].line == 4


def test_non_utf8_file_is_indexed_and_reported(ws, keyword_index):
    write(ws, "memory/2026-11-01.md", b"- caf\xe9 latte with Bob\n- plain line\n")
    report = keyword_index.sync()
    assert report.added == ["memory/2026-11-01.md"]
    assert any("not UTF-8" in p for p in report.problems)
    hit = keyword_index.search("latte", mode="fts").hits[0]
    assert "\ufffd" in hit.text
    assert any("not UTF-8" in p for p in keyword_index.status().problems)


def test_reopen_is_incremental_and_options_change_rederives(ws):
    write(ws, "memory/2026-11-01.md", "- persistent words\n")
    db = ws / ".reverie" / "index.db"
    with SearchIndex(ws, db, SearchSettings(), embedder=False) as index:
        assert index.sync().rows_written == 1
    with SearchIndex(ws, db, SearchSettings(), embedder=False) as index:
        assert not index.sync().changed
        assert index.status().files == 1 and index.status().lines == 1
    with SearchIndex(ws, db, SearchSettings(), embedder=False, options=IndexOptions(context_neighbours=0)) as index:
        assert index.sync().updated == ["memory/2026-11-01.md"]


def test_damaged_database_is_a_clear_error(ws):
    import pytest

    from core.errors import CoreError

    db = write(ws, ".reverie/index.db", b"this is not a database" * 100)
    with pytest.raises(CoreError, match="delete it"):
        SearchIndex(ws, db, SearchSettings(), embedder=False)


def test_an_index_of_the_first_schema_gains_the_heading_index_and_keeps_its_rows(ws):
    write(ws, "memory/2026-11-01.md", "# 2026-11-01\n\n## Conversation at 09:00\n- tea talk\n- more tea\n")
    db = ws / ".reverie" / "index.db"
    with SearchIndex(ws, db, SearchSettings(), embedder=False) as index:
        index.sync()
    conn = sqlite3.connect(db)      # as a schema-1 index left it: no heading index
    conn.execute("DROP INDEX lines_headings")
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()
    with SearchIndex(ws, db, SearchSettings(), embedder=False) as index:
        assert not index.sync().changed
        conn = index.db.conn()
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 2
        from core.index.db import HEADING_CONDITION
        plan = conn.execute("EXPLAIN QUERY PLAN SELECT line FROM lines WHERE path = ? AND line <= ? AND ("
                            + HEADING_CONDITION + ") ORDER BY line DESC LIMIT 1", ("memory/2026-11-01.md", 5)).fetchall()
        assert "lines_headings" in str(plan)       # the nearest heading above a hit is one index step
        assert sorted(h.line for h in index.search("tea", mode="fts").hits) == [4, 5]
