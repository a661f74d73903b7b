"""The embedding model in a child process: `python -m core.index.embed_proc FD MODEL [NICE]`.

Why a process: in the app, torch's import, the model load and every encode hold
the GIL for hundreds of milliseconds at a time, and the GUI's main thread waits
behind them (the GUI benchmark measured 0.4 s stalls). In a child process they
hold a different GIL. `ProcessEmbedder` implements the Embedder protocol of
core/index/embedder.py by talking to the child; its model_id is the in-process
one, so the embedding cache stays valid whichever runs.

The child is started like every other child (core/childproc.py): one end of a
socket pair as a multiprocessing Connection, pickled messages both ways.
    parent -> child   ("embed", [texts])        ("shutdown",)
    child -> parent   ("hello", dim, model_id)  once the model is loaded
                      ("vectors", float32 array (n, dim))
                      ("error", message)
The child exits when the connection closes, so it never outlives the parent.

One child serves everyone (the index's background embedding, a dream, a search
query). A query must not wait behind a dream's thousands of lines: requests of a
few texts go first, and bulk requests are sent in chunks so a query slips in
between two of them.
"""
from __future__ import annotations

import subprocess
import sys
import threading
import time
import weakref
from multiprocessing.connection import Connection
from typing import IO, Sequence

import numpy as np

from core.childproc import kill_and_reap, log_tail, parent_connection, start_child
from core.index.embedder import EmbedderError, in_process_embedder, model_id_for

START_TIMEOUT_S = 120.0     # torch's import and the model load, with every core busy
POLL_S = 0.5                # how often a silent wait checks that the child still lives
URGENT_TEXTS = 4            # a request this small is a query: it goes ahead of bulk work
CHUNK_TEXTS = 64            # bulk work goes in chunks this size (a fraction of a second of MiniLM)
_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}


class _ChildGone(Exception):
    """The child died or its connection broke mid-request."""


class _Turns:
    """A lock whose urgent waiters are served before the others."""

    def __init__(self):
        self._cond = threading.Condition()
        self._busy = False
        self._urgent_waiting = 0

    def acquire(self, urgent: bool) -> None:
        with self._cond:
            if urgent:
                self._urgent_waiting += 1
            try:
                while self._busy or (not urgent and self._urgent_waiting):
                    self._cond.wait()
            finally:
                if urgent:
                    self._urgent_waiting -= 1
            self._busy = True

    def try_acquire(self, timeout_s: float) -> bool:
        with self._cond:
            if not self._cond.wait_for(lambda: not self._busy, timeout=timeout_s):
                return False
            self._busy = True
            return True

    def release(self) -> None:
        with self._cond:
            self._busy = False
            self._cond.notify_all()


def _stop(proc: subprocess.Popen, conn: Connection) -> None:
    try:
        conn.close()            # the child sees EOF and exits by itself
    except OSError:
        pass
    kill_and_reap(proc, grace_s=3)


