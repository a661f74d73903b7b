"""The open workspace as the app sees it: the Workspace facade plus the app's background machinery.

One controller per open workspace. It owns the task runner (every slow job), the
watcher (outside changes), the scheduler (idle dreams and the maintenance tick),
the idle monitor, the recovery store and the model client. Every change the app
makes runs as an operation (`run_op`, desktop/operations.py), which fans its
`Changes` out to the views through the one `changed` signal; nothing else emits
it. Views never talk to the watcher or the scheduler; they ask the controller and
listen to it.

Everything here runs on the main thread except the task functions, which only
touch core (never a widget) and hand their results back through the runner.
"""
from __future__ import annotations

import datetime as dt
import sys
import threading
import time
from typing import Any, Callable

from PySide6.QtCore import QObject, QTimer, Signal

from core.errors import CoreError
from core.types import Changes, kind_of
from core.workspace import Workspace
from desktop.llm_access import SharedModel
from desktop.operations import Operations, Outcome
from desktop.status_bar import MAINTENANCE
from desktop.tasks import TaskHandle, TaskRunner

INDEXED_KINDS = ("memory", "daily", "session", "progress")
DREAM_STAGES = ("orient", "gather", "consolidate", "prune")



EMBEDDER_QUIT_WAIT_S = 0.3   # quitting waits this long for the embedding child; it exits with our end of its pipe


def stop_embedders(wait_s: float | None = None) -> None:
    """Stop the embedding child processes. With `wait_s` (the app quitting) the stop runs on a thread
    and is waited for at most that long: a torch child takes about 3 s to exit gracefully, and one
    that outlives us only computes vectors, writes nothing, and exits when its pipe closes."""
    from core.index.embedding import close_process_embedders

    if wait_s is None:
        close_process_embedders()
        return
    thread = threading.Thread(target=close_process_embedders, name="stop embedders", daemon=True)
    thread.start()
    thread.join(wait_s)

