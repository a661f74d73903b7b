"""The status says what is true: "dreaming" only while a dream runs, how long the idle wait has to
go, and the person's own saves are not agent activity."""
from __future__ import annotations

import datetime as dt
import os
import time

from core.dream.state import record_dream_finished
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
    assert describe_idle(controller.monitor.idle_for()) != "agent: active now"
    ws.append_daily("The agent wrote this")                   # an outside writer still counts
    assert describe_idle(controller.monitor.idle_for()) == "agent: active now"
