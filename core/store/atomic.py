"""Durable writes: atomic replace, compare-and-swap, and append-only appends.

Replace: temp file in the same folder, fsync, rename, fsync the folder
(F_FULLFSYNC on macOS, where fsync does not reach the platter). A reader
therefore always sees one complete version, also after a SIGKILL or power loss.

Append: O_APPEND + one write + fsync under an exclusive lock, so two processes
appending at once never interleave or lose a line.
"""
from __future__ import annotations

import contextlib
import fcntl
import os
import sys
import tempfile
from pathlib import Path

from core.errors import ConflictError, CoreError
from core.store.hashing import sha256_bytes
from core.store.locks import locked


def _full_fsync(fd: int) -> None:
    if sys.platform == "darwin" and hasattr(fcntl, "F_FULLFSYNC"):
        try:
            fcntl.fcntl(fd, fcntl.F_FULLFSYNC)
            return
        except OSError:
            pass  # not supported by this file system: plain fsync below
    os.fsync(fd)


def fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        _full_fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: Path, data: bytes | str) -> None:
    """Replace `path` with `data` so that readers see the old or the new file, never a mix."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            _full_fsync(handle.fileno())
        try:
            os.chmod(tmp, os.stat(path).st_mode & 0o777)
        except FileNotFoundError:
            os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    fsync_dir(path.parent)


def append_durable(path: Path, text: str) -> int:
    """Append `text` (one write, flushed and fsynced). Returns the byte offset where `text` starts."""
    data = text.encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = _open_current_locked(path)
    try:
        # A file that does not end in a newline gets one first so two appends never join into one line.
        size = os.fstat(fd).st_size
        offset = size
        if size and not _ends_with_newline(path, size):
            data = b"\n" + data
            offset += 1
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        _full_fsync(fd)
        return offset
    finally:
        os.close(fd)  # closing releases the flock


def _open_current_locked(path: Path) -> int:
    """Open `path` for appending with an exclusive flock, on the inode the name points to now.

    A compare-and-swap replaces the file by rename while holding the old inode's lock; an
    appender that was waiting on that lock must not write into the orphaned old inode.
    """
    while True:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            if os.stat(path).st_ino == os.fstat(fd).st_ino:
                return fd
        except FileNotFoundError:
            pass
        os.close(fd)


def _ends_with_newline(path: Path, size: int) -> bool:
    with open(path, "rb") as handle:
        handle.seek(size - 1)
        return handle.read(1) == b"\n"


def cas_replace(path: Path, new_data: bytes, expected_hash: str, lock_path: Path,
                before_replace=None) -> tuple[bytes, bytes]:
    """Compare-and-swap: replace `path` only if its hash is still `expected_hash`.

    Holds `lock_path` so cooperating writers serialise. An outside process that
    appends without the lock (an agent's `>>`) during the tiny window between our
    check and the rename is caught too: we keep the old file open, and whatever
    landed after the bytes we checked is appended to the new version.
    `before_replace(old_bytes)` runs under the lock before the rename (history snapshots).
    Returns (old_bytes, written_bytes).
    """
    with locked(lock_path):
        try:
            old_handle = open(path, "rb")
        except FileNotFoundError:
            old_handle = None
        try:
            if old_handle is not None:
                fcntl.flock(old_handle.fileno(), fcntl.LOCK_EX)  # cooperative appenders wait for us
            old = old_handle.read() if old_handle else b""
            actual = sha256_bytes(old) if old_handle else ""
            if actual != expected_hash:
                raise ConflictError(
                    f"{path.name} changed on disk since it was read; reload it and apply your change again",
                    expected_hash=expected_hash, actual_hash=actual)
            if before_replace is not None:
                before_replace(old)
            atomic_write(path, new_data)
            written = new_data
            if old_handle is not None:
                late = old_handle.read()  # bytes appended to the old inode after our read
                if late:
                    written = new_data + (b"" if new_data.endswith(b"\n") or not new_data else b"\n") + late
                    atomic_write(path, written)
            return old, written
        finally:
            if old_handle is not None:
                old_handle.close()


def read_bytes_and_hash(path: Path) -> tuple[bytes, str]:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return b"", ""
    except OSError as exc:
        raise CoreError(f"cannot read {path}: {exc.strerror}") from exc
    return data, sha256_bytes(data)
