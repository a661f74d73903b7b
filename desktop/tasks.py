"""The one background-task helper of the app: every slow job (disk, index, model, dream) goes here.

    handle = runner.submit(lambda ctx: ws.search(q), name="search",
                           on_finished=show, on_failed=report)

The function runs on a QThreadPool thread and gets a `TaskContext`: its CancelToken,
`ctx.progress(value)` to report (which also raises `Cancelled` once the task is
cancelled, so a pipeline's progress callback doubles as its cancellation point) and
`ctx.check()`. The callbacks always run on the main thread: a task reports by its id
through the runner's one emitter, and a queued connection carries that to the runner.
Widgets are therefore only ever touched from the main thread.

Ownership: no Qt object is made per task, and everything a task brings (its function
and closure, its callbacks, its result or exception) is held by the runner's ledger and
released on the main thread when the task settles; the pool thread keeps no reference
past its report. (A per-task QObject, or a closure holding the controller, released on a
pool thread would be destroyed there while the main thread handles events.)

`shutdown()` cancels everything, waits for the pool, and drops any result still
queued, so quitting during a job never calls back into a window being destroyed.

Every runner, and every QThread the app starts, is registered here so that quitting
can reach them all: `stop_all()` (the main window on close, the app on exit) cancels
each task, stops each thread, and waits a bounded time for them, so the process does
not exit, and kill a worker thread, in the middle of a write.
"""
from __future__ import annotations

import functools
import itertools
import sys
import threading
import time
import traceback
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable

from PySide6.QtCore import QObject, QRunnable, Qt, QThread, QThreadPool, Signal, Slot
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


class _Emitter(QObject):
    """The one sender of a runner's task signals: a child of the runner, living on the main thread.

    Signals carry the task's id, never a per-task QObject: a QObject made for one task is
    destroyed wherever its last reference goes, and a pool thread may hold that reference
    (Qt forbids destroying an object outside its thread while its own thread handles events)."""

    started = Signal(int)
    progress = Signal(int, object)
    returned = Signal(int)


class _Relay:
    """What the main thread keeps of one task until it is settled: its function, callbacks and outcome.

    Held only by the runner's ledger, so all of it (the function's closure, the result) is
    released on the main thread; the pool thread drops its own references before it reports."""

    def __init__(self, ledger: "_Ledger", handle: "TaskHandle", fn: Callable[["TaskContext"], Any],
                 callbacks: dict[str, Callback]):
        self.ledger = ledger          # not the runner: an entry never keeps its runner alive
        self.handle = handle
        self.fn = fn
        self.callbacks = callbacks
        self.outcome: tuple[str, Any] | None = None     # ("on_finished", result) or ("on_failed", exc)

    def _call(self, name: str, *args) -> None:
        callback = self.callbacks.get(name)
        if callback is None or self.ledger.closed:
            return
        try:
            callback(*args)
        except Exception:   # a bug in a callback must not take the event loop down
            traceback.print_exc(file=sys.stderr)


class _Ledger:
    """The runner's tasks, shared with the pool threads: plain Python under one lock, no Qt object.

    A pool thread takes a task's function from here and puts its outcome back; only the main
    thread removes entries."""

    def __init__(self):
        self.lock = threading.Lock()
        self.entries: dict[int, _Relay] = {}
        self.executing: set[int] = set()        # submitted, function not returned (or never to start)
        self.started: set[int] = set()          # taken by a pool thread
        self.closed = False                     # the runner shut down: nothing is called back any more

    def take(self, task_id: int) -> Callable[[TaskContext], Any] | None:
        """The function, for the pool thread to call; the entry keeps its own reference to it."""
        with self.lock:
            self.started.add(task_id)
            entry = self.entries.get(task_id)
            return entry.fn if entry is not None else None

    def deposit(self, task_id: int, outcome: tuple[str, Any]) -> None:
        with self.lock:
            entry = self.entries.get(task_id)
            if entry is not None:
                entry.outcome = outcome

    def returned(self, task_id: int) -> None:
        with self.lock:
            self.executing.discard(task_id)
            self.started.discard(task_id)


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


def _outcome(fn: Callable[[TaskContext], Any] | None, handle: TaskHandle, emitter: _Emitter) -> tuple[str, Any]:
    """Run the task function on this pool thread: ("on_finished", result) or ("on_failed", exception)."""
    try:
        if fn is None or handle.token.cancelled:
            raise Cancelled(handle.token.reason or "cancelled before it started")
        emitter.started.emit(handle.id)
        return "on_finished", fn(TaskContext(handle.token, functools.partial(emitter.progress.emit, handle.id)))
    except BaseException as exc:   # noqa: BLE001 - every failure is reported to the caller
        if not isinstance(exc, Exception):
            exc = RuntimeError(f"{type(exc).__name__} in task {handle.name}")
        return "on_failed", exc


