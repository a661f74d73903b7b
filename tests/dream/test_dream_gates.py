"""Gates, watermark, retention and the early-dream throttle, with an injected clock."""
from __future__ import annotations

import datetime as dt

from core.config import DreamSettings, RetentionSettings
from core.dream.schedule import gates
from core.dream.state import (ConsolidationState, load_state, note_new_material, record_dream_finished,
                              record_maintenance, record_session_ended)

T0 = dt.datetime(2026, 11, 30, 3, 0, tzinfo=dt.timezone.utc)
DREAM = DreamSettings()
RETENTION = RetentionSettings()


def at(hours: float) -> dt.datetime:
    return T0 + dt.timedelta(hours=hours)


def test_first_dream_is_due_and_asked_always_is():
    assert gates.dream_due(ConsolidationState(), T0, DREAM).due
    state = ConsolidationState(last_run=T0.isoformat())
    assert gates.dream_due(state, at(1), DREAM, asked=True).reason == "asked for"


def test_time_gate_opens_after_24_hours(workspace):
    record_dream_finished(workspace.paths, 0.0, now=T0)
    state = load_state(workspace.paths)
    assert not gates.dream_due(state, at(23.9), DREAM).due
    due = gates.dream_due(state, at(24), DREAM)
    assert due.due and "24 h" in due.reason
    assert gates.next_dream_at(state, at(2), DREAM) == at(24)
    assert gates.next_dream_at(state, at(30), DREAM) == at(30)


def test_session_gate_opens_after_five_sessions(workspace):
    record_dream_finished(workspace.paths, 0.0, now=T0)
    for _ in range(4):
        record_session_ended(workspace.paths)
    assert not gates.dream_due(load_state(workspace.paths), at(1), DREAM).due
    record_session_ended(workspace.paths)
    due = gates.dream_due(load_state(workspace.paths), at(1), DREAM)
    assert due.due and "5 sessions" in due.reason


def test_a_finished_dream_resets_sessions_but_keeps_those_that_ended_while_it_ran(workspace):
    for _ in range(5):
        record_session_ended(workspace.paths)
    seen = load_state(workspace.paths).sessions_since
    record_session_ended(workspace.paths)          # ended while the dream ran
    record_dream_finished(workspace.paths, 10.0, now=T0, sessions_seen=seen)
    state = load_state(workspace.paths)
    assert state.sessions_since == 1 and state.last_run_time() == T0 and state.mtime_watermark == 10.0


def test_watermark_never_moves_back(workspace):
    record_dream_finished(workspace.paths, 50.0, now=T0)
    record_dream_finished(workspace.paths, 20.0, now=at(1))
    assert load_state(workspace.paths).mtime_watermark == 50.0


def test_early_dream_request_is_throttled_to_once_per_30_minutes(workspace):
    record_dream_finished(workspace.paths, 0.0, now=T0)
    assert note_new_material(workspace.paths, now=at(1)) is True
    assert note_new_material(workspace.paths, now=at(1) + dt.timedelta(minutes=29)) is False
    assert note_new_material(workspace.paths, now=at(1) + dt.timedelta(minutes=30)) is True
    state = load_state(workspace.paths)
    due = gates.dream_due(state, at(2), DREAM)
    assert due.due and "early" in due.reason
    assert gates.maintenance_due(state, at(2), DREAM)[0], "an early request brings the tick forward"
    record_dream_finished(workspace.paths, 0.0, now=at(3))
    assert not gates.dream_due(load_state(workspace.paths), at(4), DREAM).due, "the request was served"


def test_maintenance_tick_every_six_hours(workspace):
    record_dream_finished(workspace.paths, 0.0, now=T0)
    record_maintenance(workspace.paths, now=T0)
    state = load_state(workspace.paths)
    due, next_at = gates.maintenance_due(state, at(5.9), DREAM)
    assert not due and next_at == at(6)
    assert gates.maintenance_due(state, at(6), DREAM)[0]
    plan = gates.plan_maintenance(state, at(1), DREAM, RETENTION)
    assert not plan.tick_due and not plan.archive and not plan.run_dream
    assert gates.plan_maintenance(state, at(1), DREAM, RETENTION, force=True).tick_due


def test_retention_windows():
    today = dt.date(2026, 11, 30)
    logs = [gates.LogFile(f"memory/{d.isoformat()}.md", d) for d in
            (today - dt.timedelta(days=91), today - dt.timedelta(days=90), today)]
    logs.append(gates.LogFile("memory/archive/2026-01-01.md", dt.date(2026, 1, 1), archived=True))
    assert gates.logs_to_archive(logs, today, RETENTION) == (logs[0].rel_path,)
    now = dt.datetime.combine(today, dt.time(12), tzinfo=dt.timezone.utc)
    old = now.timestamp() - 181 * 86400
    recent = now.timestamp() - 179 * 86400
    sessions = [gates.SessionFile("old", old), gates.SessionFile("recent", recent)]
    assert gates.sessions_to_prune(sessions, now, RETENTION) == ("old",)


def test_scheduled_dream_waits_for_idle():
    state = ConsolidationState(last_run=T0.isoformat(), last_maintenance=T0.isoformat())
    busy = gates.plan_maintenance(state, at(25), DREAM, RETENTION, idle=False)
    assert busy.tick_due and busy.dream.due and not busy.run_dream and "active" in busy.note
    idle = gates.plan_maintenance(state, at(25), DREAM, RETENTION, idle=True)
    assert idle.run_dream and idle.next_tick_at == at(31)
    asked = gates.plan_maintenance(state, at(1), DREAM, RETENTION, idle=False, force=True, asked_dream=True)
    assert asked.run_dream


def test_damaged_state_means_never_dreamed(workspace):
    workspace.paths.consolidation_state.write_text("{not json")
    state = load_state(workspace.paths)
    assert state.last_run == "" and state.mtime_watermark == 0.0
    assert gates.dream_due(state, T0, DREAM).due
