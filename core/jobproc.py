"""A slow core job in a child process, with progress, cancellation and calls back into the parent.

    result = run_in_child("core.dream.pipeline.isolated:dream_job", args, progress=show, cancel=token,
                          services={"complete": complete, "embed": embed}, nice=5, label="dream")

Why: the desktop app's window is drawn by the main thread of a Python process, and
every thread of that process shares one GIL. An index build or a dream is mostly
pure Python; on a worker thread it holds the GIL for most of its time slices, and
when the cores are busy the window misses its frames behind it (the GUI benchmark
measured 150-300 ms stalls with both running). In a child process the job holds a
GIL of its own. What the job needs from the parent (the app's one shared model, the
embedding process, the idle check) it asks for with `job.call(name, ...)`; the
parent answers on the thread that waits for the child, which sleeps in a poll the
rest of the time.

The job is `target(args, job)`, `target` a "module:function" name; `job` is a
ChildJob (its CancelToken, `progress(value)`, `call(name, *args, **kwargs)`). Messages
are pickled (both ends are this program) over a socket pair:
    parent -> child   ("start", target, args) | ("reply", id, ok, value) | ("cancel", reason)
    child -> parent   ("event", value) | ("call", id, name, args, kwargs) | ("result", value)
                      | ("error", exception, traceback text)
The parent cancels by message, so the job stops at its next checkpoint and never
half-way through a write; a child that does not stop within `cancel_grace_s` is
killed. The child exits when the parent's end closes, so it never outlives the app.
"""
from __future__ import annotations

import importlib
import os
import pickle
import sys
import threading
import time
import traceback
import weakref
from typing import Any, Callable, Mapping

from core.cancel import CancelToken, Cancelled, JobContext
from core.childproc import describe_exit, kill_and_reap, log_tail, start_child
from core.errors import CoreError

POLL_S = 0.1                 # how often a silent wait looks at the cancel token and the child's health
ORPHAN_GRACE_S = 10.0        # a child whose parent went away stops at a checkpoint, or is ended after this


class JobError(CoreError):
    """The job's process could not start, or died without an answer."""


class _ServiceError(CoreError):
    """A parent service raised something that cannot cross a process boundary as itself."""


# ----- the parent's side ---------------------------------------------------------------------------
def run_in_child(target: str, args: Any = None, *, progress: Callable[[Any], None] | None = None,
                 cancel: CancelToken | None = None, services: Mapping[str, Callable[..., Any]] | None = None,
                 nice: int = 0, label: str = "job", cancel_grace_s: float = 30.0,
                 env_defaults: Mapping[str, str] | None = None) -> Any:
    """Run `target(args, job)` in a fresh child process and return what it returned.

    Raises what the job raised (the same exception type when it can be pickled, with the
    child's traceback as a note), Cancelled when `cancel` fired and the job stopped, and
    JobError when the process could not start or died. `progress` gets each value the job
    reports, on this thread; if it raises (a cancelled task's progress does), the job is
    cancelled and waited for.
    """
    services = dict(services or {})
    cancel = cancel or CancelToken()
    try:
        proc, conn, log = start_child("core.jobproc", [str(max(0, int(nice)))], label=label,
                                      env_defaults=env_defaults)
    except OSError as exc:
        raise JobError(f"cannot start the {label} process: {exc}") from exc
    finalizer = weakref.finalize(conn, kill_and_reap, proc)   # an exception anywhere below still ends it
    cancel_sent_at: float | None = None

    def send_cancel(reason: str) -> None:
        nonlocal cancel_sent_at
        if cancel_sent_at is None:
            cancel_sent_at = time.monotonic()
            _send(conn, ("cancel", reason or "cancelled"))

    try:
        _send(conn, ("start", target, args))
        while True:
            if cancel.cancelled:
                send_cancel(cancel.reason)
            if cancel_sent_at is not None and time.monotonic() - cancel_sent_at > cancel_grace_s:
                raise Cancelled(f"{cancel.reason or 'cancelled'} (the {label} process did not stop in "
                                f"{cancel_grace_s:.0f} s and was ended)")
            try:
                if not conn.poll(POLL_S):
                    if proc.poll() is not None and not conn.poll(0):
                        raise EOFError
                    continue
                message = conn.recv()
            except (EOFError, OSError):
                code = proc.wait(timeout=5) if proc.poll() is None else proc.returncode
                tail = log_tail(log)
                raise JobError(f"the {label} process ended without an answer ({describe_exit(code)})"
                               + (f"; its last words: {tail}" if tail else "")) from None
            kind = message[0]
            if kind == "event":
                if progress is not None:
                    try:
                        progress(message[1])
                    except Cancelled as exc:
                        cancel.cancel(str(exc))
                        send_cancel(str(exc))
            elif kind == "call":
                _answer(conn, services, message, label)
            elif kind == "result":
                return message[1]
            elif kind == "error":
                raise _as_raised(message[1], message[2], label)
    finally:
        try:
            conn.close()            # the child, if still there, sees the end and stops
        except OSError:
            pass
        kill_and_reap(proc, grace_s=2.0)
        finalizer.detach()
        log.close()


