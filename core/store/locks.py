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
def lock_if_free(lock_path: Path) -> Iterator[bool]:
    """The lock if nobody holds it (yields True), else at once False: for work that must not queue."""
    fd = _open_lock(lock_path)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)     # closing releases the lock