class ProcessEmbedder:
    """The Embedder protocol, served by a child process started on first use.

    Thread-safe: one request at a time in the child, queries first. A child that
    dies is restarted once per request; if the fresh one fails too the request
    raises EmbedderError.
    """

    def __init__(self, model: str = "", *, nice: int = 10):
        self.model = model
        # Background embedding yields the CPU to the process it serves (a GUI's main thread,
        # an agent's turn): with few cores the two compete for the same ones.
        self.nice = nice
        self.name, self.model_id = model_id_for(model)
        self._dim = 0
        self._proc: subprocess.Popen | None = None
        self._conn: Connection | None = None
        self._log: IO[bytes] | None = None
        self._finalizer = None
        self._turns = _Turns()
        self._generation = 0               # bumped by close(): requests made before it fail instead of restarting
        self.starts = 0                    # how many children were started (diagnostics)

    # ----- protocol ------------------------------------------------------------------------------
    @property
    def dim(self) -> int:
        if not self._dim:
            self._run(lambda: None, urgent=True, generation=self._generation)
        return self._dim

    @property
    def loaded(self) -> bool:
        return self.alive()

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self.alive() else None

    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def load(self) -> "ProcessEmbedder":
        self.dim
        return self

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        texts = [str(t) for t in texts]
        generation = self._generation
        if len(texts) <= URGENT_TEXTS:
            return self._run(lambda: self._exchange(texts), urgent=True, generation=generation)
        # Bulk: one turn per chunk, so a query waiting meanwhile goes between two chunks.
        parts = [self._run(lambda chunk=texts[i:i + CHUNK_TEXTS]: self._exchange(chunk), urgent=False,
                           generation=generation) for i in range(0, len(texts), CHUNK_TEXTS)]
        return np.concatenate(parts)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed_batch(texts)

    def close(self) -> None:
        """Stop the child; a request in flight or waiting fails (EmbedderError) instead of starting a new one.

        Used again later, the embedder starts a fresh child. A request may be waiting for a
        child still loading its model (tens of seconds on a busy machine): then the child is
        killed rather than waited for, so closing a workspace stays quick.
        """
        self._generation += 1
        if self._turns.try_acquire(0.2):
            try:
                if self._conn is not None:
                    try:
                        self._conn.send(("shutdown",))
                    except OSError:
                        pass
                self._stop_child()
            finally:
                self._turns.release()
            return
        proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.kill()            # the request in flight sees it die, fails, and cleans up in its turn

    # ----- one request, restarted once ------------------------------------------------------------
    def _run(self, work, *, urgent: bool, generation: int):
        self._turns.acquire(urgent)
        try:
            for attempt in range(2):
                self._check_open(generation)
                self._ensure_started()
                try:
                    result = work()
                    return result if result is not None else np.zeros((0, self._dim), dtype=np.float32)
                except _ChildGone as exc:
                    tail = self._stop_child()
                    self._check_open(generation)
                    if attempt:
                        detail = f"; its last words: {tail}" if tail else ""
                        raise EmbedderError(f"the embedding process for {self.name} died twice in a row ({exc})"
                                            f"{detail}") from None
            raise AssertionError("unreachable")
        finally:
            self._turns.release()

    def _check_open(self, generation: int) -> None:
        if generation != self._generation:
            raise EmbedderError(f"the embedding process for {self.name} was stopped (the workspace is closing)")

    def _exchange(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        try:
            self._conn.send(("embed", texts))
        except OSError as exc:
            raise _ChildGone(f"cannot write to it: {exc}") from None
        reply = self._receive(self.alive)
        if reply[0] != "vectors":
            raise EmbedderError(f"embedding with {self.name}: {reply[1] if len(reply) > 1 else 'failed'}")
        return reply[1]

    def _receive(self, alive) -> tuple:
        """The child's next message; waits in short slices so a child that dies silently is noticed."""
        conn = self._conn
        try:
            while not conn.poll(POLL_S):
                if not alive():
                    raise _ChildGone("the embedding process exited")
            return conn.recv()
        except (EOFError, OSError) as exc:
            raise _ChildGone(f"the connection closed ({exc or type(exc).__name__})") from None

    # ----- the child -----------------------------------------------------------------------------
    def _ensure_started(self) -> None:
        if self.alive():
            return
        self._stop_child()
        try:
            self._proc, self._conn, self._log = start_child("core.index.embed_proc", [self.model, str(self.nice)],
                                                            label="embedder", env_defaults=_ENV)
        except OSError as exc:
            raise EmbedderError(f"cannot start the embedding process: {exc}") from exc
        self.starts += 1
        # Never leave a child behind when the embedder is dropped or the program exits.
        self._finalizer = weakref.finalize(self, _stop, self._proc, self._conn)
        try:
            hello = self._receive(self._starting_alive())
        except _ChildGone as exc:
            tail = self._stop_child()
            raise EmbedderError(f"the embedding process for {self.name} did not start ({exc})"
                                + (f": {tail}" if tail else "")) from None
        if hello[0] != "hello":
            self._stop_child()
            raise EmbedderError(hello[1] if len(hello) > 1 else f"the embedding process for {self.name} failed to start")
        _tag, self._dim, model_id = hello
        if model_id != self.model_id:      # the weights changed between our look and its load
            self.model_id = model_id

    def _starting_alive(self):
        deadline, generation = time.monotonic() + START_TIMEOUT_S, self._generation

        def alive() -> bool:
            # Closed meanwhile (close() may have missed a child started just after it looked): give up too.
            return self.alive() and time.monotonic() < deadline and generation == self._generation
        return alive

    def _stop_child(self) -> str:
        """Stop the child if any; returns the tail of its output (why it died)."""
        tail = log_tail(self._log)
        if self._finalizer is not None:
            self._finalizer()          # closes our end, waits for the child, kills it if it hangs
            self._finalizer = None
        self._proc = None
        self._conn = None
        if self._log is not None:
            self._log.close()
            self._log = None
        return tail


# ----- the child's side ----------------------------------------------------------------------------
def serve(conn: Connection, model: str) -> int:
    try:
        embedder = in_process_embedder(model)
        dim = int(embedder.dim)
        embedder.embed_batch(["warm up"])     # the first encode is slow; pay it before the first request
    except Exception as exc:   # any failure to load is one message for the parent
        conn.send(("error", str(exc)))
        return 1
    conn.send(("hello", dim, embedder.model_id))
    while True:
        try:
            request = conn.recv()
        except (EOFError, OSError):
            return 0                          # the parent closed the connection or went away
        if request[0] == "shutdown":
            return 0
        try:
            reply = ("vectors", np.ascontiguousarray(embedder.embed_batch(request[1]), dtype=np.float32))
        except Exception as exc:   # a bad batch fails that request only
            reply = ("error", f"{type(exc).__name__}: {exc}")
        try:
            conn.send(reply)
        except OSError:
            return 0


def main(argv: list[str]) -> int:
    fd, model = int(argv[0]), argv[1] if len(argv) > 1 else ""
    conn = parent_connection(fd, int(argv[2]) if len(argv) > 2 else 0)
    try:
        return serve(conn, model)
    finally:
        conn.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
