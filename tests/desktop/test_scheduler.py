"""The scheduler thread: the maintenance tick, and a dream once the agent is idle, with an injected clock."""
from __future__ import annotations

import datetime as dt
import threading
import time

from core.dream.review.proposals import list_proposals
from core.dream.state import load_state
from desktop.status_bar import describe_idle, describe_next_dream
from desktop.tasks import running_threads

from tests.support.blocking_llm import no_model
from tests.support.dreamkit import opened_a_day_ago


class FakeClock:
    def __init__(self, start: float):
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def start_scheduled(ws, make_controller, clock):
    """A controller whose scheduler ticks every 40 ms on `clock`, started; its statuses and finished jobs."""
    controller = make_controller(ws, schedule=True, clock=clock, tick_ms=40, llm_factory=no_model, index=False)
    statuses, finished = [], []
    controller.scheduleStatus.connect(statuses.append)
    controller.dreamFinished.connect(finished.append)
    controller.start()
    return controller, statuses, finished


def test_scheduler_runs_maintenance_then_dreams_after_idle(qtbot, demo_workspace, make_controller):
    ws = demo_workspace
    opened_a_day_ago(ws)
    clock = FakeClock(time.time())
    controller, statuses, finished = start_scheduled(ws, make_controller, clock)
    assert controller.scheduler.running and controller.scheduler.thread in running_threads()

    # Never maintained: the tick runs at once. The demo was just written, so the agent counts as active.
    qtbot.waitUntil(lambda: len(finished) == 1, timeout=180_000)
    report = finished[0]
    assert report.plan.tick_due and report.dream is None
    assert any("agent is active" in note for note in report.notes)
    assert load_state(ws.paths).last_maintenance

    # More ticks: a dream is due (none ever ran, and the workspace was opened a day ago) but waits for
    # idle; nothing starts.
    seen = len(statuses)
    qtbot.waitUntil(lambda: len(statuses) >= seen + 5, timeout=10_000)
    assert len(finished) == 1 and not controller.dreaming
    assert statuses[-1].dream_due and not statuses[-1].idle
    assert list_proposals(ws.paths) == []

    # Eleven minutes later (idle time 10 min): the scheduler starts the dream.
    clock.advance(11 * 60)
    qtbot.waitUntil(lambda: len(finished) == 2, timeout=180_000)
    result = finished[1]
    assert result.status == "proposed" and list_proposals(ws.paths)
    assert load_state(ws.paths).last_run

    # The 24 h gate is closed now: ticks go on, nothing else starts.
    seen = len(statuses)
    qtbot.waitUntil(lambda: len(statuses) >= seen + 5, timeout=10_000)
    assert len(finished) == 2 and not statuses[-1].dream_due
    next_at = statuses[-1].next_dream_at
    assert next_at is not None and next_at - dt.datetime.fromtimestamp(clock(), dt.timezone.utc) > dt.timedelta(hours=23)


def test_a_job_that_ends_during_a_tick_is_not_started_again(qtbot, workspace):
    """A tick decides on the state it read; a maintenance job that ended while the tick walked the
    workspace for the idle check (its time recorded, `busy` cleared) must not be started a second time
    on the state from before it. (The cause of a second maintenance report under heavy load.)"""
    from core.dream import IdleMonitor
    from core.dream.state import record_maintenance
    from desktop.scheduler import _Worker

    busy = threading.Event()
    busy.set()                                          # the first maintenance tick is running

    class JobEndsDuringTheIdleCheck(IdleMonitor):
        def idle_for(self, now=None):
            record_maintenance(workspace.paths)         # the job's last write...
            busy.clear()                                # ...and then its end
            return super().idle_for(now)

    worker = _Worker(workspace.paths, lambda: workspace.settings, JobEndsDuringTheIdleCheck(workspace.paths),
                     time.time, 40, busy)
    started, statuses = [], []
    worker.maintenanceDue.connect(started.append)
    worker.dreamDue.connect(started.append)
    worker.status.connect(statuses.append)
    try:
        worker.tick()
        worker.tick()                                   # the next tick reads what the job left: nothing is due
    finally:
        worker.shutdown()
    assert started == [] and [s.error for s in statuses] == ["", ""]
    assert statuses[0].busy and not statuses[1].busy


