"""`reverie serve`: the app's scheduler without a window.

Each tick asks the same pure rules the desktop scheduler asks (core/dream/schedule/gates.py:
is the maintenance tick due, is a dream due) and the same IdleMonitor whether the
agent is idle, which reads the shared activity log, so an agent working over MCP or
the harness holds dreams off exactly as it does with the app open. It also logs the
writes outside agents make to sessions/ and memory/ into that activity log.

What it does is what the app does: the maintenance tick (archive, prune, dream when
due and idle, reindex) through core/dream/schedule/maintenance.py, or a dream alone when only
the dream gate opened. A dream writes a proposal for review; it changes MEMORY.md
only when the person enabled auto-apply of safe changes (apply=None defers to that
setting). A running dream stops at its next stage boundary when the agent becomes
active again.

One scheduler per workspace: the app and `serve` take the same lock
(`.reverie/locks/scheduler.lock`); a second one waits until the first lets go.
"""
from __future__ import annotations

import datetime as dt
import os
import time
from pathlib import Path
from typing import Callable, ContextManager

from core.cancel import CancelToken
from core.dream.schedule.gates import dream_due, maintenance_due
from core.dream.schedule.idle import IdleMonitor
from core.dream.schedule.maintenance import maintain
from core.dream.state import load_state
from core.errors import CoreError, ModelCancelled
from core.store.locks import lock_holder, lock_if_free
from core.store.private import read_scheduler_owner, read_settings, write_scheduler_owner

BACKOFF_S = 600.0        # after a failed tick, wait this long before trying again (not every tick)
SCHEDULER_LOCK = "scheduler.lock"


def scheduler_lock_path(paths) -> Path:
    """The lock every scheduler of a workspace (the app's, `reverie serve`) holds while it runs."""
    return paths.locks_dir / SCHEDULER_LOCK


SERVE_OWNER = "reverie serve"


class AlreadyServing(CoreError):
    """Another `reverie serve` schedules this workspace: a second one has nothing to do."""


def scheduler_lock(paths, owner: str = "") -> ContextManager[bool]:
    """Hold the workspace's scheduler lock while the block runs, if no other scheduler holds it: yields
    True when this process may schedule, False (at once) when another one does. The app's scheduler
    takes it too, so the app and `reverie serve` never both dream on one workspace."""
    return lock_if_free(scheduler_lock_path(paths), owner)


