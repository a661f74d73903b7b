"""The background scheduler: dreams when the agent is idle and a gate is open, and the maintenance tick.

It runs on its own QThread. A QTimer that lives in that thread wakes it every
`interval_ms` (nothing sleeps in a loop); each tick reads the consolidation state
and asks core's pure "what is due" functions (`core.dream`'s gates) with the time
from an injected clock, and asks the IdleMonitor whether the agent is idle. It
decides only: when something is due it emits `dreamDue` / `maintenanceDue`, and
the controller runs the job on the task pool, where the dream view shows its
progress and a cancel stops it. While a job runs (the shared `busy` event) the
scheduler starts nothing new. Every tick also emits a `ScheduleStatus` for the
status bar: idle time and when the next dream may start.
"""
from __future__ import annotations

import datetime as dt
import threading
import time
from dataclasses import dataclass
from typing import Callable

from PySide6.QtCore import QObject, QThread, QTimer, Qt, Signal, Slot

from core.config import Settings
from core.dream import IdleMonitor, dream_due, load_state, maintenance_due
from core.service import agent_activity, claim_scheduler, scheduler_holder, scheduler_lock
from core.workspace import WorkspacePaths
from desktop.tasks import register_thread


@dataclass(frozen=True)
class ScheduleStatus:
    idle_for_s: float               # inf when nothing was ever written
    idle: bool
    dream_due: bool
    dream_reason: str
    next_dream_at: dt.datetime | None   # when the time gate opens (None: due now, or never dreamed)
    next_tick_at: dt.datetime | None
    busy: bool
    error: str = ""
    idle_needed_s: float = 600.0    # how long the agent must be idle before a scheduled dream starts
    agents: tuple = ()              # (name, seconds since its last activity), newest first
    elsewhere: bool = False         # another scheduler (`reverie serve`) holds the workspace's lock
    holder: str = ""                # who that is, when elsewhere ("reverie serve (pid 123)", ...)
    sessions_to_go: int = 0         # sessions still to end before the sessions gate opens (0: open or off)
    retry_in_s: float = 0.0         # after a failed job nothing starts for this long