def test_agent_activity_keeps_the_scheduler_from_dreaming(qtbot, demo_workspace, make_controller):
    ws = demo_workspace
    opened_a_day_ago(ws)                               # a dream is due...
    clock = FakeClock(time.time() + 11 * 60)           # ...and the agent idle from the start...
    controller = make_controller(ws, schedule=True, clock=clock, tick_ms=40, llm_factory=no_model, index=False)
    from core.dream.state import record_maintenance

    record_maintenance(ws.paths, now=dt.datetime.fromtimestamp(clock(), dt.timezone.utc))
    controller.note_agent_turn()                       # ...but the in-app agent just took a turn
    statuses, finished = [], []
    controller.scheduleStatus.connect(statuses.append)
    controller.dreamFinished.connect(finished.append)
    controller.start()
    qtbot.waitUntil(lambda: len(statuses) >= 5, timeout=10_000)
    assert not finished and not statuses[-1].idle and statuses[-1].dream_due
    assert describe_idle(statuses[-1].idle_for_s) == "agent: active now"
    assert describe_next_dream(statuses[-1], controller.now()) == "next dream: after 10 min idle (10 min to go)"


def test_stopping_the_scheduler_stops_its_thread(qtbot, demo_workspace, make_controller):
    controller = make_controller(demo_workspace, schedule=True, tick_ms=1000, llm_factory=no_model, index=False)
    controller.start()
    thread = controller.scheduler.thread
    assert thread.isRunning()
    assert controller.scheduler.stop(5)
    assert not thread.isRunning()


def test_the_app_leaves_scheduling_to_reverie_serve_while_it_holds_the_lock(qtbot, demo_workspace, make_controller):
    """The app and `reverie serve` share one scheduler lock: while another process holds it the app
    starts no maintenance or dream and says who schedules; once it is free the app takes over."""
    import subprocess
    import sys

    from core.service import scheduler_lock_path
    from tests.support.processes import python_env

    ws = demo_workspace
    holder = subprocess.Popen(
        [sys.executable, "-c", "import fcntl, os, sys, time; fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600); "
         "fcntl.flock(fd, fcntl.LOCK_EX); print('held', flush=True); sys.stdin.read()",
         str(scheduler_lock_path(ws.paths))], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=python_env())
    try:
        assert holder.stdout.readline().strip() == "held"
        controller, statuses, finished = start_scheduled(ws, make_controller, FakeClock(time.time()))
        qtbot.waitUntil(lambda: len(statuses) >= 5, timeout=10_000)
        assert all(status.elsewhere for status in statuses) and finished == []
        now = dt.datetime.now(dt.timezone.utc)
        # No record of who holds it (or one of a process that is gone): not called `reverie serve`.
        assert describe_next_dream(statuses[-1], now) == "dreams: scheduled by another process"
        from core.store.private import write_scheduler_owner

        write_scheduler_owner(ws.paths, {"who": "serve", "pid": 2 ** 22 + 17})       # no such process
        count = len(statuses)
        qtbot.waitUntil(lambda: len(statuses) >= count + 2, timeout=10_000)
        assert describe_next_dream(statuses[-1], now) == "dreams: scheduled by another process"
        write_scheduler_owner(ws.paths, {"who": "serve", "pid": holder.pid})          # the live holder
        qtbot.waitUntil(lambda: "reverie serve" in describe_next_dream(statuses[-1], now), timeout=10_000)
        assert describe_next_dream(statuses[-1], now) == f"dreams: scheduled by reverie serve (pid {holder.pid})"
        assert load_state(ws.paths).last_maintenance is None or not load_state(ws.paths).last_maintenance
    finally:
        holder.stdin.close()
        holder.wait(timeout=10)
    qtbot.waitUntil(lambda: len(finished) == 1, timeout=180_000)     # the lock is free: the tick runs
    assert not statuses[-1].elsewhere


def test_the_status_bar_names_the_agent_seen_last(qtbot, demo_workspace, make_controller):
    from core.store.activity import record_activity
    from desktop.status_bar import StatusBar, describe_agents

    ws = demo_workspace
    record_activity(ws.paths, "claude-code", "search", "memory_search", time.time() - 600)
    record_activity(ws.paths, "codex", "read", "memory_get", time.time() - 3600)
    controller = make_controller(ws, schedule=True, tick_ms=40, llm_factory=no_model, index=False)
    statuses = []
    controller.scheduleStatus.connect(statuses.append)
    controller.start()
    qtbot.waitUntil(lambda: any(status.agents for status in statuses), timeout=10_000)
    status = next(status for status in statuses if status.agents)
    assert [name for name, _seconds in status.agents][:2] == ["claude-code", "codex"]
    bar = StatusBar()
    qtbot.addWidget(bar)
    bar.show_schedule(status, dt.datetime.now(dt.timezone.utc))
    assert bar.idle.text() == f"agent {describe_agents(status.agents)}" and "claude-code" in bar.idle.text()
    assert "codex: last seen" in bar.idle.toolTip()
