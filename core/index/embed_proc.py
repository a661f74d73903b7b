"""The embedding model in a child process: `python -m core.index.embed_proc FD MODEL [NICE]`.

Why a process: in the app, torch's import, the model load and every encode hold
the GIL for hundreds of milliseconds at a time, and the GUI's main thread waits
behind them (the GUI benchmark measured 0.4 s stalls). In a child process they
hold a different GIL. `ProcessEmbedder` implements the Embedder protocol of
core/index/embedder.py by talking to the child; its model_id is the in-process
one, so the embedding cache stays valid whichever runs.

The child is started like every other child (core/childproc.py): one end of a
socket pair as a multiprocessing Connection, pickled messages both ways.
    parent -> child   ("embed", id, [texts], urgent)   ("shutdown",)
    child -> parent   ("hello", dim, model_id)  once the model is loaded
                      ("vectors", id, float32 array (n, dim))
                      ("error", id, message)
The child exits when the connection closes, so it never outlives the parent.

One child serves everyone (the index's background embedding, a dream, a search
query), and a query must not wait behind a dream's thousands of lines. So the
queue is in the child: requests of a few texts (a query) are urgent and answered
as soon as they arrive; bulk requests are worked through SUB_TEXTS texts at a
time, and between two such pieces the child reads what came in meanwhile. A
query waits at most one piece (a few hundred milliseconds on a busy core), not
a whole batch. Many requests may be in flight at once: a reader thread in the
parent hands each answer to the request it belongs to.
"""
from __future__ import annotations

import itertools
import subprocess
import sys
import threading
import time
import weakref
from collections import deque
from multiprocessing.connection import Connection
from typing import IO, Sequence

import numpy as np

from core.childproc import kill_and_reap, log_tail, parent_connection, start_child
from core.index.embedder import EmbedderError, model_id_for
from core.index.embedders import in_process_embedder

START_TIMEOUT_S = 120.0     # torch's import and the model load, with every core busy
POLL_S = 0.5                # how often a silent wait checks that the child still lives
URGENT_TEXTS = 4            # a request this small is a query: it goes ahead of bulk work
CHUNK_TEXTS = 64            # bulk work is sent in requests this size (bounded messages, bounded retries)
SUB_TEXTS = 8               # the child encodes bulk work this many texts at a time, reading new requests between
_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}


class _ChildGone(Exception):
    """The child died or its connection broke mid-request."""


def _stop(proc: subprocess.Popen, conn: Connection) -> None:
    try:
        conn.close()            # the child sees EOF and exits by itself
    except OSError:
        pass
    kill_and_reap(proc, grace_s=3)


class _Request:
    __slots__ = ("done", "reply")

    def __init__(self):
        self.done = threading.Event()
        self.reply: tuple | None = None     # None once done: the child went away first


class _Child:
    """One running child: its process, its connection, and the requests it still owes an answer."""

    def __init__(self, owner, proc: subprocess.Popen, conn: Connection, log: IO[bytes]):
        self.proc, self.conn, self.log = proc, conn, log
        self.waiting: dict[int, _Request] = {}
        self.lock = threading.Lock()        # guards `waiting` and sending
        self.gone = ""
        # Never leave a child behind when the embedder is dropped or the program exits.
        self.finalizer = weakref.finalize(owner, _stop, proc, conn)

    def alive(self) -> bool:
        return not self.gone and self.proc.poll() is None

    def start_reader(self) -> None:
        threading.Thread(target=self._read, name="reverie-embedder-replies", daemon=True).start()

    def _read(self) -> None:
        while True:
            try:
                message = self.conn.recv()
            except (EOFError, OSError) as exc:
                self.fail(f"the connection closed ({exc or type(exc).__name__})")
                return
            with self.lock:
                request = self.waiting.pop(message[1], None)
            if request is not None:
                request.reply = message
                request.done.set()

    def fail(self, why: str) -> None:
        with self.lock:
            self.gone = self.gone or why
            waiting, self.waiting = self.waiting, {}
        for request in waiting.values():
            request.done.set()

    def ask(self, request_id: int, texts: list[str], urgent: bool) -> tuple:
        request = _Request()
        with self.lock:
            if self.gone:
                raise _ChildGone(self.gone)
            self.waiting[request_id] = request
            try:
                self.conn.send(("embed", request_id, texts, urgent))
            except OSError as exc:
                self.waiting.pop(request_id, None)
                raise _ChildGone(f"cannot write to it: {exc}") from None
        while not request.done.wait(POLL_S):
            if self.proc.poll() is not None:         # died silently: the reader may not have seen it yet
                self.fail("the embedding process exited")
        if request.reply is None:
            raise _ChildGone(self.gone or "the embedding process exited")
        return request.reply

    def busy(self) -> bool:
        with self.lock:
            return bool(self.waiting)


