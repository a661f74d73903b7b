"""The one background-task helper of the app: every slow job (disk, index, model, dream) goes here.

    handle = runner.submit(lambda ctx: ws.search(q), name="search",
                           on_finished=show, on_failed=report)

The function runs on a QThreadPool thread and gets a `TaskContext`: its CancelToken,
`ctx.progress(value)` to report (which also raises `Cancelled` once the task is
cancelled, so a pipeline's progress callback doubles as its cancellation point) and
`ctx.check()`. The callbacks always run on the main thread: each task's signals
go to a relay QObject that lives there, so a queued connection carries them over.
Widgets are therefore only ever touched from the main thread.

`shutdown()` cancels everything, waits for the pool, and drops any result still
queued, so quitting during a job never calls back into a window being destroyed.

Every runner, and every QThread the app starts, is registered here so that quitting
can reach them all: `stop_all()` (the main window on close, the app on exit) cancels
each task, stops each thread, and waits a bounded time for them, so the process does
not exit, and kill a worker thread, in the middle of a write.
"""
from __future__ import annotations

import itertools
import sys
import threading
import time
import traceback
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable

from PySide6.QtCore import QObject, QRunnable, QThread, QThreadPool, Signal, Slot
from shiboken6 import isValid

from core.cancel import CancelToken, Cancelled, JobContext

Callback = Callable[..., Any] | None
_RUNNERS: "weakref.WeakSet[TaskRunner]" = weakref.WeakSet()
_THREADS: "weakref.WeakSet[QThread]" = weakref.WeakSet()


QUIT_WAIT_S = 3.0   # how long quitting waits for cancelled work to reach its next cancellation point


def register_thread(thread: QThread) -> QThread:
    """Every QThread the app starts is registered, so that quitting stops it (`stop_all`)."""
    _THREADS.add(thread)
    return thread


def _within(obj: QObject, owner: QObject | None) -> bool:
    """Whether `obj` is alive and `owner` or one of its descendants (any live one, without an owner).

    A runner whose Qt side is gone (deleted with its parent) has no pool left that could run anything."""
    if not isValid(obj):
        return False
    while owner is not None and obj is not None:
        if obj is owner:
            return True
        obj = obj.parent()
    return owner is None


def running_threads(owner: QObject | None = None) -> list[QThread]:
    """Registered threads (of `owner`'s, or all) still running: the ones quitting stops."""
    return [t for t in list(_THREADS) if t.isRunning() and _within(t, owner)]


def busy_runners(owner: QObject | None = None) -> list["TaskRunner"]:
    """Runners (of `owner`'s, or all) with a task function still executing: what quitting had to leave."""
    return [r for r in list(_RUNNERS) if _within(r, owner) and r.active()]


def stop_all(timeout_s: float = QUIT_WAIT_S, owner: QObject | None = None) -> list[str]:
    """Quitting: cancel every task and stop every registered thread (of `owner`'s, or all), then wait for
    them, `timeout_s` in all. Returns what was still running at the deadline (empty when all stopped).

    Work is cancelled everywhere first and then waited for, so the tasks of several runners reach
    their cancellation points side by side, not one runner after another. A task that ignores
    cancellation (a model load cannot be interrupted) is given up on at the deadline, so quitting
    never hangs on it; it is named so the app can say what was left.
    """
    deadline = time.monotonic() + timeout_s
    runners = [r for r in list(_RUNNERS) if not r.closed and _within(r, owner)]
    threads = running_threads(owner)
    for runner in runners:
        runner.cancel_all("the app is quitting")
        runner.pool.clear()                      # tasks still queued never start
    for thread in threads:
        thread.requestInterruption()
        thread.quit()
    for runner in runners:
        runner.wait(_left_s(deadline))
    left = [f"task {h.name!r}" for runner in busy_runners(owner) for h in runner.active()]
    left += [f"thread {t.objectName() or 'unnamed'}" for t in threads if not t.wait(int(_left_s(deadline) * 1000))]
    for runner in runners:
        runner.shutdown(0)                       # whatever is still queued for the main thread is dropped
    return left


def _left_s(deadline: float) -> float:
    return max(0.0, deadline - time.monotonic())


class TaskContext(JobContext):
    """What a task function sees: its cancel token and a progress channel (core.cancel.JobContext)."""


class _Signals(QObject):
    started = Signal()
    progress = Signal(object)
    finished = Signal(object)
    failed = Signal(object)