class WorkspaceController(QObject):
    changed = Signal(object)          # Changes, from any operation of the app (emitted by run_op only)
    filesChanged = Signal(list)       # workspace-relative paths an outside writer changed (debounced)
    indexState = Signal(str)
    modelState = Signal(str)
    dreamStarted = Signal(str)        # why (asked for / the gate that opened / maintenance)
    dreamEvent = Signal(object)       # core.dream.DreamEvent or a MaintenanceReport-less stage event
    dreamFinished = Signal(object)    # DreamResult, MaintenanceReport, or the exception
    scheduleStatus = Signal(object)   # desktop.scheduler.ScheduleStatus
    errorOccurred = Signal(str)

    def __init__(self, ws: Workspace, *, runner: TaskRunner | None = None, watch: bool = True,
                 schedule: bool = True, clock: Callable[[], float] = time.time, tick_ms: int = 30_000,
                 llm_factory: Callable[[Any], Any] | None = None, debounce_ms: int = 250, index: bool = True,
                 dreamer: Callable[..., Any] | None = None, parent=None):
        super().__init__(parent)
        from core.dream import IdleMonitor

        self.ws = ws
        self.clock = clock
        self.auto_index = index
        # How a dream runs: run_dream's signature. By default in a child process, whose Python work
        # holds a GIL of its own, not the window's (core/dream/pipeline/isolated.py).
        if dreamer is None:
            from core.dream import run_dream_in_child as dreamer
        self.dreamer = dreamer
        self.runner = runner or TaskRunner(parent=self)
        self.ops = Operations(self.submit, self._publish, self.errorOccurred.emit, wrote=self._person_wrote)
        self.recovery = ws.recovery
        self.monitor = IdleMonitor(ws.paths, ws.settings.dream.idle_minutes, clock=clock)
        self.model = SharedModel(ws, llm_factory, on_state=self.modelState.emit)
        self.busy = threading.Event()
        self.dream_task: TaskHandle | None = None
        self.dream_running = False        # a dream (not just a maintenance tick) is running now
        self.dreamEvent.connect(self._dream_stage)
        self.index_task: TaskHandle | None = None
        self.index_summary = "index: not opened"
        self._search_server = None        # answers `reverie search` while the app runs (_answer_searches)
        self._closed = False
        self.watcher = None
        if watch:
            from desktop.watcher import WorkspaceWatcher

            self.watcher = WorkspaceWatcher(ws.root, debounce_ms=debounce_ms, parent=self)
            self.watcher.filesChanged.connect(self._outside_change)
        self.scheduler = None
        if schedule:
            from desktop.scheduler import Scheduler

            self.scheduler = Scheduler(ws.paths, lambda: self.ws.settings, self.monitor, clock=clock,
                                       interval_ms=tick_ms, busy=self.busy, parent=self)
            self.scheduler.dreamDue.connect(lambda why: self.start_dream(reason=why, scheduled=True))
            self.scheduler.maintenanceDue.connect(lambda why: self.start_maintenance())
            self.scheduler.status.connect(self.scheduleStatus)
        self._index_poll = QTimer(self)
        self._index_poll.setInterval(3000)
        self._index_poll.timeout.connect(self.refresh_index_state)

    # ----- life cycle ----------------------------------------------------------------------------
    def start(self) -> None:
        if self.watcher is not None:
            self.watcher.start()
        if self.scheduler is not None:
            self.scheduler.start()
        if self.auto_index:
            self.sync_index()

    def shutdown(self, timeout_s: float = 15.0, *, quitting: bool = False) -> bool:
        """Stop everything in order: no new jobs, cancel running ones, wait, close the workspace.
        `quitting`: the app is going away, so the embedding child is not waited for (see stop_embedders)."""
        if self._closed:
            return True
        self._closed = True
        self._index_poll.stop()
        if self.scheduler is not None:
            self.scheduler.stop()
        if self.watcher is not None:
            self.watcher.stop()
        if self._search_server:
            self._search_server.close()
        self.runner.cancel_all("the app is quitting")
        # A task may be waiting for the embedding process (one still loading its model takes tens of
        # seconds on a busy machine): stop it now, so those tasks fail at once instead of being waited for.
        stop_embedders(EMBEDDER_QUIT_WAIT_S if quitting else None)
        stopped = self.runner.shutdown(timeout_s)
        self.model.close()
        try:
            self.ws.close()
        except CoreError as exc:
            print(f"reverie: closing the workspace: {exc}", file=sys.stderr)
        return stopped

    @property
    def closed(self) -> bool:
        return self._closed

    def now(self) -> dt.datetime:
        return dt.datetime.fromtimestamp(self.clock(), dt.timezone.utc)

    # ----- jobs ----------------------------------------------------------------------------------
    def submit(self, fn, **callbacks) -> TaskHandle | None:
        """Run `fn(ctx)` on the pool; None once the workspace is closing."""
        if self._closed:
            return None
        return self.runner.submit(fn, **callbacks)

    def run_op(self, fn, *, name: str, on_success=None, on_failed=None, on_progress=None,
               by_person: bool = True) -> TaskHandle | None:
        """Run a core call that changes the workspace; its Changes reach the views before `on_success`.
        `by_person`: the person asked for this change (a save, an accept), so it is not agent activity."""
        return self.ops.run(fn, name=name, on_success=on_success, on_failed=on_failed, on_progress=on_progress,
                            by_person=by_person)

    def run_op_here(self, fn):
        """The same on the main thread, for closing (operations.Operations.run_here)."""
        return self.ops.run_here(fn)

    def _publish(self, changes: Changes) -> None:   # the operations' one way out to the views
        if not changes.empty and not self._closed:
            self.changed.emit(changes)

    def _person_wrote(self, changes: Changes) -> None:
        """On the operation's thread: the person's own writes are not agent activity, for this app's
        scheduler nor for any other process (`reverie serve`, `reverie status`): core records them."""
        from core.dream import record_person_writes

        record_person_writes(self.ws.paths, changes.paths)

    def _outside_change(self, paths: list[str]) -> None:
        self.reindex(paths)
        self.filesChanged.emit(paths)

    def reindex(self, paths) -> TaskHandle | None:
        """Bring the index up to date for these workspace-relative paths (written outside this process)."""
        indexed = [p for p in paths if kind_of(p) in INDEXED_KINDS]
        if not indexed or not self.ws.index_is_open:
            return None

        def job(ctx, ws=self.ws, todo=tuple(indexed)):
            for rel in todo:
                ctx.check()
                ws.notice_external_change(rel)
            return len(todo)
        return self.submit(job, name="reindex", on_finished=lambda _n: self.refresh_index_state(),
                           on_failed=lambda exc: self.errorOccurred.emit(f"reindex: {exc}"))

    # ----- the search index ------------------------------------------------------------------------
    def sync_index(self) -> TaskHandle | None:
        if self.index_task is not None and not self.index_task.done:
            return self.index_task

        def job(ctx):
            def progress(*args, **kwargs):
                ctx.progress(args[0] if len(args) == 1 else (args or kwargs))
            # In a child process: a build of 100,000 lines is seconds of pure Python, and on a thread
            # here it would hold the GIL the window needs (core/jobproc.py).
            summary = self.ws.sync_index(progress, in_child=True, cancel=ctx.token)
            return Outcome(Changes(kinds=("index",)), summary)   # search results may differ now

        self.indexState.emit("index: updating…")
        self.index_task = self.run_op(job, name="index", on_success=self._index_done, on_failed=self._index_failed,
                                      by_person=False)
        return self.index_task

    def _index_done(self, _outcome) -> None:
        self.refresh_index_state()
        self._answer_searches()

    def _answer_searches(self) -> None:
        """While the app runs, `reverie search` asks it (core/index/search_socket.py): its model and
        vectors are loaded already, so a shell query needs neither."""
        if self._search_server is not None or self._closed or not self.ws.index_is_open:
            return
        from core.index.search_socket import SearchServer, index_answer

        server = SearchServer(self.ws.paths.private_dir, index_answer(self.ws.index), by="app")
        self._search_server = server if server.start() else False

    def _index_failed(self, exc) -> None:
        from core.errors import ModelCancelled

        if isinstance(exc, ModelCancelled):
            return
        self.index_summary = f"index: unavailable ({exc})"
        self.indexState.emit(self.index_summary)

    def refresh_index_state(self) -> None:
        if not self.ws.index_is_open or self._closed:
            return

        def job(_ctx):
            return self.ws.index.status()
        self.submit(job, name="index-status", on_finished=self._index_status, on_failed=lambda exc: None)

    def _index_status(self, status) -> None:
        self.index_summary = describe_index(status)
        self.indexState.emit(self.index_summary)
        pending = _field(status, "pending_embeddings", 0)
        if pending and not self._index_poll.isActive():
            self._index_poll.start()
        elif not pending:
            self._index_poll.stop()

    # ----- dreams ----------------------------------------------------------------------------------
    @property
    def dreaming(self) -> bool:
        return self.dream_task is not None and not self.dream_task.done

    def start_dream(self, *, reason: str = "asked for", scheduled: bool = False) -> TaskHandle | None:
        if self.dreaming or self._closed:
            return None
        self.busy.set()
        monitor, ws, model = self.monitor, self.ws, self.model

        def job(ctx):
            llm = model.client_or_none()
            # A scheduled dream gives way to the agent: any activity stops it at a stage boundary.
            stop = monitor.stop_check(monitor.clock()) if scheduled else None
            result = self.dreamer(ws, llm, progress=ctx.progress, cancel=ctx.token, should_stop=stop,
                                  now=dt.datetime.fromtimestamp(monitor.clock(), dt.timezone.utc))
            monitor.ignore_own_write("MEMORY.md")
            return Outcome(dream_changes(ws, result), result)

        self.dream_task = self.run_op(job, name="dream", on_progress=self.dreamEvent.emit,
                                      on_success=self._dream_done, on_failed=self._dream_failed, by_person=False)
        self.dreamStarted.emit(reason)
        return self.dream_task

    def start_maintenance(self) -> TaskHandle | None:
        if self.dreaming or self._closed:
            return None
        self.busy.set()
        monitor, ws, model = self.monitor, self.ws, self.model

        def job(ctx):
            from core.dream import maintain

            report = maintain(ws, now=dt.datetime.fromtimestamp(monitor.clock(), dt.timezone.utc),
                              llm_factory=model.client_or_none, monitor=monitor, cancel=ctx.token,
                              progress=ctx.progress, dreamer=self.dreamer,
                              reindex=lambda: ws.sync_index(in_child=True, cancel=ctx.token))
            return Outcome(dream_changes(ws, report), report)

        self.dream_task = self.run_op(job, name="maintenance", on_progress=self.dreamEvent.emit,
                                      on_success=self._dream_done, on_failed=self._dream_failed, by_person=False)
        self.dreamStarted.emit(MAINTENANCE)
        return self.dream_task

    def cancel_dream(self) -> None:
        if self.dreaming:
            self.dream_task.cancel("cancelled by the person")

    def _dream_stage(self, event) -> None:
        if getattr(event, "status", "") == "start" and getattr(event, "stage", "") in DREAM_STAGES:
            self.dream_running = True      # a maintenance tick is dreaming only from here on

    def _job_over(self) -> None:
        self.dream_running = False
        self.busy.clear()
        if self.scheduler is not None:
            self.scheduler.job_finished()

    def _dream_done(self, outcome: Outcome) -> None:
        self._job_over()
        result = outcome.value
        applied = _applied_changes(result)
        if applied is not None:
            self.reindex(applied.paths)   # written by the dream's own process: this index has not seen it
        self.dreamFinished.emit(result)

    def _dream_failed(self, exc) -> None:
        from core.errors import ModelCancelled

        self._job_over()
        if self.scheduler is not None and not isinstance(exc, ModelCancelled):
            self.scheduler.back_off(600)
        self.dreamFinished.emit(exc)

    # ----- settings and sessions -------------------------------------------------------------------
    def apply_settings(self, settings, *, on_success=None, on_failed=None) -> TaskHandle | None:
        """Save new settings (ConfigError from core when a value is bad) and let everything follow them.

        The app follows them (the model, the idle time, the schedule) before `on_success(settings)`."""
        old, ws = self.ws.settings, self.ws

        def done(_changes) -> None:
            if old.model != settings.model:
                self.model.reset()
            self.monitor.idle_seconds_needed = settings.dream.idle_minutes * 60.0
            if self.scheduler is not None:
                self.scheduler.poke()
            if on_success is not None:
                on_success(settings)
        return self.run_op(lambda ctx: ws.save_settings(settings), name="save settings", on_success=done,
                           on_failed=on_failed)

    def note_session_ended(self) -> None:
        """The in-app agent ended its session: it counts toward the dream gates, so look at them now."""
        if self.scheduler is not None:
            self.scheduler.poke()

    # ----- agent activity ----------------------------------------------------------------------------
    def note_agent_turn(self) -> None:
        """The in-app agent took a turn: it is not idle (and other Reverie processes hear it)."""
        when = self.clock()
        self.monitor.note_agent_turn(when)
        paths = self.ws.paths

        def job(_ctx):
            from core.dream import record_agent_turn

            record_agent_turn(paths, when)
        self.submit(job, name="agent-turn", on_failed=lambda exc: None)


