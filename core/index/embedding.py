"""One shared embedder per model in a process, in this process or in a child process.

The desktop app asks for child processes at start-up (`prefer_process()`): an
in-process model holds the GIL through torch's import, its load and every
encode, and the GUI thread stalls behind it. The CLI and the MCP server keep the
in-process model (no second process to start). Both kinds report the same
model_id, so the embedding cache is valid for either.
"""
from __future__ import annotations

import threading

from core.index.embed_proc import ProcessEmbedder
from core.index.embedder import resolve_model
from core.index.embedders import in_process_embedder

_shared: dict[tuple[str, bool], object] = {}
_shared_lock = threading.Lock()
_prefer_process = False


def prefer_process(on: bool = True) -> None:
    """Make `default_embedder` hand out process embedders by default."""
    global _prefer_process
    _prefer_process = bool(on)


def default_embedder(model: str = "", process: bool | None = None):
    """The shared embedder of a model: `process=True` serves it from a child process, `False`
    loads it here, None follows `prefer_process()`."""
    name, _folder = resolve_model(model)
    process = _prefer_process if process is None else bool(process)
    with _shared_lock:
        key = (name, process)
        if key not in _shared:
            _shared[key] = ProcessEmbedder(model) if process else in_process_embedder(model)
        return _shared[key]


def close_process_embedders() -> None:
    """Stop every child embedding process this process started (the app calls it on quit)."""
    with _shared_lock:
        children = [e for (_name, process), e in _shared.items() if process]
    for embedder in children:
        embedder.close()