def claim_scheduler(paths, who: str) -> None:
    """Say who holds the scheduler lock (just taken): "serve" or "app", with this process's id, so
    another process can name the holder and check that it is alive."""
    write_scheduler_owner(paths, {"who": who, "pid": os.getpid(),
                                  "since": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")})


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True           # alive, owned by someone else
    except (OSError, ValueError, OverflowError):
        return False
    return True


def scheduler_holder(paths) -> str:
    """Who schedules this workspace when this process does not: "reverie serve (pid 123)", "another
    Reverie window (pid 456)", or "another process" when the holder left no live record. "" when no
    one holds the lock. `reverie serve` is named only when its process is alive."""
    if not scheduler_running(paths):
        return ""
    record = read_scheduler_owner(paths)
    pid = record.get("pid")
    if not isinstance(pid, int) or pid == os.getpid() or not pid_alive(pid):
        return "another process"
    return {"serve": f"reverie serve (pid {pid})", "app": f"another Reverie window (pid {pid})"}.get(
        record.get("who"), f"another process (pid {pid})")


def scheduler_running(paths) -> bool:
    """Whether some process (the app, `reverie serve`) is scheduling this workspace now."""
    with scheduler_lock(paths) as free:
        return not free


class Daemon:
    """Decides and runs scheduled work for one workspace; `run()` loops until cancelled."""

    def __init__(self, ws, *, llm_factory: Callable[[], object] | None = None,
                 report: Callable[[str], None] = lambda line: None, clock: Callable[[], float] = time.time,
                 idle_minutes: float | None = None, cancel: CancelToken | None = None):
        self.ws = ws
        self.llm_factory = llm_factory
        self.report = report
        self.clock = clock
        self.idle_override = idle_minutes
        self.cancel = cancel or CancelToken()
        self.monitor = IdleMonitor(ws.paths, self._idle_minutes(), clock=clock)
        self.backoff_until = 0.0

    def _idle_minutes(self) -> float:
        return self.idle_override if self.idle_override is not None else self.ws.settings.dream.idle_minutes

    def _reload_settings(self) -> None:
        """Settings changed in the app apply to the next tick; a broken file keeps the last good ones."""
        try:
            self.ws.settings = read_settings(self.ws.paths)
        except CoreError as exc:
            self.report(f"settings not reloaded: {exc}")
        self.monitor.idle_seconds_needed = self._idle_minutes() * 60.0

    # ----- one tick ----------------------------------------------------------------------------------
    def tick(self) -> str:
        """Do what is due now; returns what ran ("maintenance", "dream") or ""."""
        now_ts = self.clock()
        if now_ts < self.backoff_until:
            return ""
        self._reload_settings()
        self.monitor.record_outside_write()
        now = dt.datetime.fromtimestamp(now_ts, dt.timezone.utc)
        settings = self.ws.settings.dream
        state = load_state(self.ws.paths)
        tick_due, _next = maintenance_due(state, now, settings)
        due = dream_due(state, now, settings)
        try:
            if tick_due:
                self._maintain(now)
                return "maintenance"
            if due.due and self.monitor.is_idle(now_ts):
                self._dream(now, due.reason)
                return "dream"
        except ModelCancelled:
            raise
        except (CoreError, OSError) as exc:    # a damaged file or a model that will not load: say so, wait
            self.backoff_until = now_ts + BACKOFF_S
            self.report(f"error: {exc} (next try in {BACKOFF_S / 60:.0f} min)")
        return ""

    def _models(self) -> tuple[Callable[[], object], list]:
        opened: list = []

        def factory():
            opened.append(self.llm_factory() if self.llm_factory is not None else None)
            return opened[-1]
        return factory, opened

    @staticmethod
    def _close(opened: list) -> None:
        for llm in opened:      # the model is not kept loaded between dreams: a daemon idles for hours
            if llm is not None:
                llm.close()

    def _maintain(self, now: dt.datetime) -> None:
        factory, opened = self._models()
        try:
            result = maintain(self.ws, now=now, llm_factory=factory, monitor=self.monitor, cancel=self.cancel,
                              apply=None)
        finally:
            self._close(opened)
        done = [f"archived {len(result.archived)}", f"pruned {len(result.pruned)}",
                "reindexed" if result.reindexed else "not reindexed"]
        self.report("maintenance: " + ", ".join(done))
        for note in result.notes:
            self.report(f"maintenance: {note}")
        if result.dream is not None:
            self._report_dream(result.dream)

    def _dream(self, now: dt.datetime, reason: str) -> None:
        from core.dream.pipeline.consolidator import run_dream

        self.report(f"dream: starting ({reason})")
        factory, opened = self._models()
        try:
            result = run_dream(self.ws, factory(), now=now, cancel=self.cancel,
                               should_stop=self.monitor.stop_check(self.clock()), apply=None)
        finally:
            self._close(opened)
        self.monitor.ignore_own_write("MEMORY.md")
        self._report_dream(result)

    def _report_dream(self, result) -> None:
        waiting = result.proposal is not None and result.applied is None
        self.report(f"dream: {result.status}: {result.reason}" + ("; waiting for review" if waiting else ""))

    def refuse_a_second_serve(self) -> None:
        """AlreadyServing when another `reverie serve` schedules this workspace (the app comes and goes,
        so it is waited for; a second serve never would be)."""
        pid, owner = lock_holder(scheduler_lock_path(self.ws.paths))
        if owner == SERVE_OWNER:
            raise AlreadyServing(f"`reverie serve` already runs for {self.ws.root} (pid {pid}); "
                                 "stop it first, or let it do the work")

    # ----- the loop ----------------------------------------------------------------------------------
    def run(self, interval_s: float = 30.0) -> int:
        """Tick every `interval_s` while holding the scheduler lock, until `cancel` is cancelled. While the
        app schedules the workspace this waits; when another `reverie serve` does, AlreadyServing."""
        waiting_said = False
        while not self.cancel.cancelled:
            with scheduler_lock(self.ws.paths, SERVE_OWNER) as mine:
                if mine:
                    claim_scheduler(self.ws.paths, "serve")
                    self.report(f"scheduling {self.ws.root} (idle after {self._idle_minutes():g} min)")
                    self._loop(interval_s)
                    break
            self.refuse_a_second_serve()
            if not waiting_said:
                self.report(f"another scheduler ({scheduler_holder(self.ws.paths) or 'the app'}) "
                            f"runs for this workspace; waiting until it lets go")
                waiting_said = True
            self.cancel.wait(interval_s)
        self.report("stopped")
        return 0

    def _loop(self, interval_s: float) -> None:
        while not self.cancel.cancelled:
            try:
                self.tick()
            except ModelCancelled:
                return
            self.cancel.wait(interval_s)
