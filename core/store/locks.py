"""Advisory locks shared by every Reverie process working on one workspace (flock on files in .reverie/locks/).

Locks coordinate writers that must take turns (two flushes, a dream and `reverie dream`,
an import and a re-import); the writes themselves are in the other store modules.
"""
from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path
from typing import Iterator

from core.errors import CoreError
from core.store.dirfd import root_of
from core.store.fileio import open_in


def _open_lock(lock_path: Path) -> int:
    """The lock file (and its folders), made when missing inside the workspace that holds its `.reverie/`
    and never through a link; a read-only workspace is one clear StorageError."""
    return open_in(root_of(lock_path), lock_path, os.O_RDWR | os.O_CREAT)


@contextlib.contextmanager
def locked(lock_path: Path) -> Iterator[None]:
    """An exclusive lock: waits until every other holder let go."""
    fd = _open_lock(lock_path)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


@contextlib.contextmanager
def lock_if_free(lock_path: Path, owner: str = "") -> Iterator[bool]:
    """The lock if nobody holds it (yields True), else at once False: for work that must not queue.
    The holder writes its pid and `owner` into the lock file, so the one refused can say who holds it."""
    fd = _open_lock(lock_path)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()} {owner}".strip().encode("utf-8") + b"\n", 0)
        yield True
    finally:
        os.close(fd)     # closing releases the lock


def lock_holder(lock_path: Path) -> tuple[int, str]:
    """(pid, owner) the holder of `lock_path` wrote (0, "") when nothing readable is there."""
    try:
        fd = _open_lock(lock_path)
    except CoreError:
        return 0, ""
    try:
        text = os.pread(fd, 256, 0).decode("utf-8", errors="replace").strip()
    finally:
        os.close(fd)
    pid, _sep, owner = text.partition(" ")
    return (int(pid), owner) if pid.isdigit() else (0, "")
