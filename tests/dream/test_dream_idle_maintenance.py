"""Idle detection and the maintenance tick, with an injected clock and real files."""
from __future__ import annotations

import datetime as dt
import json
import os
import time

from tests.support.dreamkit import all_add, golden_workspace, router, write_log
from tests.support.fakes import ScriptedLLM

from core.dream.pipeline.consolidator import run_dream
from core.dream.schedule.idle import IdleMonitor, record_agent_turn
from core.dream.schedule.maintenance import maintain
from core.dream.review.proposals import list_proposals
from core.dream.review.sources import SourceResolver
from core.dream.state import load_state

T = float(int(time.time()) - 3 * 3600)   # the injected clock starts three hours ago


def settle(ws, when: float) -> None:
    """Every workspace file last written at `when`."""
    for folder, _dirs, files in os.walk(ws.root):
        for name in files:
            os.utime(os.path.join(folder, name), (when, when))


def test_idle_after_ten_quiet_minutes(workspace):
    settle(workspace, T)
    clock = {"now": T + 9 * 60}
    monitor = IdleMonitor(workspace.paths, idle_minutes=10, clock=lambda: clock["now"])
    assert not monitor.is_idle()
    clock["now"] = T + 10 * 60
    assert monitor.is_idle() and monitor.idle_for() == 600
    monitor.note_agent_turn(T + 5 * 60)
    assert not monitor.is_idle()
    assert monitor.is_idle(T + 15 * 60)


def test_private_state_does_not_count_but_agent_files_do(workspace):
    settle(workspace, T)
    monitor = IdleMonitor(workspace.paths, idle_minutes=10, clock=lambda: T + 3600)
    (workspace.paths.private_dir / "index.db").write_text("x")
    workspace.paths.consolidation_state.write_text("{}")
    assert monitor.is_idle()
    log = write_log(workspace, "2027-01-15", ["agent wrote this"])
    assert not monitor.is_idle()
    assert "memory/2027-01-15.md written" in monitor.last_activity()[1]
    del log


def test_a_turn_recorded_by_another_process_counts(workspace):
    settle(workspace, T)
    monitor = IdleMonitor(workspace.paths, idle_minutes=10, clock=lambda: T + 3600)
    assert monitor.is_idle()
    record_agent_turn(workspace.paths, when=T + 3590)
    assert not monitor.is_idle() and monitor.last_activity()[1] == "app: turn"


def test_reveries_own_memory_write_is_not_activity(workspace):
    settle(workspace, T)
    snap = workspace.read_memory()
    workspace.write_memory(snap.text + "- applied by a dream\n", snap.hash)
    os.utime(workspace.paths.memory_md, (T + 100, T + 100))
    monitor = IdleMonitor(workspace.paths, idle_minutes=10, clock=lambda: T + 650)
    assert not monitor.is_idle()
    monitor.ignore_own_write("MEMORY.md")
    assert monitor.is_idle()


def test_a_dream_stops_when_the_agent_becomes_active_and_writes_nothing(workspace):
    golden_workspace(workspace)
    write_log(workspace, "2027-01-14", ["A fact for a dream that gets interrupted"])
    monitor = IdleMonitor(workspace.paths, idle_minutes=10)
    started = monitor.clock()
    memory_before = workspace.read_memory().text

    def orient_reply(messages):
        # While the model thinks, the agent wakes up and appends to today's log.
        workspace.append_daily("the agent is back", day=dt.date(2027, 1, 15))
        return json.dumps({"goals": [], "decisions": [], "patterns": [], "preferences": []})

    result = run_dream(workspace, ScriptedLLM(orient_reply), should_stop=monitor.stop_check(started - 1e-6))
    assert result.status == "stopped" and result.stopped_at == "gather"
    assert "the agent became active (memory/2027-01-15.md written)" in result.reason
    assert list_proposals(workspace.paths) == []
    assert workspace.read_memory().text == memory_before
    assert load_state(workspace.paths).last_run == ""


def _stamp(ws, rel: str, when: dt.datetime) -> None:
    os.utime(ws.root / rel, (when.timestamp(), when.timestamp()))


def test_maintenance_archives_prunes_dreams_when_due_and_waits_for_idle(workspace):
    now = dt.datetime(2027, 1, 15, 12, tzinfo=dt.timezone.utc)
    old_day = (now - dt.timedelta(days=91)).date().isoformat()
    keep_day = (now - dt.timedelta(days=89)).date().isoformat()
    old_refs = write_log(workspace, old_day, ["Maya's sister Ana lives in Porto"])
    write_log(workspace, keep_day, ["The office wifi network is called Orchard-5G"])
    _stamp(workspace, f"memory/{old_day}.md", now - dt.timedelta(days=91))
    _stamp(workspace, f"memory/{keep_day}.md", now - dt.timedelta(days=89))
    for sid, age in (("s-ancient", 181), ("s-recent", 30)):
        path = workspace.paths.session_log(sid)
        path.write_text('{"role": "user", "content": "hello"}\n')
        _stamp(workspace, workspace.relative(path), now - dt.timedelta(days=age))
    calls = []

    def factory():
        calls.append(1)
        return ScriptedLLM(router(all_add))

    report = maintain(workspace, now=now, llm_factory=factory, idle=True)
    assert report.archived == [f"memory/archive/{old_day}.md"]
    assert report.pruned == ["sessions/s-ancient.log.jsonl"]
    assert workspace.paths.session_log("s-recent").exists()
    assert report.dream is not None and report.dream.status == "proposed" and calls == [1]
    text = report.dream.proposal.new_text
    assert f"src:memory/archive/{old_day}.md#L3" in text, "archived first, so read from the archive"
    # A bullet that cited the log before it was archived still resolves.
    assert SourceResolver(workspace.paths).resolve(old_refs[0]).note == "moved to the archive"
    assert load_state(workspace.paths).last_maintenance == now.isoformat()

    assert not maintain(workspace, now=now + dt.timedelta(hours=1), llm_factory=factory).ran
    tick = maintain(workspace, now=now + dt.timedelta(hours=6), llm_factory=factory)
    assert tick.ran and tick.dream is None and calls == [1], "the 24 h gate is still shut"

    write_log(workspace, "2027-01-16", ["The boiler service is booked every October with Hughes Heating"])
    busy = maintain(workspace, now=now + dt.timedelta(hours=25), llm_factory=factory, idle=False)
    assert busy.dream is None and "active" in busy.notes[0] and calls == [1]
    idle = maintain(workspace, now=now + dt.timedelta(hours=31), llm_factory=factory, idle=True)
    assert idle.dream is not None and idle.dream.status == "proposed" and calls == [1, 1]
