"""Evicted tool results: `large_tool_results/<session>/<call_id>.txt`, written once, read back confined.

A tool result too large for the context is moved here and the message keeps a reference
(core/harness/eviction.py decides when). Paths read back come from messages, and messages
come from outside (a JSONL file, an agent): `../`, an absolute path or a symlink pointing
out must not turn a session log into a copy of any file on the machine.
"""
from __future__ import annotations

from core.errors import PathEscapeError
from core.store.atomic import atomic_write
from core.store.fileio import read_bytes
from core.store.paths import WorkspacePaths, confine


def write_evicted(paths: WorkspacePaths, session_id: str, file_id: str, content: str) -> str:
    """Store `content`; returns its workspace-relative path. The same content again writes nothing."""
    path = paths.evicted_result(session_id, file_id)
    data = content.encode("utf-8")
    try:
        same = read_bytes(paths.root, path) == data
    except FileNotFoundError:
        same = False
    if not same:
        atomic_write(path, data, root=paths.root)
    return paths.relative(path)


def read_evicted(paths: WorkspacePaths, rel_path: str) -> str:
    """The text of an evicted result, read only from `large_tool_results/`; PathEscapeError for anything else."""
    resolved = confine(paths.root, str(rel_path))
    store = paths.large_results_dir.resolve()
    if store not in resolved.parents:
        raise PathEscapeError(f"evicted payload path {rel_path!r} is not under {paths.relative(paths.large_results_dir)}/")
    return read_bytes(paths.root, resolved).decode("utf-8")
