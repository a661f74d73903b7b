"""A workspace's folders and first files: made once, never overwriting what is there.

Also what opening a workspace checks: temp files a killed writer left behind are removed,
and parts of the layout that are symbolic links leading outside the workspace are named
(Reverie neither reads nor writes through them, so they must be reported, not skipped).
"""
from __future__ import annotations

import os
from pathlib import Path

from core.errors import PathEscapeError
from core.store.atomic import atomic_write, sweep_temp_files
from core.store.fileio import make_folder
from core.store.paths import WorkspacePaths, confine, inside

TOP_FILES = ("MEMORY.md", "progress.md", "AGENTS.md")


def create_layout(paths: WorkspacePaths, memory_template: str) -> None:
    """Every folder of the layout, and MEMORY.md from the template when it does not exist yet."""
    for folder in paths.layout_dirs():
        _make(paths, folder)
    if not paths.memory_md.exists():
        atomic_write(paths.memory_md, memory_template, root=paths.root)


def ensure_private_dirs(paths: WorkspacePaths) -> None:
    """The folders of Reverie's own state, in a workspace another tool made."""
    for folder in (paths.private_dir, paths.locks_dir, paths.history_dir):
        _make(paths, folder)


def _make(paths: WorkspacePaths, folder: Path) -> None:
    try:
        make_folder(paths.root, folder)
    except PathEscapeError:
        return        # a link out: reported by outside_links(), never created through


def write_files(paths: WorkspacePaths, files: dict[str, bytes | str]) -> None:
    """Write whole files by workspace-relative path (a generated workspace: the demo, a benchmark)."""
    for rel, data in files.items():
        atomic_write(confine(paths.root, rel), data, root=paths.root)


def remove_stale_temp_files(paths: WorkspacePaths) -> list[str]:
    """Delete the temp files of writes that were killed half-way; returns their relative paths."""
    folders = [f for f in paths.layout_dirs() if f not in (paths.archive_dir, paths.history_dir,
                                                             paths.proposals_dir, paths.locks_dir)]
    return [paths.relative(p) for p in sweep_temp_files(paths.root, folders)]


def outside_links(paths: WorkspacePaths) -> list[str]:
    """One sentence per symbolic link in the layout that leads outside the workspace.

    Checked: the top files, the layout folders, and the entries directly inside memory/,
    sessions/, checkpoints/ and handoffs/ (a planted daily log, a session's checkpoint folder).
    """
    candidates = [paths.root / name for name in TOP_FILES] + paths.layout_dirs()
    for folder in (paths.memory_dir, paths.archive_dir, paths.sessions_dir, paths.checkpoints_dir,
                   paths.handoffs_dir, paths.large_results_dir):
        try:
            inside(paths.root, folder)      # a folder that is a link out is named above, never listed
            candidates.extend(Path(entry.path) for entry in os.scandir(folder) if entry.is_symlink())
        except (OSError, PathEscapeError):
            continue
    found = []
    for path in dict.fromkeys(candidates):
        if not path.is_symlink():
            continue
        try:
            inside(paths.root, path)
        except PathEscapeError:
            kind = "folder" if path.is_dir() else "file"
            found.append(f"{paths.relative(path)}{'/' if kind == 'folder' else ''} is a symbolic link to "
                         f"{os.readlink(path)}, outside the workspace: Reverie neither reads nor writes through it "
                         f"(move the {kind} into the workspace)")
    return found