class _Task(QRunnable):
    """Deleted by the pool on its thread after it ran (autoDelete), so it holds nothing that must
    die on the main thread: the task's id and handle, the ledger and the runner's emitter."""

    def __init__(self, handle: TaskHandle, ledger: _Ledger, emitter: _Emitter):
        super().__init__()
        self.setAutoDelete(True)
        self.handle = handle
        self.ledger = ledger
        self.emitter = emitter

    def run(self) -> None:
        handle, ledger = self.handle, self.ledger
        handle.running.set()
        try:
            # One statement: the function and its result are references of this frame only while
            # the call runs; afterwards the ledger's entry (released on the main thread) holds them.
            ledger.deposit(handle.id, _outcome(ledger.take(handle.id), handle, self.emitter))
        finally:
            handle.running.clear()
            ledger.returned(handle.id)
            self.emitter.returned.emit(handle.id)


class TaskRunner(QObject):
    """Runs task functions off the main thread; create it on the main thread."""

    def __init__(self, max_threads: int = 6, parent: QObject | None = None):
        super().__init__(parent)
        # A private pool: the global one is sized to the CPU count (2 here), and a quick search
        # must never wait behind a dream and an index build.
        self.pool = QThreadPool(self)
        self.pool.setMaxThreadCount(max_threads)
        # Made after the pool: children are destroyed in order, and the pool's destructor waits for
        # its tasks, so the emitter outlives every task that could emit on it.
        self._emitter = _Emitter(self)
        self._emitter.started.connect(self._on_started, Qt.ConnectionType.QueuedConnection)
        self._emitter.progress.connect(self._on_progress, Qt.ConnectionType.QueuedConnection)
        self._emitter.returned.connect(self._on_returned, Qt.ConnectionType.QueuedConnection)
        self._ids = itertools.count(1)
        self._ledger = _Ledger()
        _RUNNERS.add(self)

    @property
    def closed(self) -> bool:
        return self._ledger.closed

    def submit(self, fn: Callable[[TaskContext], Any], *, name: str = "task", on_started: Callback = None,
               on_progress: Callback = None, on_finished: Callback = None, on_failed: Callback = None,
               token: CancelToken | None = None) -> TaskHandle:
        if self.closed:
            raise RuntimeError("the task runner has shut down")
        handle = TaskHandle(next(self._ids), name, token or CancelToken())
        relay = _Relay(self._ledger, handle, fn, {"on_started": on_started, "on_progress": on_progress,
                                          "on_finished": on_finished, "on_failed": on_failed})
        with self._ledger.lock:
            self._ledger.entries[handle.id] = relay
            self._ledger.executing.add(handle.id)
        self.pool.start(_Task(handle, self._ledger, self._emitter))
        return handle

    # ----- on the main thread: the emitter's queued signals ----------------------------------------
    def _entry(self, task_id: int) -> _Relay | None:
        with self._ledger.lock:
            return self._ledger.entries.get(task_id)

    @Slot(int)
    def _on_started(self, task_id: int) -> None:
        relay = self._entry(task_id)
        if relay is not None:
            relay._call("on_started")

    @Slot(int, object)
    def _on_progress(self, task_id: int, value) -> None:
        relay = self._entry(task_id)
        if relay is not None and not relay.handle.done:
            relay._call("on_progress", value)

    @Slot(int)
    def _on_returned(self, task_id: int) -> None:
        with self._ledger.lock:
            relay = self._ledger.entries.pop(task_id, None)
        if relay is None:
            return
        relay.handle.done = True
        if relay.outcome is not None:
            name, value = relay.outcome
            relay._call(name, value)

    # ----- state -------------------------------------------------------------------------------
    def active(self) -> list[TaskHandle]:
        """Tasks whose function has not returned yet."""
        with self._ledger.lock:
            entries = self._ledger.entries
            return [entries[i].handle for i in self._ledger.executing if i in entries]

    def pending(self) -> list[TaskHandle]:
        """Tasks not settled on the main thread yet (running, or their result still queued)."""
        with self._ledger.lock:
            return [entry.handle for entry in self._ledger.entries.values()]

    def cancel_all(self, reason: str = "cancelled") -> None:
        for handle in self.pending():
            handle.cancel(reason)

    def wait(self, timeout_s: float) -> bool:
        """Block until every task function returned (shutting down; a test waiting for its tasks)."""
        return self.pool.waitForDone(int(timeout_s * 1000))

    def shutdown(self, timeout_s: float = 10.0) -> bool:
        """Cancel every task, wait for them, and drop results not delivered yet. True when all stopped.

        A task still running at the deadline keeps its entry, so its function and result are still
        released on the main thread once it returns (nothing is called back: the runner is closed)."""
        self.cancel_all("the app is quitting")
        self.pool.clear()             # tasks still queued never start
        stopped = self.wait(timeout_s)
        with self._ledger.lock:
            ledger = self._ledger
            ledger.closed = True
            still = ledger.started & ledger.executing        # taken by a pool thread, not returned
            ledger.executing &= still                        # the ones clear() removed never start
            dropped = [ledger.entries.pop(i) for i in list(ledger.entries) if i not in still]
            for i in still & ledger.entries.keys():         # never called now: let go of what they hold
                dropped.append(ledger.entries[i].callbacks)
                ledger.entries[i].callbacks = {}
        del dropped                   # released here, on the main thread
        return stopped
