"""The shared activity log: every entry point records who, when and what; the idle monitor reads it."""
from __future__ import annotations

import json
import os
import time

import pytest

from core.dream.schedule.idle import OUTSIDE_AGENT, IdleMonitor, record_agent_turn
from core.store import activity
from core.store.activity import last_by_agent, latest, read_since, record_activity


def test_records_keep_each_agents_newest_and_the_whole_history(workspace):
    paths = workspace.paths
    assert latest(paths) is None and last_by_agent(paths) == {}
    record_activity(paths, "claude-code", "search", "memory_search", when=1_000.0)
    record_activity(paths, "cursor", "read", "memory_get", when=2_000.0)
    record_activity(paths, "claude-code", "write", "memory_append", when=3_000.0)
    record_activity(paths, "cursor", "read", "late record of an older call", when=1_500.0)   # out of order
    last = last_by_agent(paths)
    assert list(last) == ["claude-code", "cursor"]                 # newest agent first
    assert (last["claude-code"].kind, last["claude-code"].detail) == ("write", "memory_append")
    assert last["cursor"].timestamp == 2_000.0                     # an older record never replaces a newer one
    assert latest(paths).agent == "claude-code"
    assert latest(paths, exclude=("claude-code",)).agent == "cursor"
    assert [e.timestamp for e in read_since(paths, 1_500.0)] == [1_500.0, 2_000.0, 3_000.0]
    with pytest.raises(ValueError):
        record_activity(paths, "x", "dance")


def test_names_and_details_are_one_bounded_line_and_damage_is_skipped(workspace):
    paths = workspace.paths
    entry = record_activity(paths, "  evil\nname " + "x" * 500, "read", "a\nb" * 500)
    assert "\n" not in entry.agent and len(entry.agent) <= activity.MAX_NAME_CHARS
    assert len(entry.detail) <= activity.MAX_DETAIL_CHARS
    with open(activity.log_file(paths), "a", encoding="utf-8") as log:
        log.write("not json\n" + json.dumps({"at": "yesterday", "agent": "a", "kind": "read"}) + "\n")
    assert len(read_since(paths, 0)) == 1                          # the damaged lines are skipped
    (paths.private_dir / "activity_last.json").write_text("{broken", encoding="utf-8")
    assert last_by_agent(paths) == {}                              # a damaged summary reads as empty
    record_activity(paths, "codex", "search")                      # and the next record repairs it
    assert list(last_by_agent(paths)) == ["codex"]


def test_the_log_rotates_instead_of_growing_without_end(workspace, monkeypatch):
    monkeypatch.setattr(activity, "ROTATE_BYTES", 300)
    for i in range(20):
        record_activity(workspace.paths, "agent", "search", f"call {i}", when=1_000.0 + i)
    assert os.path.getsize(activity.log_file(workspace.paths)) < 600
    assert (workspace.paths.private_dir / "activity.1.jsonl").exists()
    kept = read_since(workspace.paths, 0)
    assert kept[-1].detail == "call 19" and len(kept) < 20


def _age_files(root, now: float) -> None:
    """Make every workspace file an hour old: only what a test records counts as activity."""
    for path in root.rglob("*"):
        if path.is_file():
            os.utime(path, (now - 3600, now - 3600))


def test_the_idle_monitor_counts_a_recorded_read_as_activity(workspace):
    now = time.time()
    _age_files(workspace.paths.root, now)
    monitor = IdleMonitor(workspace.paths, idle_minutes=10, clock=lambda: now)
    assert monitor.is_idle()
    record_activity(workspace.paths, "claude-code", "search", "memory_search", when=now - 60)
    assert not monitor.is_idle()
    assert monitor.last_activity()[1] == "claude-code: search memory_search"
    assert monitor.stop_check(now - 120)().startswith("the agent became active (claude-code")
    record_agent_turn(workspace.paths, now - 30)                   # the app's chat panel
    assert last_by_agent(workspace.paths)["app"].kind == "turn"


def test_outside_writes_are_logged_once_under_files(workspace):
    now = time.time()
    _age_files(workspace.paths.root, now)
    monitor = IdleMonitor(workspace.paths, idle_minutes=10)
    record_activity(workspace.paths, "claude-code", "search", when=now - 100)
    log = workspace.paths.sessions_dir / "outside.log.jsonl"
    log.write_text('{"role": "user", "content": "hi"}\n', encoding="utf-8")
    os.utime(log, (now - 10, now - 10))
    assert monitor.record_outside_write() == "sessions/outside.log.jsonl"
    assert monitor.record_outside_write() == ""                     # already logged
    entry = last_by_agent(workspace.paths)[OUTSIDE_AGENT]
    assert (entry.kind, entry.detail) == ("file", "sessions/outside.log.jsonl")
    assert entry.timestamp == pytest.approx(os.stat(log).st_mtime, abs=1e-3)


def test_harness_turns_and_session_ends_are_recorded_under_the_agents_name(workspace):
    from core.harness.agent import HarnessAgent
    from core.harness.flush import FLUSH_REQUEST
    from tests.support.fakes import ScriptedLLM

    def reply(messages):
        if messages[0]["content"].startswith("You summarise"):
            return json.dumps({"intent": "", "achieved": [], "pending": [], "decisions": [], "artifacts": [],
                               "failed_attempts": [], "next_steps": []})
        if messages[-1]["content"].endswith(FLUSH_REQUEST):
            return "NO_REPLY"
        return json.dumps({"tool": "answer", "input": "hello"})

    agent = HarnessAgent(workspace, ScriptedLLM(reply), session_id="s-9", name="reverie agent")
    assert agent.run_turn("hi").answer == "hello"
    entry = last_by_agent(workspace.paths)["reverie agent"]
    assert (entry.kind, entry.detail) == ("turn", "s-9")
    agent.end_session()
    assert last_by_agent(workspace.paths)["reverie agent"].kind == "session_end"
    assert HarnessAgent(workspace, ScriptedLLM(reply)).name == "harness"
