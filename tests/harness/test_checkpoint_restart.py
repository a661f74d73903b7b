"""Checkpoints (schema, when they are saved, resume), hand-offs, and the fresh restart."""
from __future__ import annotations

import hashlib
import subprocess

import pytest

from core.errors import HandoffLoopError
from core.harness.anchor import Anchor, AnchorStore
from core.harness.checkpointing import Checkpointer
from core.harness.handoff import build_packet, packet_as_context
from core.harness.restart import fresh_restart
from core.store.checkpoints import validate_checkpoint


def test_checkpoints_before_and_after_side_effect_tools_with_artifact_hashes(workspace):
    cp = Checkpointer(workspace, "s1", "write the report")
    (workspace.root / "report.md").write_text("draft\n")
    assert cp.before_tool("memory_search", {"query": "x"}) is None      # no side effect, no checkpoint
    before = cp.before_tool("write_file", {"path": "report.md"})
    after = cp.after_tool("write_file", {"path": "report.md"})
    assert before["reason"] == "before write_file" and after["reason"] == "after write_file"
    assert after["artifacts"] == {"report.md": hashlib.sha256(b"draft\n").hexdigest()}
    assert validate_checkpoint(after) == []
    assert workspace.latest_checkpoint("s1")["checkpoint_id"] == after["checkpoint_id"]
    failed = cp.after_tool("write_file", {"path": "report.md"}, error="disk full")
    assert failed["error_state"] == {"tool": "write_file", "error": "disk full"}


def test_timer_and_milestones(workspace):
    now = [0.0]
    cp = Checkpointer(workspace, "s1", "t", timer_s=60, clock=lambda: now[0])
    assert cp.maybe_timer() is None
    now[0] = 61
    assert cp.maybe_timer()["reason"] == "timer"
    assert cp.maybe_timer() is None
    assert cp.milestone("half way")["last_action"] == "milestone: half way"
    ids = [p.stem for p in workspace.checkpoint_files("s1")]
    assert ids == sorted(ids) and len(ids) == 2


def test_task_graph_resumes_at_first_pending_task_with_done_dependencies(workspace):
    cp = Checkpointer(workspace, "s1", "release")
    cp.set_tasks(["build", "test", "tag"])
    cp.mark("t1", "done")
    cp.save("milestone")
    fresh = Checkpointer(workspace, "s1")
    task = fresh.resume_from(fresh.latest())
    assert task["id"] == "t2" and fresh.completed == ["build"] and fresh.pending == ["test", "tag"]
    assert fresh.target == "release"


def test_handoff_packet_and_loop_refusal(workspace):
    anchor = Anchor(goal="fix the flaky test", progress=("reproduced it",), blockers=("no CI logs",))
    packet = build_packet(from_agent="alice", to_agent="bob", target="fix the flaky test", why="bob owns CI",
                          anchor=anchor, completed=["reproduced it"], failed=["rerun — still flaky"])
    record, _ = workspace.create_handoff(packet, task_id="flaky")
    text = packet_as_context(workspace.read_handoff(record["id"]))
    assert "from alice to bob" in text and "rerun — still flaky" in text and "blocker: no CI logs" in text
    onward = build_packet(from_agent="bob", to_agent="carol", target="fix the flaky test", why="carol knows it",
                          anchor=anchor, completed=[], failed=[])
    workspace.create_handoff(onward, task_id="flaky")
    back = build_packet(from_agent="carol", to_agent="alice", target="fix the flaky test", why="back",
                        anchor=anchor, completed=[], failed=[])
    with pytest.raises(HandoffLoopError):
        workspace.create_handoff(back, task_id="flaky")


def test_fresh_restart_reads_agents_progress_checkpoint_git_and_failing_tests(workspace):
    root = workspace.root
    (root / "AGENTS.md").write_text("Always run the tests before committing.\n")
    AnchorStore(workspace).update(goal="ship Orion", next_step="tag it")
    cp = Checkpointer(workspace, "s1", "ship Orion")
    cp.set_tasks(["build", "tag"])
    cp.mark("t1", "done")
    cp.save("milestone")
    (root / "failing_tests.txt").write_text("tests/test_tag.py::test_tag_exists\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "-c", "user.email=a@b", "-c", "user.name=a", "add", "AGENTS.md"],
                   check=True)
    subprocess.run(["git", "-C", str(root), "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "x"],
                   check=True)
    (root / "AGENTS.md").write_text("Always run the tests before committing.\nNever force-push.\n")
    start = fresh_restart(workspace, session_id="s1")
    assert list(start.sections) == ["AGENTS.md", "progress.md", "latest checkpoint", "git diff",
                                    "failing tests (failing_tests.txt)"]
    assert "+Never force-push." in start.sections["git diff"]
    assert "Resume at task t2: tag" in start.text and "test_tag_exists" in start.text
    assert start.resume_task["id"] == "t2"


def test_fresh_restart_outside_git_and_with_nothing_saved(workspace):
    start = fresh_restart(workspace)
    assert start.sections == {} and "nothing saved yet" in start.text
