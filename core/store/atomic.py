"""Durable writes: atomic replace, compare-and-swap, and append-only appends, all confined.

Every write names the workspace `root` it must stay inside: the target's real path is
checked (core.store.paths.inside) and opened folder by folder from the root without following
a link (core/store/dirfd.py), so a planted symbolic link (a daily log pointing at ~/.bashrc, a
`checkpoints/` folder pointing elsewhere, swapped in at any moment) is refused, never written
through; so is a file with a second hard link.

Replace: temp file in the same folder, fsync, rename, fsync the folder (F_FULLFSYNC on
macOS, where fsync does not reach the platter). A reader therefore always sees one complete
version, also after a SIGKILL or power loss. The writer holds a lock on its temp file until
the rename, so `sweep_temp_files` (run when a workspace is opened) removes exactly the temp
files whose writer died.

Append: O_APPEND + one write + fsync under an exclusive lock, so two processes
appending at once never interleave or lose a line.
"""
from __future__ import annotations

import contextlib
import fcntl
import os
import re
import secrets
import sys
from pathlib import Path

from core.errors import ConflictError, CoreError, PathEscapeError
from core.store.dirfd import CLOEXEC, NOFOLLOW, folder_of, refuse_hard_links
from core.store.fileio import open_in, read_bytes, storage_error
from core.store.hashing import sha256_bytes
from core.store.locks import locked
from core.store.paths import inside

TEMP_NAME = re.compile(r"^\..+\.[A-Za-z0-9_]{8}\.tmp$")   # what tempfile.mkstemp makes below


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


class _TempGone(Exception):
    """Our temp file vanished before the rename (swept in the instant before we locked it): write again."""


def _target(path: Path, root: Path | None) -> tuple[Path, Path]:
    """(the root to walk from, where to write `path`: its real location inside `root`). Without a root,
    a path with any symbolic link in it is refused (nothing to judge the link's target against) and
    its nearest existing folder is the root."""
    if root is not None:
        return root, inside(root, path)
    real = Path(os.path.realpath(path))
    if real != Path(os.path.abspath(path)):
        raise PathEscapeError(f"{path} goes through a symbolic link; Reverie writes only to real paths")
    base = real.parent
    while not base.is_dir() and base != base.parent:
        base = base.parent          # folders still to make are made on the way down, never through a link
    return base, real


def atomic_write(path: Path, data: bytes | str, *, root: Path | None = None) -> None:
    """Replace `path` (inside `root`) with `data` so that readers see the old or the new file, never a mix."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    base, target = _target(path, root)
    for _attempt in range(3):
        try:
            with _folder(base, target) as (folder, name):
                _replace(folder, name, target, data)
            return
        except _TempGone:
            continue
    raise CoreError(f"cannot write {path}: its temp file keeps disappearing; try again")


@contextlib.contextmanager
def _folder(base: Path, target: Path):
    """The folder of `target` opened from `base` by descriptors (made when missing), and the file's name."""
    try:
        with folder_of(base, target, create=True) as pair:
            yield pair
    except OSError as exc:
        raise storage_error(exc, target, writing=True) from exc


def _temp_name(name: str) -> str:
    return f".{name}.{secrets.token_hex(4)}.tmp"


def _replace(folder: int, name: str, target: Path, data: bytes) -> None:
    try:
        current = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        current = None
    if current is not None:
        refuse_hard_links(current, str(target))
    tmp = _temp_name(name)
    try:
        fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL | NOFOLLOW | CLOEXEC, 0o600, dir_fd=folder)
    except OSError as exc:
        raise storage_error(exc, target, writing=True) from exc
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)      # held until the rename: a sweeper that gets it knows we died
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        _full_fsync(fd)
        os.fchmod(fd, (current.st_mode & 0o777) if current is not None else 0o644)
        try:
            # A link at `target` is replaced, never followed; both names are in the folder we hold open.
            os.replace(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
        except FileNotFoundError:
            raise _TempGone() from None
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp, dir_fd=folder)
        if isinstance(exc, OSError):
            raise storage_error(exc, target, writing=True) from exc
        raise
    finally:
        os.close(fd)
    _full_fsync(folder)


def check_writable(path: Path, *, root: Path | None = None) -> Path:
    """Where a write of `path` would go, or the PathEscapeError it would meet: check before side work
    (a backup) that must not happen for a write that will be refused."""
    base, target = _target(path, root)
    try:
        current = os.lstat(target)
    except FileNotFoundError:
        return target
    refuse_hard_links(current, str(target))
    return target


def rename_in_folder(root: Path, source: Path, target_name: str) -> None:
    """Rename `source` (inside `root`) to `target_name` in the same folder, through the folder's descriptor
    (no link in the path is followed); FileNotFoundError when there is no `source`."""
    base, real = _target(source, root)
    with folder_of(base, real) as (folder, name):
        refuse_hard_links(os.stat(name, dir_fd=folder, follow_symlinks=False), str(real))
        os.replace(name, target_name, src_dir_fd=folder, dst_dir_fd=folder)
        _full_fsync(folder)


def write_new(path: Path, data: bytes) -> Path:
    """Write `data` to a new file at `path`, or at `path-2`, `path-3`, ... when that name is taken: never
    over an existing file, never through a link. Returns the path written."""
    base, target = _target(path, None)
    with _folder(base, target) as (folder, name):
        for attempt in range(1, 1000):
            candidate = name if attempt == 1 else f"{name}-{attempt}"
            try:
                fd = os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW | CLOEXEC, 0o600,
                             dir_fd=folder)
            except FileExistsError:
                continue
            except OSError as exc:
                raise storage_error(exc, target.parent / candidate, writing=True) from exc
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
                _full_fsync(fd)
            finally:
                os.close(fd)
            _full_fsync(folder)
            return target.parent / candidate
    raise CoreError(f"cannot write {path}: a thousand files of that name are already there")