def _answer(conn, services: Mapping[str, Callable[..., Any]], message: tuple, label: str) -> None:
    _kind, call_id, name, args, kwargs = message
    service = services.get(name)
    try:
        if service is None:
            raise _ServiceError(f"the {label} process asked for {name!r}, which this side does not offer")
        reply = ("reply", call_id, True, service(*args, **kwargs))
    except Exception as exc:   # noqa: BLE001 - the job gets the service's failure as its own exception
        reply = ("reply", call_id, False, portable_exception(exc))
    _send(conn, reply)


def portable_exception(exc: BaseException) -> BaseException:
    """`exc` if it survives pickling both ways (a custom __init__ may not), else one with its words."""
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:   # noqa: BLE001 - anything unpicklable is described instead
        return _ServiceError(f"{type(exc).__name__}: {exc}")


def _send(conn, message: tuple) -> None:
    """Send; a value that cannot be pickled is answered with an error that says so."""
    try:
        conn.send(message)
    except (pickle.PicklingError, TypeError, AttributeError) as exc:
        kind = message[0]
        if kind == "reply":
            conn.send(("reply", message[1], False, _ServiceError(f"the answer cannot be sent back ({exc})")))
        elif kind in ("result", "error"):
            conn.send(("error", JobError(f"the job's {kind} cannot be sent back ({exc})"),
                       message[2] if kind == "error" else ""))
        else:
            raise


def _as_raised(exc: BaseException, child_traceback: str, label: str) -> BaseException:
    if not isinstance(exc, Exception):
        exc = JobError(f"the {label} process failed: {exc!r}")
    if child_traceback and not isinstance(exc, (CoreError,)):
        exc.add_note(f"in the {label} process:\n{child_traceback}")
    return exc


# ----- the child's side ----------------------------------------------------------------------------
class ChildJob(JobContext):
    """What a job function gets in the child: cancel token, progress channel, calls to the parent."""

    def __init__(self, conn):
        super().__init__(CancelToken(), lambda value: self.send(("event", value)))
        self._conn = conn
        self._send_lock = threading.Lock()
        self._ids = iter(range(1, sys.maxsize))
        self._waiting: dict[int, list] = {}        # call id -> [event, ok, value]
        self._waiting_lock = threading.Lock()
        self.parent_gone = threading.Event()
        threading.Thread(target=self._read, name="jobproc-reader", daemon=True).start()

    def call(self, name: str, *args, **kwargs) -> Any:
        """Run the parent's service `name` and return its value (or raise its exception)."""
        call_id = next(self._ids)
        slot = [threading.Event(), False, None]
        with self._waiting_lock:
            if self.parent_gone.is_set():
                raise JobError("the app that started this job went away")
            self._waiting[call_id] = slot
        self.send(("call", call_id, name, args, kwargs))
        slot[0].wait()
        if not slot[1]:
            raise slot[2]
        return slot[2]

    def send(self, message: tuple) -> None:
        with self._send_lock:
            _send(self._conn, message)

    def _read(self) -> None:
        while True:
            try:
                message = self._conn.recv()
            except (EOFError, OSError):
                break
            if message[0] == "cancel":
                self.token.cancel(message[1])
            elif message[0] == "reply":
                with self._waiting_lock:
                    slot = self._waiting.pop(message[1], None)
                if slot is not None:
                    slot[1], slot[2] = message[2], message[3]
                    slot[0].set()
        # The parent is gone (it quit or crashed): stop at the next checkpoint, and for sure soon after.
        self.parent_gone.set()
        self.token.cancel("the app that started this job went away")
        with self._waiting_lock:
            for slot in self._waiting.values():
                slot[1], slot[2] = False, JobError("the app that started this job went away")
                slot[0].set()
            self._waiting.clear()
        timer = threading.Timer(ORPHAN_GRACE_S, os._exit, args=(3,))
        timer.daemon = True
        timer.start()


def _load(target: str) -> Callable[[Any, ChildJob], Any]:
    module, _, name = target.partition(":")
    if not module or not name:
        raise JobError(f"a job target is 'module:function', not {target!r}")
    return getattr(importlib.import_module(module), name)


def serve(fd: int, nice: int = 0) -> int:
    from core.childproc import parent_connection

    conn = parent_connection(fd, nice)
    try:
        kind, target, args = conn.recv()
    except (EOFError, OSError, ValueError):
        return 2
    if kind != "start":
        return 2
    job = ChildJob(conn)
    try:
        result = _load(target)(args, job)
    except BaseException as exc:   # noqa: BLE001 - every failure goes to the parent
        job.send(("error", portable_exception(exc), traceback.format_exc()))
        return 1
    job.send(("result", result))
    return 0


if __name__ == "__main__":
    # Run the module's own copy, not this __main__ one: the exceptions it sends must pickle as
    # core.jobproc.JobError, which the parent can load, not as __main__.JobError.
    from core import jobproc

    sys.exit(jobproc.serve(int(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 0))