class _Relay(QObject):
    """Lives on the main thread; its slots run there and call the caller's callbacks."""

    def __init__(self, runner: "TaskRunner", handle: "TaskHandle", callbacks: dict[str, Callback]):
        super().__init__()
        self.runner = runner
        self.handle = handle
        self.callbacks = callbacks

    def _call(self, name: str, *args) -> None:
        callback = self.callbacks.get(name)
        if callback is None or self.runner.closed:
            return
        try:
            callback(*args)
        except Exception:   # a bug in a callback must not take the event loop down
            traceback.print_exc(file=sys.stderr)

    @Slot()
    def on_started(self) -> None:
        self._call("on_started")

    @Slot(object)
    def on_progress(self, value) -> None:
        if not self.handle.done:
            self._call("on_progress", value)

    @Slot(object)
    def on_finished(self, result) -> None:
        self.runner._settle(self.handle)
        self._call("on_finished", result)

    @Slot(object)
    def on_failed(self, error) -> None:
        self.runner._settle(self.handle)
        self._call("on_failed", error)


@dataclass
class TaskHandle:
    id: int
    name: str
    token: CancelToken
    done: bool = False
    running: threading.Event = field(default_factory=threading.Event)   # set while the function runs

    def cancel(self, reason: str = "cancelled") -> None:
        self.token.cancel(reason)

    @property
    def cancelled(self) -> bool:
        return self.token.cancelled


class _Task(QRunnable):
    def __init__(self, fn: Callable[[TaskContext], Any], handle: TaskHandle, signals: _Signals,
                 finished_running: Callable[[TaskHandle], None]):
        super().__init__()
        self.setAutoDelete(False)   # the runner keeps the Python object alive until it settles
        self.fn = fn
        self.handle = handle
        self.signals = signals
        self.finished_running = finished_running

    def run(self) -> None:
        handle = self.handle
        handle.running.set()
        try:
            if handle.token.cancelled:
                raise Cancelled(handle.token.reason or "cancelled before it started")
            self.signals.started.emit()
            result = self.fn(TaskContext(handle.token, self.signals.progress.emit))
        except BaseException as exc:   # noqa: BLE001 - every failure is reported to the caller
            if not isinstance(exc, Exception):
                exc = RuntimeError(f"{type(exc).__name__} in task {handle.name}")
            self.signals.failed.emit(exc)
        else:
            self.signals.finished.emit(result)
        finally:
            handle.running.clear()
            self.finished_running(handle)


class TaskRunner(QObject):
    """Runs task functions off the main thread; create it on the main thread."""

    def __init__(self, max_threads: int = 6, parent: QObject | None = None):
        super().__init__(parent)
        # A private pool: the global one is sized to the CPU count (2 here), and a quick search
        # must never wait behind a dream and an index build.
        self.pool = QThreadPool(self)
        self.pool.setMaxThreadCount(max_threads)
        self.closed = False
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._live: dict[int, tuple[TaskHandle, _Task, _Relay]] = {}
        self._executing: set[int] = set()
        _RUNNERS.add(self)

    def submit(self, fn: Callable[[TaskContext], Any], *, name: str = "task", on_started: Callback = None,
               on_progress: Callback = None, on_finished: Callback = None, on_failed: Callback = None,
               token: CancelToken | None = None) -> TaskHandle:
        if self.closed:
            raise RuntimeError("the task runner has shut down")
        handle = TaskHandle(next(self._ids), name, token or CancelToken())
        relay = _Relay(self, handle, {"on_started": on_started, "on_progress": on_progress,
                                      "on_finished": on_finished, "on_failed": on_failed})
        signals = _Signals()
        signals.started.connect(relay.on_started)
        signals.progress.connect(relay.on_progress)
        signals.finished.connect(relay.on_finished)
        signals.failed.connect(relay.on_failed)
        task = _Task(fn, handle, signals, self._done_running)
        with self._lock:
            self._live[handle.id] = (handle, task, relay)
            self._executing.add(handle.id)
        self.pool.start(task)
        return handle

    def _done_running(self, handle: TaskHandle) -> None:   # on the worker thread
        with self._lock:
            self._executing.discard(handle.id)

    def _settle(self, handle: TaskHandle) -> None:         # on the main thread
        handle.done = True
        with self._lock:
            self._live.pop(handle.id, None)

    def active(self) -> list[TaskHandle]:
        """Tasks whose function has not returned yet."""
        with self._lock:
            return [self._live[i][0] for i in self._executing if i in self._live]

    def pending(self) -> list[TaskHandle]:
        """Tasks not settled on the main thread yet (running, or their result still queued)."""
        with self._lock:
            return [entry[0] for entry in self._live.values()]

    def cancel_all(self, reason: str = "cancelled") -> None:
        for handle in self.pending():
            handle.cancel(reason)

    def wait(self, timeout_s: float) -> bool:
        """Block until every task function returned (shutting down; a test waiting for its tasks)."""
        return self.pool.waitForDone(int(timeout_s * 1000))

    def shutdown(self, timeout_s: float = 10.0) -> bool:
        """Cancel every task, wait for them, and drop results not delivered yet. True when all stopped."""
        self.cancel_all("the app is quitting")
        self.pool.clear()             # tasks still queued never start
        stopped = self.wait(timeout_s)
        self.closed = True
        with self._lock:
            self._live.clear()
            self._executing.clear()   # includes tasks the clear() above removed before they started
        return stopped