class ProcessEmbedder:
    """The Embedder protocol, served by a child process started on first use.

    Thread-safe, many requests in flight, queries first (the child's queue). A
    child that dies is restarted once per request; if the fresh one fails too
    the request raises EmbedderError.
    """

    def __init__(self, model: str = "", *, nice: int = 10):
        self.model = model
        # Background embedding yields the CPU to the process it serves (a GUI's main thread,
        # an agent's turn): with few cores the two compete for the same ones.
        self.nice = nice
        self.name, self.model_id = model_id_for(model)
        self._dim = 0
        self._child: _Child | None = None
        self._starting: subprocess.Popen | None = None
        self._start_lock = threading.Lock()
        self._ids = itertools.count(1)
        self._generation = 0               # bumped by close(): requests made before it fail instead of restarting
        self.starts = 0                    # how many children were started (diagnostics)

    # ----- protocol ------------------------------------------------------------------------------
    @property
    def dim(self) -> int:
        if not self._dim:
            self._current(self._generation)
        return self._dim

    @property
    def loaded(self) -> bool:
        return self.alive()

    @property
    def pid(self) -> int | None:
        return self._child.proc.pid if self.alive() else None

    @property
    def _proc(self) -> subprocess.Popen | None:
        """The child process (starting or running), if any."""
        return self._starting or (self._child.proc if self._child is not None else None)

    def alive(self) -> bool:
        return self._child is not None and self._child.alive()

    def load(self) -> "ProcessEmbedder":
        self.dim
        return self

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        texts = [str(t) for t in texts]
        generation = self._generation
        if len(texts) <= URGENT_TEXTS:
            return self._ask(texts, True, generation)
        parts = [self._ask(texts[i:i + CHUNK_TEXTS], False, generation) for i in range(0, len(texts), CHUNK_TEXTS)]
        return np.concatenate(parts)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed_batch(texts)

    def close(self) -> None:
        """Stop the child; a request in flight or waiting fails (EmbedderError) instead of starting a new one.

        Used again later, the embedder starts a fresh child. A child still loading its model
        (tens of seconds on a busy machine) or busy with requests is killed rather than waited
        for, so closing a workspace stays quick.
        """
        self._generation += 1
        starting = self._starting
        if starting is not None and starting.poll() is None:
            starting.kill()            # the request starting it sees it die, fails, and cleans up
            return
        child = self._child
        if child is None:
            return
        if child.busy() or not self._start_lock.acquire(timeout=0.2):
            child.proc.kill()          # the requests in flight see it die, fail, and clean up
            return
        try:
            if self._child is child:
                try:
                    child.conn.send(("shutdown",))
                except OSError:
                    pass
                self._stop_child()
        finally:
            self._start_lock.release()

    # ----- one request, restarted once ------------------------------------------------------------
    def _ask(self, texts: list[str], urgent: bool, generation: int) -> np.ndarray:
        if not texts:
            self._current(generation)
            return np.zeros((0, self._dim), dtype=np.float32)
        for attempt in range(2):
            child = self._current(generation)
            try:
                reply = child.ask(next(self._ids), texts, urgent)
            except _ChildGone as exc:
                with self._start_lock:
                    tail = self._stop_child() if self._child is child else ""
                self._check_open(generation)
                if attempt:
                    detail = f"; its last words: {tail}" if tail else ""
                    raise EmbedderError(f"the embedding process for {self.name} died twice in a row ({exc})"
                                        f"{detail}") from None
                continue
            if reply[0] != "vectors":
                raise EmbedderError(f"embedding with {self.name}: {reply[2] if len(reply) > 2 else 'failed'}")
            return reply[2]
        raise AssertionError("unreachable")

    def _check_open(self, generation: int) -> None:
        if generation != self._generation:
            raise EmbedderError(f"the embedding process for {self.name} was stopped (the workspace is closing)")

    def _current(self, generation: int) -> _Child:
        """The running child, started (or restarted) when there is none."""
        with self._start_lock:
            self._check_open(generation)
            if self._child is not None and self._child.alive():
                return self._child
            self._stop_child()
            self._start(generation)
            return self._child

    # ----- the child -----------------------------------------------------------------------------
    def _start(self, generation: int) -> None:
        try:
            proc, conn, log = start_child("core.index.embed_proc", [self.model, str(self.nice)],
                                          label="embedder", env_defaults=_ENV)
        except OSError as exc:
            raise EmbedderError(f"cannot start the embedding process: {exc}") from exc
        self.starts += 1
        child = _Child(self, proc, conn, log)
        self._starting = proc
        try:
            hello = self._hello(child, generation)
        finally:
            self._starting = None
        if hello is None or hello[0] != "hello":
            tail = log_tail(log)
            child.finalizer()
            log.close()
            self._check_open(generation)
            if hello is None:
                raise EmbedderError(f"the embedding process for {self.name} did not start"
                                    + (f": {tail}" if tail else ""))
            raise EmbedderError(hello[1] if len(hello) > 1 else f"the embedding process for {self.name} failed to start")
        _tag, self._dim, model_id = hello
        if model_id != self.model_id:      # the weights changed between our look and its load
            self.model_id = model_id
        self._child = child
        child.start_reader()

    def _hello(self, child: _Child, generation: int) -> tuple | None:
        """The child's first message, or None when it died, timed out, or we were closed meanwhile."""
        deadline = time.monotonic() + START_TIMEOUT_S
        try:
            while not child.conn.poll(POLL_S):
                # Closed meanwhile (close() may have missed a child started just after it looked): give up too.
                if child.proc.poll() is not None or generation != self._generation or time.monotonic() > deadline:
                    return None
            return child.conn.recv()
        except (EOFError, OSError):
            return None

    def _stop_child(self) -> str:
        """Stop the child if any (under the start lock); returns the tail of its output (why it died)."""
        child, self._child = self._child, None
        if child is None:
            return ""
        tail = log_tail(child.log)
        child.finalizer()          # closes our end, waits for the child, kills it if it hangs
        child.fail("stopped")
        child.log.close()
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

    def encode(texts: list[str]):
        try:
            return ("vectors", np.ascontiguousarray(embedder.embed_batch(texts), dtype=np.float32))
        except Exception as exc:   # a bad batch fails that request only
            return ("error", f"{type(exc).__name__}: {exc}")

    bulk: deque[tuple[int, list[str], list[np.ndarray]]] = deque()   # (id, texts, pieces done)
    while True:
        try:
            incoming = [conn.recv()] if not bulk else []
            while conn.poll(0):
                incoming.append(conn.recv())
            for request in incoming:
                if request[0] == "shutdown":
                    return 0
                _tag, request_id, texts, urgent = request
                if urgent:                         # a query: answered before any more bulk work
                    tag, payload = encode(texts)
                    conn.send((tag, request_id, payload))
                else:
                    bulk.append((request_id, texts, []))
            if bulk:
                request_id, texts, pieces = bulk[0]
                done = sum(len(p) for p in pieces)
                tag, payload = encode(texts[done:done + SUB_TEXTS])
                if tag != "vectors":
                    bulk.popleft()
                    conn.send((tag, request_id, payload))
                    continue
                pieces.append(payload)
                if done + len(payload) >= len(texts):
                    bulk.popleft()
                    conn.send(("vectors", request_id, np.concatenate(pieces)))
        except (EOFError, OSError):
            return 0                          # the parent closed the connection or went away


def main(argv: list[str]) -> int:
    fd, model = int(argv[0]), argv[1] if len(argv) > 1 else ""
    conn = parent_connection(fd, int(argv[2]) if len(argv) > 2 else 0)
    try:
        return serve(conn, model)
    finally:
        conn.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