def sweep_temp_files(root: Path, folders: list[Path]) -> list[Path]:
    """Remove the temp files a killed writer left in `root` itself and in `folders` (and below).

    A live writer holds a lock on its temp file, so only orphans are taken. Links are not
    followed; a folder that is not there, or a file that cannot be opened, is passed over.
    """
    removed = []
    walks = [(str(root), [], _names(root))] + [walk for top in folders for walk in _walk(top)]
    for folder, _dirs, names in walks:
        for name in names:
            path = Path(folder) / name
            if TEMP_NAME.match(name) and _remove_orphan(path):
                removed.append(path)
    return removed


def _names(folder: Path) -> list[str]:
    try:
        return [entry.name for entry in os.scandir(folder) if entry.is_file(follow_symlinks=False)]
    except OSError:
        return []


def _walk(top: Path):
    if top.is_symlink():
        return
    for folder, dirs, names in os.walk(top):
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(folder, d))]
        yield folder, dirs, names


def _remove_orphan(path: Path) -> bool:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return False
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False                    # its writer is alive
        try:
            if os.fstat(fd).st_ino != os.lstat(path).st_ino:
                return False
            os.unlink(path)
        except OSError:
            return False
        return True
    finally:
        os.close(fd)


def append_durable(path: Path, text: str, *, root: Path | None = None) -> int:
    """Append `text` (one write, flushed and fsynced). Returns the byte offset where `text` starts."""
    return append_counted(path, text, root=root, count=False)[0]


def append_counted(path: Path, text: str, *, root: Path | None = None, count: bool = True) -> tuple[int, int]:
    """Append `text` like append_durable; returns (the byte offset where it starts, how many lines the file
    held before it), both read from the file this call wrote, under its lock (never by a second open
    of the path, which may lead elsewhere by then)."""
    data = text.encode("utf-8")
    base, target = _target(path, root)
    fd = _open_current_locked(base, target)
    try:
        # A file that does not end in a newline gets one first so two appends never join into one line.
        size = os.fstat(fd).st_size
        offset = size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            data = b"\n" + data
            offset += 1
        lines = _count_newlines(fd, size) + (offset - size) if count else 0
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        _full_fsync(fd)
        return offset, lines
    except OSError as exc:
        raise storage_error(exc, path, writing=True) from exc
    finally:
        os.close(fd)  # closing releases the flock


def _count_newlines(fd: int, size: int, block: int = 1 << 20) -> int:
    """Newlines in the first `size` bytes of `fd`, read a block at a time (a huge log never sits in memory)."""
    total = position = 0
    while position < size:
        chunk = os.pread(fd, min(block, size - position), position)
        if not chunk:
            break
        total += chunk.count(b"\n")
        position += len(chunk)
    return total


def _open_current_locked(base: Path, path: Path) -> int:
    """Open `path` for appending with an exclusive flock, on the inode the name points to now.

    A compare-and-swap replaces the file by rename while holding the old inode's lock; an
    appender that was waiting on that lock must not write into the orphaned old inode.
    """
    while True:
        with _folder(base, path) as (folder, name):
            try:
                fd = os.open(name, os.O_RDWR | os.O_APPEND | os.O_CREAT | NOFOLLOW | CLOEXEC, 0o644, dir_fd=folder)
            except OSError as exc:
                raise storage_error(exc, path, writing=True) from exc
            try:
                refuse_hard_links(fd, str(path))
                fcntl.flock(fd, fcntl.LOCK_EX)
                if os.stat(name, dir_fd=folder, follow_symlinks=False).st_ino == os.fstat(fd).st_ino:
                    return fd
            except FileNotFoundError:
                pass
            except BaseException:
                os.close(fd)
                raise
            os.close(fd)


def cas_replace(path: Path, new_data: bytes, expected_hash: str, lock_path: Path,
                before_replace=None, *, root: Path | None = None) -> tuple[bytes, bytes]:
    """Compare-and-swap: replace `path` only if its hash is still `expected_hash`.

    Holds `lock_path` so cooperating writers serialise. An outside process that
    appends without the lock (an agent's `>>`) during the tiny window between our
    check and the rename is caught too: we keep the old file open, and whatever
    landed after the bytes we checked is appended to the new version.
    `before_replace(old_bytes)` runs under the lock before the rename (history snapshots).
    Returns (old_bytes, written_bytes).
    """
    base, target = _target(path, root)
    with locked(lock_path):
        try:
            old_fd = open_in(base, target, os.O_RDONLY)
        except FileNotFoundError:
            old_fd = None
        old_handle = os.fdopen(old_fd, "rb") if old_fd is not None else None
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
            atomic_write(target, new_data, root=root)
            written = new_data
            if old_handle is not None:
                late = old_handle.read()  # bytes appended to the old inode after our read
                if late:
                    written = new_data + (b"" if new_data.endswith(b"\n") or not new_data else b"\n") + late
                    atomic_write(target, written, root=root)
            return old, written
        finally:
            if old_handle is not None:
                old_handle.close()


def read_bytes_and_hash(path: Path, *, root: Path) -> tuple[bytes, str]:
    try:
        data = read_bytes(root, path)
    except FileNotFoundError:
        return b"", ""
    return data, sha256_bytes(data)
