"""A workspace's folders and first files: made once, never overwriting what is there."""
from __future__ import annotations

from core.store.atomic import atomic_write
from core.store.paths import WorkspacePaths, confine


def create_layout(paths: WorkspacePaths, memory_template: str) -> None:
    """Every folder of the layout, and MEMORY.md from the template when it does not exist yet."""
    for folder in paths.layout_dirs():
        folder.mkdir(parents=True, exist_ok=True)
    if not paths.memory_md.exists():
        atomic_write(paths.memory_md, memory_template)


def ensure_private_dirs(paths: WorkspacePaths) -> None:
    """The folders of Reverie's own state, in a workspace another tool made."""
    for folder in (paths.private_dir, paths.locks_dir, paths.history_dir):
        folder.mkdir(parents=True, exist_ok=True)


def write_files(paths: WorkspacePaths, files: dict[str, bytes | str]) -> None:
    """Write whole files by workspace-relative path (a generated workspace: the demo, a benchmark)."""
    for rel, data in files.items():
        atomic_write(confine(paths.root, rel), data)
