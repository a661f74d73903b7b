"""Opening a workspace file through directory descriptors, so no folder of its path is ever followed out.

`core.store.paths.inside` says where a path really is when it is asked; between that answer
and the open, someone can swap a folder of the path for a symbolic link (`memory/` -> /etc).
O_NOFOLLOW guards only the last name, so the open here walks the path one folder at a time:
each folder is opened with O_DIRECTORY|O_NOFOLLOW relative to the one before (openat), and the
file last, relative to its folder. A link anywhere below the workspace root is refused at the
moment of the open, not at the moment of an earlier check.

Writes are refused for a file with more than one hard link: the other name may lie outside the
workspace (a hard-linked `~/.bashrc` in memory/), and a write would change it too.

Files without a workspace root named by the caller are Reverie's own state: the root is the
folder that holds their `.reverie/` (its `locks/`, `index.db`, `config.toml`), so they follow
the same rule as the workspace's own files.
"""
from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
from pathlib import Path
from typing import Iterator

from core.errors import PathEscapeError, StorageError

NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
CLOEXEC = getattr(os, "O_CLOEXEC", 0)
DIRECTORY = getattr(os, "O_DIRECTORY", 0)
PRIVATE_DIR = ".reverie"
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC


def root_of(path: str | os.PathLike[str]) -> Path:
    """The workspace a path without a named root belongs to: the folder holding its `.reverie/`, or
    else its own folder (nothing above is judged; the folder itself must not be a link)."""
    absolute = Path(os.path.abspath(path))
    for parent in absolute.parents:
        if parent.name == PRIVATE_DIR:
            return parent.parent
    return absolute.parent


def parts_under(root: Path, real: Path) -> list[str]:
    """The names from the real workspace root down to `real` (already resolved and inside it)."""
    rel = os.path.relpath(real, os.path.realpath(root))
    if rel == ".":
        return []
    parts = Path(rel).parts
    if not parts or parts[0] == "..":
        raise PathEscapeError(f"{real} is outside the workspace {root}")
    return list(parts)


def _refused(exc: OSError, where: str) -> Exception:
    if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
        return PathEscapeError(f"{where} is (or goes through) a symbolic link, or a folder of it is not a folder; "
                               "Reverie reads and writes only inside the workspace, never through a link")
    return exc


def open_folder(root: Path, parts: list[str], *, create: bool = False) -> int:
    """A descriptor of root/parts..., each folder opened without following a link; with `create`,
    missing folders are made on the way (mkdirat)."""
    base = os.path.realpath(root)
    if create:
        os.makedirs(base, exist_ok=True)     # the root itself is the caller's choice (links above it are theirs)
    fd = os.open(base, os.O_RDONLY | DIRECTORY | CLOEXEC)
    try:
        for index, name in enumerate(parts):
            if name in ("", ".", ".."):
                raise PathEscapeError(f"invalid name {name!r} in a workspace path")
            try:
                child = os.open(name, os.O_RDONLY | DIRECTORY | NOFOLLOW | CLOEXEC, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, 0o755, dir_fd=fd)
                try:
                    child = os.open(name, os.O_RDONLY | DIRECTORY | NOFOLLOW | CLOEXEC, dir_fd=fd)
                except OSError as exc:
                    raise _refused(exc, "/".join(parts[:index + 1])) from exc
            except OSError as exc:
                raise _refused(exc, "/".join(parts[:index + 1])) from exc
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def refuse_hard_links(fd_or_stat, where: str) -> None:
    """PathEscapeError when the file has another name (a hard link): writing it would write there too."""
    info = os.fstat(fd_or_stat) if isinstance(fd_or_stat, int) else fd_or_stat
    if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
        raise PathEscapeError(f"{where} has {info.st_nlink} hard links: a write would also change the other "
                              "copies, which may lie outside the workspace; Reverie refuses it (replace the link "
                              "with a copy of the file)")


@contextlib.contextmanager
def folder_of(root: Path, real: Path, *, create: bool = False) -> Iterator[tuple[int, str]]:
    """(descriptor of the folder of `real`, its name in there), for *at() calls on the name."""
    parts = parts_under(root, real)
    if not parts:
        raise PathEscapeError(f"{real} is the workspace itself, not a file in it")
    # The opens below name files relative to a folder descriptor; this event names the whole path
    # for an audit hook (the tests' proof that nothing outside the workspace is touched).
    sys.audit("reverie.open", os.path.join(os.path.realpath(root), *parts))
    fd = open_folder(root, parts[:-1], create=create)
    try:
        yield fd, parts[-1]
    finally:
        os.close(fd)


def open_under(root: Path, real: Path, flags: int, mode: int = 0o644, *, create_folders: bool = False) -> int:
    """os.open of `real` (resolved, inside `root`) walked from the root by descriptors; a write refuses
    a file with more than one hard link."""
    with folder_of(root, real, create=create_folders) as (folder, name):
        fd = os.open(name, flags | NOFOLLOW | CLOEXEC, mode, dir_fd=folder)
    if flags & WRITE_FLAGS:
        try:
            refuse_hard_links(fd, str(real))
        except BaseException:
            os.close(fd)
            raise
    return fd


def checked_path(path: str | os.PathLike[str], *, create: bool = True) -> Path:
    """`path` of Reverie's own state (an SQLite file a library opens by name), made sure of now: every
    folder from its workspace down is a real folder, the file is no link and has no second hard link,
    and neither has any of its companions (`-wal`, `-shm`, `-journal`). Returns the path to open."""
    path = Path(os.path.abspath(path))
    root = root_of(path)
    real = Path(os.path.realpath(root)) / os.path.relpath(path, root)
    try:
        with folder_of(root, real, create=create) as (folder, name):
            for companion in (name, f"{name}-wal", f"{name}-shm", f"{name}-journal"):
                try:
                    info = os.stat(companion, dir_fd=folder, follow_symlinks=False)
                except FileNotFoundError:
                    continue
                if stat.S_ISLNK(info.st_mode) or not stat.S_ISREG(info.st_mode):
                    raise PathEscapeError(f"{path.parent / companion} is a symbolic link or not a file; "
                                          "Reverie never opens its state through a link")
                refuse_hard_links(info, str(path.parent / companion))
    except OSError as exc:
        raise StorageError(f"cannot open {path}: {exc.strerror or exc}") from exc
    return real
