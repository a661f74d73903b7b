"""The status says what is true: "dreaming" only while a dream runs, the gate that holds the next
dream (idle time, the sessions gate, the time gate, a retry), and the person's own saves are not agent
activity."""
from __future__ import annotations

import datetime as dt
import os
import time

from core.dream import IdleMonitor
from core.dream.state import record_dream_finished, record_maintenance, record_session_ended
from core.store.activity import record_activity
from desktop.operations import Outcome
from desktop.scheduler import ScheduleStatus
from desktop.status_bar import describe_idle, describe_next_dream
from desktop.views.dream_view import DreamView

from tests.support.blocking_llm import no_model


def status(**fields) -> ScheduleStatus:
    base = dict(idle_for_s=0.0, idle=False, dream_due=False, dream_reason="", next_dream_at=None,
                next_tick_at=None, busy=False, idle_needed_s=600.0)
    return ScheduleStatus(**{**base, **fields})


def test_the_idle_wait_says_how_long_is_left_and_busy_is_not_dreaming():
    now = dt.datetime(2026, 11, 10, 3, 0, tzinfo=dt.timezone.utc)
    assert describe_next_dream(status(dream_due=True, idle_for_s=180.0), now) == \
        "next dream: after 10 min idle (7 min to go)"
    assert describe_next_dream(status(dream_due=True, idle=True, idle_for_s=700.0), now) == "dream due now"
    assert describe_next_dream(status(busy=True), now) == "maintenance running…"
    assert describe_next_dream(status(busy=True), now, dreaming=True) == "dreaming…"
    assert describe_next_dream(status(dream_due=True, idle=True, idle_for_s=700.0, retry_in_s=530.0), now) == \
        "next dream: retried after a failed run (9 min to go)"


def test_a_dream_not_due_names_the_sessions_gate_and_the_time_gate():
    now = dt.datetime(2026, 11, 10, 3, 0, tzinfo=dt.timezone.utc)
    later = now + dt.timedelta(hours=5, minutes=12)
    when = f"{later.astimezone():%a %H:%M} (in 5.2 h)"
    assert describe_next_dream(status(next_dream_at=later, sessions_to_go=2), now) == \
        f"next dream: waits for 2 more sessions or until {when}"
    assert describe_next_dream(status(next_dream_at=later, sessions_to_go=1), now) == \
        f"next dream: waits for 1 more session or until {when}"
    assert describe_next_dream(status(next_dream_at=later), now) == f"next dream: {when}"   # sessions gate off


def quiet_files(ws, seconds: float = 3600) -> None:
    """Every workspace file `seconds` old: no write counts as recent activity."""
    then = time.time() - seconds
    for path in ws.root.rglob("*"):
        if path.is_file():
            os.utime(path, (then, then))


def scheduled_window(qtbot, window, ws):
    """A main window on `ws` whose scheduler ticks every 40 ms (no watcher, no index, no model)."""
    win = window({"schedule": True, "watch": False, "index": False, "tick_ms": 40, "llm_factory": no_model})
    assert win.open_workspace(ws.root)
    qtbot.waitUntil(lambda: win.controller.scheduler is not None and win.controller.scheduler.running,
                    timeout=10_000)
    return win


def test_the_window_names_the_gate_that_holds_the_next_dream(qtbot, window, workspace):
    ws = workspace
    moment = dt.datetime.now(dt.timezone.utc)
    record_maintenance(ws.paths, now=moment)                    # no maintenance tick due
    record_dream_finished(ws.paths, 0.0, now=moment - dt.timedelta(hours=1))
    for _ in range(3):                                          # 3 of the 5 sessions the gate needs
        record_session_ended(ws.paths)
    record_activity(ws.paths, "claude-code", "search", "memory_search")     # the agent is at work
    win = scheduled_window(qtbot, window, ws)
    label = win.status.next_dream
    qtbot.waitUntil(lambda: label.text().startswith("next dream: waits for 2 more sessions or until "),
                    timeout=10_000)
    assert label.text().endswith("(in 23.0 h)")
    for _ in range(2):                                          # the sessions gate opens: now idle time holds it
        record_session_ended(ws.paths)
    qtbot.waitUntil(lambda: label.text() == "next dream: after 10 min idle (10 min to go)", timeout=10_000)
    assert win.status.idle.text() == "agent claude-code: active now"


