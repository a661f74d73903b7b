"""Opening workspace files: confined, never through a symbolic link, with errors a person can act on.

`core.store.paths.inside` decides where a path really is; this module opens it walking from the
workspace root by directory descriptors (core/store/dirfd.py), so a link planted in any folder
of the path between the check and the open is refused rather than followed. OS errors become
StorageError / PathEscapeError with one line that says what is wrong (a read-only workspace, a path too long), never a traceback.
"""
from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Iterable

from core.errors import PathEscapeError, StorageError
from core.store.dirfd import open_folder, open_under, parts_under
from core.store.paths import inside

_READ_ONLY = (errno.EROFS, errno.EACCES, errno.EPERM)


def storage_error(exc: OSError, path: str | os.PathLike[str], *, writing: bool) -> Exception:
    """The CoreError to raise for an OSError on `path` (FileNotFoundError is returned unchanged)."""
    if isinstance(exc, FileNotFoundError) and not writing:
        return exc
    if exc.errno == errno.ELOOP:
        return PathEscapeError(f"{path} is a symbolic link; Reverie does not follow links it did not check")
    if exc.errno == errno.ENAMETOOLONG:
        return PathEscapeError(f"{path} is too long a path for the file system")
    if writing and exc.errno in _READ_ONLY:
        return StorageError(f"cannot write {path}: the workspace is read-only ({exc.strerror})")
    if exc.errno == errno.ENOSPC:
        return StorageError(f"cannot write {path}: the disk is full")
    action = "write" if writing else "read"
    return StorageError(f"cannot {action} {path}: {exc.strerror or exc}")


def open_in(root: Path, path: str | os.PathLike[str], flags: int, mode: int = 0o644) -> int:
    """A descriptor of the workspace file `path`, opened only where it really lies inside `root`, every
    folder walked without following a link (missing folders made when `flags` create the file); OS
    errors as storage_error()."""
    real = inside(root, path)
    try:
        return open_under(root, real, flags, mode, create_folders=bool(flags & os.O_CREAT))
    except OSError as exc:
        raise storage_error(exc, path, writing=bool(flags & (os.O_WRONLY | os.O_RDWR))) from exc


def make_folder(root: Path, folder: str | os.PathLike[str]) -> Path:
    """Make `folder` (and its parents) inside `root`, never through a link; returns its real path."""
    real = inside(root, folder)
    try:
        os.close(open_folder(root, parts_under(root, real), create=True))
    except OSError as exc:
        raise storage_error(exc, folder, writing=True) from exc
    return real


def read_bytes(root: Path, path: str | os.PathLike[str]) -> bytes:
    """The bytes of a workspace file, read only when it really lies inside `root`.

    FileNotFoundError when there is none; PathEscapeError when it leads outside.
    """
    fd = open_in(root, path, os.O_RDONLY)
    try:
        with os.fdopen(fd, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise storage_error(exc, path, writing=False) from exc


def read_text(root: Path, path: str | os.PathLike[str]) -> str:
    """UTF-8 text of a workspace file (UnicodeDecodeError as for Path.read_text)."""
    return read_bytes(root, path).decode("utf-8")


def confined_glob(root: Path, folder: Path, pattern: str) -> list[Path]:
    """The files matching `pattern` in `folder` that really lie inside `root`; a folder that is itself a
    link out is not even listed."""
    try:
        inside(root, folder)
    except PathEscapeError:
        return []
    if not folder.is_dir():
        return []
    return confined_files(root, folder.glob(pattern))


def confined_tree(root: Path, folder: Path, suffix: str, max_depth: int = 6) -> list[Path]:
    """Files whose names end in `suffix` anywhere under `folder` (people nest archives by year and month),
    sorted; folders that are links are never entered, hidden folders (`.git`, `.obsidian`) are skipped,
    and each file must really lie inside `root`."""
    try:
        inside(root, folder)
    except PathEscapeError:
        return []
    if not folder.is_dir():
        return []
    plain: list[Path] = []
    links: list[Path] = []
    base_depth = len(folder.parts)
    for here, dirs, files in os.walk(folder, followlinks=False):
        depth = len(Path(here).parts) - base_depth
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and depth < max_depth)
        for name in files:
            if not name.endswith(suffix):
                continue
            path = Path(here) / name
            try:
                mode = os.lstat(path).st_mode
            except OSError:
                continue
            # A regular file in a folder reached without following a link lies where the folder does
            # (inside, checked above): only links need resolving (a realpath each: 100s of ms at 1,000 logs).
            if stat.S_ISREG(mode):
                plain.append(path)
            elif stat.S_ISLNK(mode):
                links.append(path)
    return sorted(plain + confined_files(root, links))


def confined_files(root: Path, paths: Iterable[Path]) -> list[Path]:
    """The files among `paths` that really lie inside `root` (links out, dangling links and folders left out)."""
    out = []
    for path in paths:
        try:
            real = inside(root, path)
        except PathEscapeError:
            continue
        if real.is_file():
            out.append(path)
    return out
