"""The Workspace facade over real files: layout, MEMORY.md CAS + history + undo, daily logs."""
from __future__ import annotations

import datetime as dt
import os

import pytest

from core.errors import ConflictError, NotFoundError, PathEscapeError, WorkspaceError
from core.store.hashing import file_hash
from core.workspace import Workspace


def test_create_makes_the_full_layout(tmp_path):
    ws = Workspace.create(tmp_path / "w")
    for rel in ("memory", "memory/archive", "sessions", "checkpoints", "handoffs", "large_tool_results",
                ".reverie/history", ".reverie/proposals"):
        assert (ws.root / rel).is_dir(), rel
    assert "## Preferences" in ws.read_memory().text


def test_create_never_overwrites_existing_memory(tmp_path):
    root = tmp_path / "w"
    root.mkdir()
    (root / "MEMORY.md").write_text("- mine\n")
    Workspace.create(root)
    assert (root / "MEMORY.md").read_text() == "- mine\n"


def test_open_existing_openclaw_layout_as_it_is(tmp_path):
    root = tmp_path / "claw"
    (root / "memory").mkdir(parents=True)
    (root / "MEMORY.md").write_text("## Notes\n- a fact\n")
    (root / "memory" / "2026-11-30.md").write_text("- did a thing\n")
    ws = Workspace.open(root)
    assert [log.date for log in ws.daily_logs()] == [dt.date(2026, 11, 30)]
    assert (root / "MEMORY.md").read_text() == "## Notes\n- a fact\n"
    assert not (root / "sessions").exists()   # opening adds only private state


def test_open_refuses_a_folder_that_is_not_a_workspace(tmp_path):
    with pytest.raises(WorkspaceError, match="not a memory workspace"):
        Workspace.open(tmp_path)
    with pytest.raises(WorkspaceError, match="does not exist"):
        Workspace.open(tmp_path / "nope")


def test_memory_write_is_compare_and_swap_with_history_and_undo(workspace):
    first = workspace.read_memory()
    changes = workspace.write_memory(first.text + "- likes tea\n", first.hash, reason="add tea")
    assert changes.paths == ("MEMORY.md",) and changes.kinds == ("memory",)
    second = workspace.read_memory()
    assert second.text.endswith("- likes tea\n")
    with pytest.raises(ConflictError):
        workspace.write_memory("stale\n", first.hash)
    assert workspace.read_memory().text == second.text
    [entry] = workspace.history_entries("MEMORY.md")
    assert entry.reason == "add tea" and entry.hash_before == first.hash and entry.hash_after == second.hash
    workspace.undo()
    assert workspace.read_memory().text == first.text
    with pytest.raises(NotFoundError):
        workspace.undo()


def test_undo_refuses_when_the_file_changed_after(workspace):
    snap = workspace.read_memory()
    workspace.write_memory(snap.text + "- one\n", snap.hash)
    (workspace.root / "MEMORY.md").write_text("edited by hand\n")
    with pytest.raises(ConflictError, match="changed after"):
        workspace.undo()
    assert (workspace.root / "MEMORY.md").read_text() == "edited by hand\n"


def test_restore_an_old_version_is_itself_undoable(workspace):
    v1 = workspace.read_memory()
    workspace.write_memory("v2\n", v1.hash)
    v2 = workspace.read_memory()
    workspace.write_memory("v3\n", v2.hash)
    oldest = workspace.history_entries("MEMORY.md")[-1]
    workspace.restore("MEMORY.md", oldest.id, workspace.read_memory().hash)
    assert workspace.read_memory().text == v1.text
    workspace.undo()
    assert workspace.read_memory().text == "v3\n"


def test_pure_append_during_an_edit_is_merged_not_lost(workspace):
    base = workspace.read_memory()
    with open(workspace.root / "MEMORY.md", "a", encoding="utf-8") as handle:
        handle.write("- appended by the agent\n")
    changes = workspace.write_memory(base.text.replace("## Decisions", "## Decisions\n- edited by me"),
                                     base.hash, base_text=base.text)
    text = workspace.read_memory().text
    assert "- edited by me" in text and text.endswith("- appended by the agent\n")
    assert changes.info["merged_append"] == "- appended by the agent\n"


def test_a_real_conflict_is_not_merged(workspace):
    base = workspace.read_memory()
    (workspace.root / "MEMORY.md").write_text("rewritten elsewhere\n")
    with pytest.raises(ConflictError):
        workspace.write_memory("mine\n", base.hash, base_text=base.text)
    assert (workspace.root / "MEMORY.md").read_text() == "rewritten elsewhere\n"


def test_append_daily_is_append_only_and_reports_lines(workspace):
    day = dt.date(2026, 12, 1)
    a = workspace.append_daily("first fact\nsecond fact", day=day)
    path = workspace.root / "memory" / "2026-12-01.md"
    inode = os.stat(path).st_ino
    b = workspace.append_daily("- third fact", day=day)
    assert os.stat(path).st_ino == inode     # appended in place, never replaced
    lines = path.read_text().split("\n")
    assert lines[0] == "# 2026-12-01"
    first, last = a.info["lines"]
    assert lines[first - 1:last] == ["- first fact", "- second fact"]
    assert lines[b.info["lines"][0] - 1] == "- third fact"
    assert workspace.append_daily("   \n").empty


def test_append_daily_adds_a_newline_to_a_file_that_lacks_one(workspace):
    day = dt.date(2026, 12, 2)
    path = workspace.paths.daily_log(day)
    path.write_text("- hand written, no newline")
    workspace.append_daily("agent fact", day=day)
    assert path.read_text().split("\n") == ["- hand written, no newline", "- agent fact", ""]


def test_history_survives_in_files(workspace):
    snap = workspace.read_memory()
    workspace.write_memory("new\n", snap.hash, reason="r")
    reopened = Workspace.open(workspace.root)
    [entry] = reopened.history_entries("MEMORY.md")
    assert reopened.history.snapshot(entry).decode() == snap.text
    assert file_hash(workspace.root / "MEMORY.md") == entry.hash_after


def test_changes_made_above_the_facade_are_named_from_its_layout(workspace):
    """A proposal decided or a session ended (core.dream, core.harness) is described in the facade's Changes."""
    decided = workspace.proposal_changes("d-20260101-0001")
    assert decided.paths == (".reverie/proposals/d-20260101-0001.json",) and decided.kinds == ("proposal",)
    assert workspace.proposal_changes().paths == (".reverie/proposals/",)
    with pytest.raises(PathEscapeError):
        workspace.proposal_changes("../MEMORY")            # an id is never a path out of the folder
    ended = workspace.session_end_changes()
    assert set(ended.paths) == {"sessions/", "memory/"} and set(ended.kinds) == {"session", "daily"}