def test_the_persons_save_in_the_window_does_not_make_the_agent_active(qtbot, window, workspace):
    ws = workspace
    moment = dt.datetime.now(dt.timezone.utc)
    record_maintenance(ws.paths, now=moment)
    record_dream_finished(ws.paths, 0.0, now=moment)            # no dream due: nothing starts
    ws.append_daily("The agent's note of an hour ago")
    quiet_files(ws)
    win = scheduled_window(qtbot, window, ws)
    idle = win.status.idle
    qtbot.waitUntil(lambda: idle.text() == "agent idle 60 min", timeout=10_000)
    editor = win.views["MEMORY.md"]
    qtbot.waitUntil(lambda: editor.base is not None, timeout=10_000)
    cursor = editor.editor.textCursor()
    cursor.movePosition(cursor.MoveOperation.End)
    cursor.insertText("- A note of the person's own\n")
    with qtbot.waitSignal(editor.saved, timeout=10_000):
        win.save_current()
    statuses = []
    win.controller.scheduleStatus.connect(statuses.append)
    qtbot.waitUntil(lambda: len(statuses) >= 3, timeout=10_000)    # ticks after the save
    assert idle.text() == "agent idle 60 min" and all(s.idle for s in statuses)
    assert IdleMonitor(ws.paths, idle_minutes=10).is_idle()         # as `reverie serve` or `reverie status` sees it
    ws.append_daily("The agent wrote this")                        # an agent's write still counts
    qtbot.waitUntil(lambda: idle.text() == "agent: active now", timeout=10_000)


def test_a_maintenance_tick_with_no_dream_due_never_says_dreaming(qtbot, workspace, make_controller):
    ws = workspace
    now = time.time()
    record_dream_finished(ws.paths, 0.0, now=dt.datetime.fromtimestamp(now, dt.timezone.utc))   # gate closed
    controller = make_controller(ws, llm_factory=no_model, index=False, clock=lambda: now)
    view = DreamView(controller)
    qtbot.addWidget(view)
    states = []
    controller.dreamEvent.connect(lambda _e: states.append((view.state.text(), controller.dream_running)))
    with qtbot.waitSignal(controller.dreamFinished, timeout=60_000) as finished:
        controller.start_maintenance()
        assert view.state.text().startswith("Maintenance tick")
    assert finished.args[0].dream is None
    assert not any("Dreaming" in text or running for text, running in states)
    assert view.state.text().startswith("Maintenance ran (no dream was due)")
    assert not controller.dream_running


def test_a_dream_started_by_a_maintenance_tick_says_dreaming_while_it_runs(qtbot, workspace, make_controller):
    from tests.support.dreamkit import review_workspace

    ws = workspace
    review_workspace(ws)
    controller = make_controller(ws, llm_factory=no_model, index=False, clock=lambda: time.time() + 3600)
    view = DreamView(controller)
    qtbot.addWidget(view)
    seen = []
    controller.dreamEvent.connect(lambda e: seen.append((e.stage, view.state.text(), controller.dream_running)))
    with qtbot.waitSignal(controller.dreamFinished, timeout=120_000) as finished:
        controller.start_maintenance()
    assert finished.args[0].dream is not None
    assert any(stage == "consolidate" and text == "Dreaming (maintenance tick)…" and running
               for stage, text, running in seen)
    assert not controller.dream_running


def test_the_persons_own_save_is_not_agent_activity(qtbot, workspace, make_controller):
    ws = workspace
    hour_ago = time.time() - 3600
    for path in ws.root.rglob("*"):
        if path.is_file():
            os.utime(path, (hour_ago, hour_ago))
    controller = make_controller(ws, llm_factory=no_model, index=False)
    assert controller.monitor.idle_for() > 3000
    snap = ws.read_memory()

    def save(_ctx):
        return Outcome(ws.write_memory(snap.text + "- A note of the person's own\n", snap.hash,
                                       reason="edited in Reverie"), None)
    with qtbot.waitSignal(controller.changed, timeout=10_000):
        controller.run_op(save, name="save")
    assert "A note of the person's own" in ws.read_memory().text
    assert controller.monitor.idle_for() > 3000
    assert IdleMonitor(ws.paths, idle_minutes=10).idle_for() > 3000     # and for every other process
    assert describe_idle(controller.monitor.idle_for()) != "agent: active now"
    ws.append_daily("The agent wrote this")                   # an outside writer still counts
    assert describe_idle(controller.monitor.idle_for()) == "agent: active now"


def test_the_windows_status_line_says_dreaming_only_until_the_dream_ends(qtbot, window, workspace):
    from tests.support.dreamkit import review_workspace
    from tests.support.qt_views import QUIET

    review_workspace(workspace)
    win = window({**QUIET, "llm_factory": no_model})
    assert win.open_workspace(workspace.root)
    during = []
    win.controller.dreamEvent.connect(lambda _event: during.append(win.status.currentMessage()))
    with qtbot.waitSignal(win.controller.dreamFinished, timeout=120_000) as finished:
        win.controller.start_dream(reason="asked for")
    assert during and all(text == "Dreaming (asked for)…" for text in during)
    changes = len(finished.args[0].proposal.changes)
    assert win.status.currentMessage() == f"Dream finished: {changes} change(s) proposed"
