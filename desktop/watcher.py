"""Live files: watchdog events from an outside agent, debounced, delivered on the main thread.

watchdog calls back on its own observer thread. The handler only emits a Qt signal
with the workspace-relative path; the receiver lives on the main thread, so Qt
queues the call there. The main thread collects paths in a set and emits
`filesChanged` once the burst is over (a quiet period of `debounce_ms`), or at the
latest `max_wait_ms` after the first event, so an agent appending every few
milliseconds still gets its changes shown.

Derived and private state (`.reverie/`: the index, history, locks) is ignored, except
the parts a view shows: the flush record, the dream proposals and the dream log.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal, Slot
from watchdog.events import FileSystemEventHandler

SHOWN_PRIVATE = (".reverie/flushes.jsonl", ".reverie/dreams.jsonl", ".reverie/proposals/", ".reverie/config.toml")
IGNORED_PARTS = {".git", "__pycache__"}


def relevant(rel: str) -> bool:
    """Whether a changed workspace-relative path is something a view shows."""
    if not rel or rel == "." or rel.startswith(".."):
        return False
    parts = rel.split("/")
    if IGNORED_PARTS & set(parts):
        return False
    name = parts[-1]
    if name.startswith(".") and name.endswith(".tmp"):
        return False          # an atomic write's temp file; the rename that follows is reported
    if name.endswith((".lock", "-journal", "-wal", "-shm")):
        return False
    if parts[0] == ".reverie":
        return any(rel == p or (p.endswith("/") and rel.startswith(p)) for p in SHOWN_PRIVATE)
    return True


class _Handler(FileSystemEventHandler):
    def __init__(self, root: Path, emit):
        super().__init__()
        self.root = str(root)
        self.emit = emit

    def dispatch(self, event) -> None:   # on the watchdog thread
        if event.event_type in ("opened", "closed_no_write"):
            return
        if event.is_directory and event.event_type == "modified":
            return            # a folder's mtime moves with every file in it: the file events say more
        for attr in ("src_path", "dest_path"):
            raw = getattr(event, attr, "")
            if not raw:
                continue
            if isinstance(raw, bytes):
                raw = os.fsdecode(raw)
            rel = os.path.relpath(raw, self.root).replace(os.sep, "/")
            if relevant(rel):
                self.emit(rel)


class WorkspaceWatcher(QObject):
    filesChanged = Signal(list)      # sorted workspace-relative paths, after the debounce
    _raw = Signal(str)               # emitted on the watchdog thread, received on the main thread

    def __init__(self, root: Path, *, debounce_ms: int = 250, max_wait_ms: int = 1000, parent=None):
        super().__init__(parent)
        self.root = Path(root)
        self.max_wait_s = max_wait_ms / 1000
        self._pending: set[str] = set()
        self._first_at = 0.0
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(debounce_ms)
        self._timer.timeout.connect(self._flush)
        self._raw.connect(self._on_raw)
        self._observer = None

    def start(self) -> None:
        from watchdog.observers import Observer

        if self._observer is not None:
            return
        observer = Observer()
        observer.daemon = True
        observer.schedule(_Handler(self.root.resolve(), self._raw.emit), str(self.root.resolve()), recursive=True)
        observer.start()
        self._observer = observer

    def stop(self, timeout_s: float = 5.0) -> None:
        observer, self._observer = self._observer, None
        if observer is not None:
            observer.stop()
            observer.join(timeout_s)
        self._timer.stop()
        self._pending.clear()

    @property
    def running(self) -> bool:
        return self._observer is not None

    @Slot(str)
    def _on_raw(self, rel: str) -> None:
        if self._observer is None:
            return
        now = time.monotonic()
        if not self._pending:
            self._first_at = now
        self._pending.add(rel)
        if now - self._first_at >= self.max_wait_s:
            self._flush()
        else:
            self._timer.start()     # restarts: the burst is not over yet

    @Slot()
    def _flush(self) -> None:
        self._timer.stop()
        if not self._pending:
            return
        paths, self._pending = sorted(self._pending), set()
        self.filesChanged.emit(paths)