class _Worker(QObject):
    """Lives on the scheduler thread; every slot runs there."""

    status = Signal(object)
    dreamDue = Signal(str)
    maintenanceDue = Signal(str)

    def __init__(self, paths: WorkspacePaths, settings: Callable[[], Settings], monitor: IdleMonitor,
                 clock: Callable[[], float], interval_ms: int, busy: threading.Event):
        super().__init__()
        self.paths = paths
        self.settings = settings
        self.monitor = monitor
        self.clock = clock
        self.interval_ms = interval_ms
        self.busy = busy
        self.backoff_until = 0.0
        self.timer: QTimer | None = None
        self._lock = None                  # the workspace's scheduler lock while this app holds it

    @Slot()
    def start(self) -> None:
        self.timer = QTimer(self)          # created here, so it belongs to this thread
        self.timer.setInterval(self.interval_ms)
        self.timer.timeout.connect(self.tick)
        self.timer.start()
        self.tick()

    @Slot()
    def shutdown(self) -> None:
        if self.timer is not None:
            self.timer.stop()
            self.timer = None
        self._release_lock()

    def _hold_lock(self) -> bool:
        """Hold the scheduler lock `reverie serve` takes too, so only one of them schedules this
        workspace; tried again each tick while the other one runs."""
        if self._lock is not None:
            return True
        lock = scheduler_lock(self.paths)
        if lock.__enter__():
            self._lock = lock
            claim_scheduler(self.paths, "app")
            return True
        lock.__exit__(None, None, None)
        return False

    def _release_lock(self) -> None:
        if self._lock is not None:
            lock, self._lock = self._lock, None
            lock.__exit__(None, None, None)

    @Slot()
    def tick(self) -> None:
        try:
            self._tick()
        except Exception as exc:    # a damaged file must not kill the scheduler; say so and go on
            self.status.emit(ScheduleStatus(0.0, False, False, "", None, None, self.busy.is_set(),
                                            error=f"scheduler: {exc}"))

    def _tick(self) -> None:
        # Whether a job runs is read before the state the tick decides on. A job writes its state (the
        # maintenance time, a dream's watermark) before it clears `busy`; read in the other order, a
        # job that ended while this tick walked the workspace for the idle check left `busy` clear
        # and the tick still held the state from before it: the same job started a second time.
        busy = self.busy.is_set()
        now_ts = self.clock()
        now = dt.datetime.fromtimestamp(now_ts, dt.timezone.utc)
        settings = self.settings().dream
        self.monitor.idle_seconds_needed = settings.idle_minutes * 60.0
        state = load_state(self.paths)
        due = dream_due(state, now, settings)
        tick_due, next_tick = maintenance_due(state, now, settings)
        idle_for = self.monitor.idle_for(now_ts)
        idle = idle_for >= self.monitor.idle_seconds_needed
        mine = self._hold_lock()
        if mine and not busy and now_ts >= self.backoff_until:
            if tick_due:
                self.busy.set()            # one job at a time: cleared when the controller's job ends
                self.maintenanceDue.emit("maintenance tick due")
                busy = True
            elif due.due and idle:
                self.busy.set()
                self.dreamDue.emit(due.reason)
                busy = True
        agents = tuple((entry.agent, max(0.0, now_ts - entry.timestamp)) for entry in agent_activity(self.paths))
        self.status.emit(ScheduleStatus(idle_for, idle, due.due, due.reason, due.next_at,
                                        next_tick, busy, idle_needed_s=self.monitor.idle_seconds_needed,
                                        agents=agents, elsewhere=not mine, sessions_to_go=due.sessions_to_go,
                                        holder="" if mine else scheduler_holder(self.paths),
                                        retry_in_s=max(0.0, self.backoff_until - now_ts)))


class Scheduler(QObject):
    """The main-thread face of the scheduler thread."""

    status = Signal(object)
    dreamDue = Signal(str)
    maintenanceDue = Signal(str)
    _stop = Signal()
    _poke = Signal()

    def __init__(self, paths: WorkspacePaths, settings: Callable[[], Settings], monitor: IdleMonitor, *,
                 clock: Callable[[], float] = time.time, interval_ms: int = 30_000,
                 busy: threading.Event | None = None, parent=None):
        super().__init__(parent)
        self.busy = busy or threading.Event()
        self.thread = register_thread(QThread())
        self.thread.setObjectName("reverie-scheduler")
        self.worker = _Worker(paths, settings, monitor, clock, interval_ms, self.busy)
        self.worker.moveToThread(self.thread)
        self.thread.started.connect(self.worker.start)
        self._stop.connect(self.worker.shutdown, Qt.ConnectionType.BlockingQueuedConnection)
        self._poke.connect(self.worker.tick)
        # Receivers on this (main-thread) object: Qt queues the worker's signals over.
        self.worker.status.connect(self.status)
        self.worker.dreamDue.connect(self.dreamDue)
        self.worker.maintenanceDue.connect(self.maintenanceDue)

    def start(self) -> None:
        if not self.thread.isRunning():
            self.thread.start()

    def poke(self) -> None:
        """Tick now (after a setting changed or a job ended) instead of at the next interval."""
        if self.thread.isRunning():
            self._poke.emit()

    def job_finished(self) -> None:
        self.busy.clear()
        self.poke()

    def back_off(self, seconds: float) -> None:
        """After a failed job: start nothing for a while, rather than failing every tick."""
        self.worker.backoff_until = self.worker.clock() + seconds

    def stop(self, timeout_s: float = 5.0) -> bool:
        if not self.thread.isRunning():
            return True
        self._stop.emit()              # stops the timer on its own thread, and waits for that
        self.thread.quit()
        return self.thread.wait(int(timeout_s * 1000))

    @property
    def running(self) -> bool:
        return self.thread.isRunning()