def _applied_changes(result) -> Changes | None:
    """What a dream that applied its proposal wrote into MEMORY.md (a maintenance tick may carry a dream)."""
    dream = getattr(result, "dream", None) or result
    changes = getattr(getattr(dream, "applied", None), "changes", None)
    return changes if isinstance(changes, Changes) else None


def dream_changes(ws: Workspace, result) -> Changes:
    """Everything a dream or a maintenance tick changed: proposals, MEMORY.md if applied, archived logs."""
    changes = ws.proposal_changes()
    applied = _applied_changes(result)
    if applied is not None:
        changes = applied | changes
    archived = tuple(getattr(result, "archived", None) or ())
    if archived:
        changes = changes | Changes(paths=archived, kinds=("daily",))
    return changes


def _field(value, name: str, default=None):
    if isinstance(value, dict):
        return value.get(name, default)
    return getattr(value, name, default)


def describe_index(status) -> str:
    """One short line for the status bar from whatever `SearchIndex.status()` returns."""
    if status is None:
        return "index: ready"
    lines = _field(status, "lines", None) or _field(status, "rows", None)
    pending = _field(status, "pending_embeddings", 0) or 0
    parts = ["index:"]
    parts.append(f"{lines:,} lines" if isinstance(lines, int) else "ready")
    if pending:
        parts.append(f"· embedding {pending:,} pending")
    return " ".join(parts)
