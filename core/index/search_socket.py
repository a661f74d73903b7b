"""A running `reverie serve` or app answers `reverie search` over a Unix socket in .reverie/.

Why: the embedding model takes seconds to load (torch's import alone is most of
it) and the vector index of a big workspace hundreds of milliseconds to read, so
an agent calling `reverie search` from its shell would pay both on every query.
A process that has them loaded already (the app, `reverie serve`) listens on
`.reverie/search.sock` and runs the search for the CLI; the CLI loads the model
itself only when no such process is alive (search_cmd.py).

Only the same person may ask: the socket file is made 0600 before it listens
(inside .reverie/, the workspace's private folder), and each connection's peer
is checked with SO_PEERCRED (Linux) or LOCAL_PEERCRED (macOS) where the system
has it: a connection from another user id is closed unanswered.

The protocol is one JSON line each way per connection: a request
{"query", "k", "mode", "kinds", "since", "until", "model"} and an answer
{"ok": true, "by": "serve"|"app", "pid", "results": SearchResults.as_dict(ranked=True)}
or {"ok": false, "error"}. "model" is the id of the embedding model the asker
expects (the workspace's setting): a server with another model does not answer
(its vectors would not be the ones the asker's settings promise).

A socket path longer than the system allows (~104 bytes) is reached through
/proc/self/fd/N/ of the folder where there is one; elsewhere no socket is made
and the CLI loads the model itself.
"""
from __future__ import annotations

import contextlib
import json
import os
import queue
import socket
import struct
import threading
from pathlib import Path
from typing import Callable, Iterator

SOCKET_NAME = "search.sock"
MAX_LINE = 256 * 1024          # a request is a query and a few filters; an answer at most 1000 hits
ASK_TIMEOUT_S = 30.0           # a search of a big workspace while the machine is busy
WORKERS = 2                    # requests served at once; more wait in the queue. Fixed threads, not one per
                               # request: each thread keeps its own SQLite connection (db.py) for its life
_SUN_PATH_MAX = 100            # sockaddr_un holds 108 bytes on Linux, 104 on macOS (with the NUL)


def socket_path(private_dir: Path) -> Path:
    return Path(private_dir) / SOCKET_NAME


