"""Gather reads only what changed since the watermark, with exact line sources."""
from __future__ import annotations

import datetime as dt
import os

from tests.support.dreamkit import write_log

from core.dream.pipeline.material import facts_from_lines, gather
from core.dream.review.sources import SourceResolver
from core.dream.state import load_state, record_dream_finished
from core.store.atomic import append_durable


def test_only_logs_changed_after_the_watermark_are_read(workspace):
    for n in range(1, 31):
        write_log(workspace, f"2026-10-{n:02d}", [f"old fact {n}"], mtime=1_000_000 + n)
    record_dream_finished(workspace.paths, 1_000_030, now=dt.datetime(2026, 11, 1, tzinfo=dt.timezone.utc))
    write_log(workspace, "2026-11-01", ["new fact one", "new fact two"], mtime=1_000_100)
    material = gather(workspace.paths, load_state(workspace.paths))
    assert material.files_read == ["memory/2026-11-01.md"]
    assert material.files_seen == 31
    assert [f.text for f in material.facts] == ["new fact one", "new fact two"]
    assert [f.sources for f in material.facts] == [("memory/2026-11-01.md#L3",), ("memory/2026-11-01.md#L4",)]
    assert material.watermark == 1_000_100
    resolver = SourceResolver(workspace.paths)
    assert all(resolver.all_resolve(f.sources) for f in material.facts)


def test_an_appended_log_is_read_from_where_the_last_dream_stopped(workspace):
    write_log(workspace, "2026-11-01", ["first fact", "second fact"])
    material = gather(workspace.paths, load_state(workspace.paths))
    record_dream_finished(workspace.paths, material.watermark, consumed=material.consumed)
    path = workspace.paths.memory_dir / "2026-11-01.md"
    append_durable(path, "- third fact\n")
    os.utime(path, (material.watermark + 5, material.watermark + 5))
    again = gather(workspace.paths, load_state(workspace.paths))
    assert [f.text for f in again.facts] == ["third fact"]
    assert again.facts[0].sources == ("memory/2026-11-01.md#L5",)


def test_an_edited_log_is_read_again_from_the_top(workspace):
    write_log(workspace, "2026-11-01", ["first fact", "second fact"])
    material = gather(workspace.paths, load_state(workspace.paths))
    record_dream_finished(workspace.paths, material.watermark, consumed=material.consumed)
    write_log(workspace, "2026-11-01", ["first fact, corrected", "second fact"], mtime=material.watermark + 5)
    again = gather(workspace.paths, load_state(workspace.paths))
    assert [f.text for f in again.facts] == ["first fact, corrected", "second fact"]


def test_fact_parsing_strips_markers_times_comments_and_joins_continuations():
    lines = ["# 2026-11-01", "", "## Memory Flush — 2026-11-01T18:00:00+00:00",
             "- [09:12] Maya prefers tea <!-- note -->", "- a bullet that", "  continues here",
             "<!-- only a comment -->", "plain prose line is a fact too", "- ok"]
    facts = facts_from_lines("memory/2026-11-01.md", lines, 0, "2026-11-01")
    assert [(f.text, f.sources[0]) for f in facts] == [
        ("Maya prefers tea", "memory/2026-11-01.md#L4"),
        ("a bullet that continues here", "memory/2026-11-01.md#L5-L6"),
        ("plain prose line is a fact too", "memory/2026-11-01.md#L8")]


def test_the_same_fact_twice_is_one_fact_with_two_sources(workspace):
    write_log(workspace, "2026-11-01", ["Prefers tea over coffee"])
    write_log(workspace, "2026-11-02", ["prefers tea over coffee."])
    material = gather(workspace.paths, load_state(workspace.paths))
    assert len(material.facts) == 1
    assert material.facts[0].sources == ("memory/2026-11-01.md#L3", "memory/2026-11-02.md#L3")


def test_session_summaries_since_the_last_dream_are_material(workspace):
    cache = workspace.session_cache
    cache.add("s-old", "An old session that was already consolidated into memory.")
    record_dream_finished(workspace.paths, 0.0, now=dt.datetime.now(dt.timezone.utc) + dt.timedelta(seconds=1))
    lines = workspace.paths.session_cache.read_text().splitlines()
    import json

    entries = [json.loads(line) for line in lines]
    entries.append({"session_id": "s-new", "ended": (dt.datetime.now(dt.timezone.utc) + dt.timedelta(hours=1)).isoformat(),
                    "summary": "Set up the CSV export. Tenant isolation test still fails."})
    workspace.paths.session_cache.write_text("".join(json.dumps(e) + "\n" for e in entries))
    material = gather(workspace.paths, load_state(workspace.paths))
    assert material.sessions == ["s-new"]
    assert [f.text for f in material.facts] == ["Set up the CSV export.", "Tenant isolation test still fails."]
    assert all(f.sources == ("session:s-new",) for f in material.facts)
    assert SourceResolver(workspace.paths).all_resolve(material.facts[0].sources)


def test_a_compaction_summary_gives_its_facts_not_its_marker_titles_or_todo_list():
    from core.dream.pipeline.material import summary_facts
    from core.harness.summary import SummaryData, render

    text = render(SummaryData(intent="Ship the CSV export for tenants", achieved=["Wrote the CSV exporter module"],
                              pending=["Fix the tenant isolation test later"], decisions=["Exports use UTF-8 with a BOM"],
                              next_steps=["Run the full test suite again"], compacted_messages=40,
                              offload_path="sessions/s-1.log.jsonl"))
    facts = [f.text for f in summary_facts("s-1", text)]
    assert any("CSV exporter module" in f for f in facts) and any("UTF-8 with a BOM" in f for f in facts)
    assert not any("compacted" in f or "Summary of the earlier" in f for f in facts)
    assert not any("tenant isolation" in f or "full test suite" in f or "Session intent" in f for f in facts)
