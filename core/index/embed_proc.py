"""The embedding model in a child process: `python -m core.index.embed_proc READ_FD WRITE_FD MODEL [NICE]`.

Why a process: in the app, torch's import, the model load and every encode hold
the GIL for hundreds of milliseconds at a time, and the GUI's main thread waits
behind them (the GUI benchmark measured 0.4 s stalls). In a child process they
hold a different GIL. `ProcessEmbedder` implements the Embedder protocol of
core/index/embedder.py by talking to the child; its model_id is the in-process
one, so the embedding cache stays valid whichever runs.

Frames over two pipes, both ways: 8 bytes (header length, payload length, big
endian), a JSON header, a binary payload.
    request  {"op": "embed"} + the texts as UTF-8 JSON    reply {"ok": true, "n", "dim"} + float32 (n, dim)
    request  {"op": "shutdown"}                           (no reply; the child exits)
    hello    {"ok": true, "dim", "model_id", "pid"}       sent once the model is loaded
    error    {"ok": false, "message"}
The child exits when its input pipe closes, so it never outlives the parent.
"""
from __future__ import annotations

import json
import os
import select
import struct
import subprocess
import sys
import tempfile
import threading
import weakref
from pathlib import Path
from typing import Sequence

import numpy as np

from core.childproc import kill_and_reap
from core.index.embedder import EmbedderError, model_id_for

_HEAD = struct.Struct(">II")
_ROOT = Path(__file__).resolve().parents[2]     # the folder holding core/, for the child's import path
START_TIMEOUT_S = 120.0                         # torch's import and the model load, on a busy 2-core machine
POLL_S = 0.5                                    # how often a silent wait checks that the child still lives


class _ChildGone(Exception):
    """The child died or its pipes broke mid-request."""


# ----- framing (both sides) ------------------------------------------------------------------------
def write_frame(fd: int, header: dict, payload: bytes = b"") -> None:
    head = json.dumps(header).encode()
    data = memoryview(_HEAD.pack(len(head), len(payload)) + head + payload)
    while data:
        written = os.write(fd, data)
        data = data[written:]


def _read_exact(fd: int, size: int, alive=None) -> bytes:
    chunks, left = [], size
    while left:
        if alive is not None:
            # Wait in short slices so a child that dies silently (killed, a fault) is noticed.
            ready, _, _ = select.select([fd], [], [], POLL_S)
            if not ready:
                if not alive():
                    raise _ChildGone("the embedding process exited")
                continue
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise _ChildGone("the pipe closed")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def read_frame(fd: int, alive=None) -> tuple[dict, bytes]:
    head_len, payload_len = _HEAD.unpack(_read_exact(fd, _HEAD.size, alive))
    header = json.loads(_read_exact(fd, head_len, alive))
    payload = _read_exact(fd, payload_len, alive) if payload_len else b""
    return header, payload


# ----- the parent's side ---------------------------------------------------------------------------
def _kill(proc: subprocess.Popen, fds: list[int]) -> None:
    for fd in fds:
        try:
            os.close(fd)          # the child sees EOF and exits by itself
        except OSError:
            pass
    fds.clear()
    kill_and_reap(proc, grace_s=3)