@contextlib.contextmanager
def _address(path: Path) -> Iterator[str | None]:
    """A name bind/connect can take for `path`: itself, or /proc/self/fd/N/NAME when it is too long."""
    raw = os.fsencode(str(path))
    if len(raw) <= _SUN_PATH_MAX:
        yield str(path)
        return
    if not os.path.isdir("/proc/self/fd"):
        yield None
        return
    try:
        fd = os.open(path.parent, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        yield None
        return
    try:
        yield f"/proc/self/fd/{fd}/{path.name}"
    finally:
        os.close(fd)


def peer_uid(conn: socket.socket) -> int | None:
    """The user id of the process at the other end, or None where the system cannot say."""
    if hasattr(socket, "SO_PEERCRED"):                       # Linux: struct ucred {pid, uid, gid}
        raw = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        return struct.unpack("3i", raw)[1]
    if hasattr(socket, "LOCAL_PEERCRED"):                    # macOS: struct xucred {version, uid, ...}
        raw = conn.getsockopt(0, socket.LOCAL_PEERCRED, struct.calcsize("2I"))
        return struct.unpack("2I", raw[:8])[1]
    return None


def _read_line(conn: socket.socket) -> bytes:
    data = bytearray()
    while b"\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            break
        data += chunk
        if len(data) > MAX_LINE:
            raise ValueError("message too long")
    return bytes(data).split(b"\n", 1)[0]


class SearchServer:
    """Listens on .reverie/search.sock and answers each request with `answer(request) -> dict`.

    `start()` is False when another live process already answers for the workspace
    (the app and `serve` together: the first one keeps it) or no socket can be made;
    `close()` removes the socket file if it is still this server's.
    """

    def __init__(self, private_dir: Path, answer: Callable[[dict], dict], by: str):
        self.path = socket_path(private_dir)
        self.answer = answer
        self.by = by
        self.served = 0
        self.refused = 0
        self._sock: socket.socket | None = None
        self._inode: int | None = None
        self._threads: list[threading.Thread] = []
        self._queue: queue.Queue[socket.socket | None] = queue.Queue()
        self._stop = threading.Event()

    def start(self) -> bool:
        if not hasattr(socket, "AF_UNIX"):
            return False
        if alive(self.path.parent):
            return False
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()                               # left by a process that died
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            with _address(self.path) as address:
                if address is None:
                    sock.close()
                    return False
                sock.bind(address)
            os.chmod(self.path, 0o600)                       # before listen(): no one connects meanwhile
            sock.listen(16)
        except OSError:
            sock.close()
            return False
        self._sock = sock
        self._inode = self.path.stat().st_ino
        self._threads = [threading.Thread(target=self._accept, name=f"reverie-search-{self.by}", daemon=True)]
        self._threads += [threading.Thread(target=self._work, name="reverie-search-answer", daemon=True)
                          for _ in range(WORKERS)]
        for thread in self._threads:
            thread.start()
        return True

    def close(self) -> None:
        self._stop.set()
        if self._sock is not None:
            with contextlib.suppress(OSError):
                self._sock.shutdown(socket.SHUT_RDWR)
            self._sock.close()
        for _ in range(WORKERS):
            self._queue.put(None)
        for thread in self._threads:
            thread.join(timeout=5)
        with contextlib.suppress(OSError):
            if self._inode is not None and self.path.stat().st_ino == self._inode:
                self.path.unlink()
        self._sock = None

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return                                       # closed
            uid = peer_uid(conn)
            if uid is not None and uid != os.getuid():
                self.refused += 1
                conn.close()
                continue
            self._queue.put(conn)

    def _work(self) -> None:
        while True:
            conn = self._queue.get()
            if conn is None:
                return
            self._serve(conn)

    def _serve(self, conn: socket.socket) -> None:
        try:
            conn.settimeout(ASK_TIMEOUT_S)
            try:
                request = json.loads(_read_line(conn).decode("utf-8"))
                if not isinstance(request, dict):
                    raise ValueError("not a JSON object")
                reply = {"ok": True, "by": self.by, "pid": os.getpid(), **self.answer(request)}
            except Exception as exc:   # noqa: BLE001 - any failure is the asker's to report, one line
                reply = {"ok": False, "by": self.by, "error": str(exc) or type(exc).__name__}
            conn.sendall(json.dumps(reply, ensure_ascii=False).encode("utf-8") + b"\n")
            self.served += 1
        except OSError:
            pass
        finally:
            conn.close()


def ask(private_dir: Path, request: dict, timeout: float = ASK_TIMEOUT_S) -> dict | None:
    """The answer of the process listening for this workspace, or None when none is alive."""
    path = socket_path(private_dir)
    if not hasattr(socket, "AF_UNIX") or not path.exists():
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        with _address(path) as address:
            if address is None:
                return None
            sock.connect(address)
        sock.sendall(json.dumps(request, ensure_ascii=False).encode("utf-8") + b"\n")
        line = _read_line(sock)
        return json.loads(line.decode("utf-8")) if line else None
    except (OSError, ValueError):
        return None
    finally:
        sock.close()


def alive(private_dir: Path) -> bool:
    """Whether a process listens on this workspace's search socket now."""
    path = socket_path(private_dir)
    if not hasattr(socket, "AF_UNIX") or not path.exists():
        return False
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(2.0)
    try:
        with _address(path) as address:
            if address is None:
                return False
            sock.connect(address)
        return True
    except OSError:
        return False
    finally:
        sock.close()


def index_answer(index) -> Callable[[dict], dict]:
    """The `answer` of a SearchServer for a SearchIndex: run the asked search on it."""

    def answer(request: dict) -> dict:
        ours = index.embedder.model_id if index.embedder is not None else ""
        if str(request.get("model", "")) != ours:
            raise ValueError(f"this process embeds with {ours or 'no model'}, not {request.get('model')!r}")
        results = index.search(str(request.get("query", "")), k=int(request.get("k", 10)), mode=request.get("mode"),
                               kinds=request.get("kinds") or None, since=request.get("since"),
                               until=request.get("until"))
        return {"results": results.as_dict(ranked=True)}

    return answer
