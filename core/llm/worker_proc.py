"""Starting, talking to and stopping the worker process (core/llm/worker.py).

One request at a time over a socket pair. Events of a request are read here
with a short poll so that a CancelToken is seen at once and a dead worker is
noticed even while it is silent (a long prompt, a segfault).
"""
from __future__ import annotations

import json
import signal
import subprocess
import time
import weakref
from multiprocessing.connection import Connection
from typing import Callable

from core.cancel import CancelToken, Cancelled
from core.childproc import describe_exit, kill_and_reap, log_tail, start_child
from core.errors import ContextOverflowError, ModelError, ModelWorkerCrashed
from core.llm.engine import LLAMA_ENV

POLL_S = 0.05


class _IdleExit(Exception):
    """The worker had just exited for idleness when the request arrived: start a new one and resend."""


def crash_hint(code: int | None) -> str:
    """What a person can do about a worker's death, where its cause says (an illegal instruction)."""
    if code != -signal.SIGILL:
        return ""
    from core.llm.engine import extra_buffers_forced

    hint = ("llama.cpp ran a CPU instruction this machine cannot run: its llama-cpp-python build was made for "
            "another CPU (a wheel reused from pip's cache or a copied .venv), or it uses AMX that this machine "
            "lists but cannot run. In a source checkout, rebuild it for any CPU of this kind with "
            "`REVERIE_REBUILD=1 bash scripts/setup.sh`")
    if extra_buffers_forced():
        hint += ", or unset REVERIE_LLAMA_EXTRA_BUFTS (it turns on the weight repacking that uses AMX)"
    return hint + ". "


class WorkerProcess:
    def __init__(self, config: dict, label: str):
        self.config = config
        self.label = label
        self.proc: subprocess.Popen | None = None
        self.conn: Connection | None = None
        self._log = None
        self._finalizer = None

    # -- life cycle --------------------------------------------------------
    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None and self.proc.poll() is None else None

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self) -> None:
        try:
            self.proc, self.conn, self._log = start_child("core.llm.worker", [json.dumps(self.config)],
                                                          label="llm-worker", env_defaults=LLAMA_ENV)
        except OSError as exc:
            raise ModelError(f"cannot start the model worker: {exc}") from exc
        # Never leave a worker behind when the client is dropped or the program exits.
        self._finalizer = weakref.finalize(self, kill_and_reap, self.proc)

    def stop(self, graceful: bool = True) -> None:
        proc, conn = self.proc, self.conn
        self.proc = self.conn = None
        if proc is None:
            return
        if graceful and conn is not None and proc.poll() is None:
            try:
                conn.send({"op": "shutdown"})
                proc.wait(timeout=3)
            except (OSError, subprocess.TimeoutExpired):
                pass
        kill_and_reap(proc)
        if conn is not None:
            conn.close()
        if self._finalizer is not None:
            self._finalizer.detach()
        if self._log is not None:
            self._log.close()
            self._log = None

    def log_tail(self, chars: int = 400) -> str:
        return log_tail(self._log, chars)

    def _crashed(self) -> ModelWorkerCrashed:
        code = self.proc.poll() if self.proc is not None else None
        tail = self.log_tail()
        self.stop(graceful=False)
        detail = f"; its last words: {tail}" if tail else ""
        return ModelWorkerCrashed(f"the model worker for {self.label} died ({describe_exit(code)}){detail}. "
                                  f"{crash_hint(code)}The next request starts a fresh one.")

    # -- requests ----------------------------------------------------------
    def request(self, message: dict, *, on_token: Callable[[str], None] | None = None,
                cancel: CancelToken | None = None, cancel_deadline_s: float = 2.0) -> dict:
        for attempt in range(2):
            if not self.alive():
                self.stop(graceful=False)
                self.start()
            try:
                return self._exchange(message, on_token, cancel, cancel_deadline_s)
            except _IdleExit:
                self.stop(graceful=False)
                if attempt:
                    raise self._crashed() from None
        raise AssertionError("unreachable")

    def _exchange(self, message, on_token, cancel, cancel_deadline_s) -> dict:
        conn, got_event = self.conn, False
        try:
            conn.send(message)
        except OSError:
            raise _IdleExit() if self.proc.poll() == 0 else self._crashed() from None
        cancel_sent = None
        callback_error: BaseException | None = None
        try:
            while True:
                wants_stop = callback_error is not None or (cancel is not None and cancel.cancelled)
                if wants_stop and cancel_sent is None:
                    cancel_sent = time.monotonic()
                    try:
                        conn.send({"op": "cancel"})
                    except OSError:
                        pass
                if cancel_sent is not None and time.monotonic() - cancel_sent > cancel_deadline_s:
                    # Stuck in a long prompt (llama.cpp cannot be interrupted there): kill it.
                    self.stop(graceful=False)
                    if callback_error is not None:
                        raise callback_error
                    raise Cancelled(f"{cancel.reason or 'cancelled'} (the model did not stop within "
                                    f"{cancel_deadline_s:g} s; its worker was stopped)")
                try:
                    ready = conn.poll(POLL_S)
                except OSError:
                    ready = True
                if not ready:
                    if self.proc.poll() is not None and not conn.poll(0):
                        raise (_IdleExit() if self.proc.returncode == 0 and not got_event else self._crashed())
                    continue
                try:
                    event = conn.recv()
                except (EOFError, OSError):
                    try:
                        self.proc.wait(timeout=5)
                    except subprocess.TimeoutExpired:   # the channel broke but the process lives on: a crash too
                        pass
                    raise (_IdleExit() if self.proc.returncode == 0 and not got_event else self._crashed()) from None
                got_event = True
                kind = event.get("ev")
                if kind == "tok":
                    if on_token is not None and callback_error is None:
                        try:
                            on_token(event["text"])
                        except BaseException as exc:   # the caller's callback failed: stop the model, then re-raise
                            callback_error = exc
                    continue
                if callback_error is not None:
                    raise callback_error
                if kind == "error":
                    raise self._error(event)
                if event.get("finish_reason") == "cancelled":
                    raise Cancelled(cancel.reason if cancel is not None and cancel.reason else "cancelled")
                return event
        except (Cancelled, ModelError, _IdleExit):
            raise
        except BaseException:
            # KeyboardInterrupt or a bug mid-request: the worker's state is unknown, so start afresh next time.
            self.stop(graceful=False)
            raise

    def _error(self, event: dict) -> Exception:
        kind, message = event.get("kind"), event.get("message", "")
        if kind == "overflow":
            return ContextOverflowError(f"context length exceeded: {message}",
                                        prompt_tokens=int(event.get("prompt_tokens", 0)),
                                        context_length=int(event.get("context_length", 0)))
        return ModelError(f"{self.label}: {message}")