class ProcessEmbedder:
    """The Embedder protocol, served by a child process started on first use.

    Thread-safe: one request at a time (the index worker, a search query and a
    dream may share it). A child that dies is restarted once per request; if
    the fresh one fails too the request raises EmbedderError.
    """

    def __init__(self, model: str = "", *, nice: int = 10):
        self.model = model
        # Background embedding yields the CPU to the process it serves (a GUI's main thread,
        # an agent's turn): on a 2-core machine the two compete for the same cores.
        self.nice = nice
        self.name, self.model_id = model_id_for(model)
        self._dim = 0
        self._proc: subprocess.Popen | None = None
        self._fds: list[int] = []          # [read from child, write to child]
        self._log = None
        self._finalizer = None
        self._lock = threading.Lock()
        self._generation = 0               # bumped by close(): requests made before it fail instead of restarting
        self.starts = 0                    # how many children were started (tests and diagnostics)

    # ----- protocol ------------------------------------------------------------------------------
    @property
    def dim(self) -> int:
        if not self._dim:
            with self._lock:
                self._ensure_started()
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
        with self._lock:
            for attempt in range(2):
                self._check_open(generation)
                self._ensure_started()
                if not texts:
                    return np.zeros((0, self._dim), dtype=np.float32)
                try:
                    return self._exchange(texts)
                except _ChildGone as exc:
                    tail = self._stop_child()
                    self._check_open(generation)
                    if attempt:
                        detail = f"; its last words: {tail}" if tail else ""
                        raise EmbedderError(f"the embedding process for {self.name} died twice in a row ({exc})"
                                            f"{detail}") from None
        raise AssertionError("unreachable")

    def _check_open(self, generation: int) -> None:
        if generation != self._generation:
            raise EmbedderError(f"the embedding process for {self.name} was stopped (the workspace is closing)")

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed_batch(texts)

    def close(self) -> None:
        """Stop the child; a request in flight or waiting fails (EmbedderError) instead of starting a new one.

        Used again later, the embedder starts a fresh child. A request may be waiting for a
        child still loading its model (tens of seconds on a busy machine): then the child is
        killed rather than waited for, so closing a workspace stays quick.
        """
        self._generation += 1
        if self._lock.acquire(timeout=0.2):
            try:
                if self._proc is not None and self._fds:
                    try:
                        write_frame(self._fds[1], {"op": "shutdown"})
                    except OSError:
                        pass
                self._stop_child()
            finally:
                self._lock.release()
            return
        proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.kill()            # the request in flight sees it die, fails, and cleans up under its lock

    # ----- the child -----------------------------------------------------------------------------
    def _exchange(self, texts: list[str]) -> np.ndarray:
        try:
            write_frame(self._fds[1], {"op": "embed"}, json.dumps(texts).encode())
        except OSError as exc:
            raise _ChildGone(f"cannot write to it: {exc}") from None
        header, payload = read_frame(self._fds[0], self.alive)
        if not header.get("ok"):
            raise EmbedderError(f"embedding with {self.name}: {header.get('message', 'failed')}")
        n, dim = int(header["n"]), int(header["dim"])
        return np.frombuffer(payload, dtype=np.float32).reshape(n, dim).copy()

    def _ensure_started(self) -> None:
        if self.alive():
            return
        self._stop_child()
        parent_read, child_write = os.pipe()
        child_read, parent_write = os.pipe()
        self._log = tempfile.TemporaryFile(prefix="reverie-embedder-")
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(_ROOT), env.get("PYTHONPATH", "")) if p)
        for key, value in (("HF_HUB_OFFLINE", "1"), ("TRANSFORMERS_OFFLINE", "1"), ("TOKENIZERS_PARALLELISM", "false")):
            env.setdefault(key, value)
        cmd = [sys.executable, "-m", "core.index.embed_proc", str(child_read), str(child_write), self.model,
               str(self.nice)]
        try:
            self._proc = subprocess.Popen(cmd, pass_fds=(child_read, child_write), stdin=subprocess.DEVNULL,
                                          stdout=self._log, stderr=self._log, env=env, close_fds=True)
        except OSError as exc:
            for fd in (parent_read, parent_write):
                os.close(fd)
            raise EmbedderError(f"cannot start the embedding process: {exc}") from exc
        finally:
            os.close(child_read)
            os.close(child_write)
        self._fds = [parent_read, parent_write]
        self.starts += 1
        # Never leave a child behind when the embedder is dropped or the program exits.
        self._finalizer = weakref.finalize(self, _kill, self._proc, self._fds)
        try:
            hello, _ = read_frame(parent_read, self._starting_alive())
        except _ChildGone as exc:
            tail = self._stop_child()
            raise EmbedderError(f"the embedding process for {self.name} did not start ({exc})"
                                + (f": {tail}" if tail else "")) from None
        if not hello.get("ok"):
            self._stop_child()
            raise EmbedderError(hello.get("message") or f"the embedding process for {self.name} failed to start")
        if hello.get("model_id") != self.model_id:   # the weights changed between our look and its load
            self.model_id = hello["model_id"]
        self._dim = int(hello["dim"])

    def _starting_alive(self):
        deadline, generation = [0.0], self._generation

        def alive() -> bool:
            import time

            if not deadline[0]:
                deadline[0] = time.monotonic() + START_TIMEOUT_S
            # Closed meanwhile (close() may have missed a child started just after it looked): give up too.
            return self.alive() and time.monotonic() < deadline[0] and generation == self._generation
        return alive

    def _stop_child(self) -> str:
        """Stop the child if any; returns the tail of its output (why it died)."""
        tail = ""
        if self._log is not None:
            try:
                self._log.seek(0)
                lines = [ln for ln in self._log.read().decode("utf-8", "replace").splitlines() if ln.strip()]
                tail = " | ".join(lines[-3:])[-400:]
            except (OSError, ValueError):
                pass
        if self._finalizer is not None:
            self._finalizer()          # closes our pipe ends, waits for the child, kills it if it hangs
            self._finalizer = None
        self._proc = None
        self._fds = []
        if self._log is not None:
            self._log.close()
            self._log = None
        return tail


# ----- the child's side ----------------------------------------------------------------------------
def serve(read_fd: int, write_fd: int, model: str, nice: int = 0) -> int:
    from core.index.embedder import default_embedder

    if nice > 0:
        os.nice(nice)
    try:
        embedder = default_embedder(model, process=False)
        dim = int(embedder.dim)
        embedder.embed_batch(["warm up"])     # the first encode is slow; pay it before the first request
    except Exception as exc:   # any failure to load is one message for the parent
        write_frame(write_fd, {"ok": False, "message": str(exc)})
        return 1
    write_frame(write_fd, {"ok": True, "dim": dim, "model_id": embedder.model_id, "pid": os.getpid()})
    while True:
        try:
            header, payload = read_frame(read_fd)
        except _ChildGone:
            return 0                          # the parent closed the pipe or went away
        if header.get("op") == "shutdown":
            return 0
        try:
            vectors = np.ascontiguousarray(embedder.embed_batch(json.loads(payload)), dtype=np.float32)
            reply, data = {"ok": True, "n": int(vectors.shape[0]), "dim": int(vectors.shape[1])}, vectors.tobytes()
        except Exception as exc:   # a bad batch fails that request only
            reply, data = {"ok": False, "message": f"{type(exc).__name__}: {exc}"}, b""
        try:
            write_frame(write_fd, reply, data)
        except OSError:
            return 0


if __name__ == "__main__":
    sys.exit(serve(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else "",
                   int(sys.argv[4]) if len(sys.argv) > 4 else 0))
