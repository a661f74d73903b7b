"""The MCP tools as plain methods over a real workspace (no protocol in between)."""
from __future__ import annotations

import datetime as dt

import pytest

from core.errors import CoreError, FormatError, NotFoundError, PathEscapeError
from core.mcp.tools import MAX_READ_CHARS, MemoryTools, ToolInputError


def test_memory_get_pages_long_files_and_names_the_next_start(workspace):
    lines = [f"line {n} " + "x" * 900 for n in range(1, 61)]
    (workspace.root / "memory" / "2026-01-01.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    tools = MemoryTools(workspace)
    first = tools.memory_get("memory/2026-01-01.md")
    shown = [line for line in first.splitlines()[1:] if line[:1].isdigit()]
    assert first.startswith("memory/2026-01-01.md lines 1-") and "of 60" in first.splitlines()[0]
    assert sum(len(line) for line in shown) <= MAX_READ_CHARS + 100 * len(shown)
    next_start = len(shown) + 1
    assert f"call memory_get with start={next_start}" in first
    rest = tools.memory_get("memory/2026-01-01.md", start=next_start, end=next_start + 1)
    assert rest.splitlines()[1].startswith(f"{next_start}: line {next_start} ")
    assert "has 60 line(s)" in tools.memory_get("memory/2026-01-01.md", start=100)


def test_private_state_is_refused_and_a_missing_file_reads_empty_with_its_path(workspace):
    tools = MemoryTools(workspace)
    for path in (".reverie/config.toml", ".reverie", "./.reverie/history"):
        with pytest.raises(PathEscapeError):
            tools.memory_get(path)
    assert tools.memory_get("memory/1999-01-01.md") == "memory/1999-01-01.md is empty (no such file yet)"
    with pytest.raises(PathEscapeError):
        tools.memory_get("../outside-the-workspace.md")     # a missing file outside is still refused
    with pytest.raises(ToolInputError):
        tools.memory_get("  ")


def test_memory_append_writes_one_stamped_bullet(workspace):
    tools = MemoryTools(workspace)
    when = dt.datetime(2026, 3, 4, 9, 7).astimezone()
    out = tools.memory_append("  Maya moved to\nPorto  ", source="chat with Maya", now=when)
    assert out == {"path": "memory/2026-03-04.md", "line": 3, "last_line": 3,
                   "text": "- [09:07] Maya moved to Porto (source: chat with Maya)", "redacted": 0}
    assert (workspace.root / out["path"]).read_text(encoding="utf-8").splitlines() == [
        "# 2026-03-04", "", "- [09:07] Maya moved to Porto (source: chat with Maya)"]
    for bad in ("", "   ", "- ", "x" * 2001):
        with pytest.raises(ToolInputError):
            tools.memory_append(bad, now=when)
    assert len((workspace.root / out["path"]).read_text(encoding="utf-8").splitlines()) == 3


def test_memory_append_redacts_a_pasted_secret_and_says_so(workspace):
    tools = MemoryTools(workspace)
    when = dt.datetime(2026, 3, 4, 9, 7).astimezone()
    out = tools.memory_append("The staging DB password is Heron-Glide-3307, rotate it Friday", now=when)
    assert out["redacted"] == 1
    assert out["text"] == "- [09:07] The staging DB password is [redacted password], rotate it Friday"
    on_disk = (workspace.root / out["path"]).read_text(encoding="utf-8")
    assert "Heron-Glide-3307" not in on_disk and out["text"] in on_disk
    # a token in the source note is kept out too
    out = tools.memory_append("CI uses a token", source="ghp_Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0UvWxYz", now=when)
    assert out["redacted"] == 1 and "ghp_" not in (workspace.root / out["path"]).read_text(encoding="utf-8")


def test_checkpoints_round_trip_and_bad_ones_are_refused(workspace):
    tools = MemoryTools(workspace)
    assert tools.checkpoint_load()["found"] is False
    saved = tools.checkpoint_save("Migrate billing", ["schema"], ["copy data"], session_id="s1",
                                  artifacts={"schema.sql": "a" * 64})
    loaded = tools.checkpoint_load("s1")
    assert loaded["checkpoint"]["checkpoint_id"] == saved["checkpoint_id"] and loaded["next_task"] is None
    with pytest.raises(FormatError):
        tools.checkpoint_save("t", [], [], tasks=[{"id": "a", "depends_on": ["missing"]}])
    with pytest.raises(PathEscapeError):
        tools.checkpoint_save("t", [], [], session_id="a/../../b")


def test_progress_update_needs_something_and_keeps_a_persons_sections(workspace):
    tools = MemoryTools(workspace)
    with pytest.raises(ToolInputError):
        tools.progress_update()
    (workspace.root / "progress.md").write_text("# Progress\n\n## Goal\nShip it\n\n## Notes from Maya\nbe careful\n",
                                                encoding="utf-8")
    text = tools.progress_update(done="tests pass", blockers=["CI is red"])
    assert "Ship it" in text and "- tests pass" in text and "- CI is red" in text and "be careful" in text


def test_handoff_read_without_an_id_gives_the_newest_for_an_agent(workspace):
    tools = MemoryTools(workspace)
    with pytest.raises(NotFoundError):
        tools.handoff_read()
    base = {"original_target": "t", "why_this_agent": "w", "completed_work": [], "known_constraints": [],
            "failed_attempts": [], "current_state": "s", "success_criteria": "c", "termination_condition": "d"}
    tools.handoff_create({**base, "from_agent": "a", "to_agent": "b"}, task_id="t1")
    second = tools.handoff_create({**base, "from_agent": "b", "to_agent": "c"}, task_id="t1")["handoff"]
    assert tools.handoff_read(to_agent="c")["id"] == second["id"]
    with pytest.raises(NotFoundError):
        tools.handoff_read(to_agent="nobody")
    with pytest.raises(CoreError):
        tools.handoff_create({**base, "from_agent": "c", "to_agent": "a"}, task_id="t1")   # a loop


def test_search_sees_files_written_by_another_process(workspace):
    from core.index import SearchIndex

    # A keyword-only index: this test is about noticing outside changes, and closing an index whose
    # background embedder is still loading torch would take longer than the test itself.
    workspace._index = SearchIndex(workspace.root, workspace.paths.index_db, workspace.settings.search, embedder=False)
    now = [0.0]
    tools = MemoryTools(workspace, clock=lambda: now[0])
    assert tools.memory_search("kumquat", mode="keyword")["hits"] == []
    # the desktop app (or a person) appends while the server runs: no reindex call reaches us
    with open(workspace.paths.daily_log(dt.date(2026, 2, 2)), "a", encoding="utf-8") as handle:
        handle.write("# 2026-02-02\n\n- Maya grows kumquats on her balcony\n")
    now[0] += 10
    hits = tools.memory_search("kumquat", mode="keyword")["hits"]
    assert hits and hits[0]["path"] == "memory/2026-02-02.md" and hits[0]["line"] == 3
    with pytest.raises(ToolInputError):
        tools.memory_search("   ")
    with pytest.raises(ToolInputError):
        tools.memory_search("tea", mode="fuzzy")


def test_search_filters_by_kind_and_date_and_says_why(demo_workspace):
    tools = MemoryTools(demo_workspace)
    found = tools.memory_search("websockets", mode="keyword", kinds=["tasks"])
    assert found["mode"] == "keyword" and found["hits"]
    assert all(h["kind"] in ("handoff", "checkpoint", "progress") for h in found["hits"])
    hit = found["hits"][0]
    assert hit["path"] == "handoffs/ho-orchard-oncall.json" and hit["match"] == "words" and hit["words"] == ["websockets"]
    memory = tools.memory_search("Maya", mode="keyword", kinds=["memory"])["hits"]
    assert memory and all(h["kind"] == "memory" and h["path"] == "MEMORY.md" for h in memory)
    assert tools.memory_search("Maya", mode="keyword", since="2000-01-01", until="2000-01-02")["hits"] == []
    with pytest.raises(ToolInputError, match="unknown kind"):
        tools.memory_search("tea", kinds=["diary"])
    with pytest.raises(ToolInputError, match="YYYY-MM-DD"):
        tools.memory_search("tea", since="yesterday")


def test_memory_resource_strips_provenance(demo_workspace):
    tools = MemoryTools(demo_workspace)
    text = tools.memory_md()
    assert "## Decisions" in text and "<!--" not in text and "src:" not in text
    assert tools.today_log(dt.date(1990, 1, 1)) == ""
