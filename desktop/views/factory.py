"""Which view shows which kind of workspace file, and which views a change concerns."""
from __future__ import annotations

from core.types import kind_of


def make_view(controller, kind: str, rel: str):
    if kind == "memory":
        from desktop.views.memory_editor import MemoryEditor
        return MemoryEditor(controller, rel)
    if kind == "daily":
        from desktop.views.daily_log_editor import DailyLogEditor
        return DailyLogEditor(controller, rel)
    if kind == "file":
        from desktop.views.daily_log_editor import MarkdownFileEditor
        return MarkdownFileEditor(controller, rel)
    if kind == "session":
        from desktop.views.session_reader import SessionReader
        return SessionReader(controller, rel)
    if kind == "checkpoint":
        from desktop.views.checkpoint_editor import CheckpointEditor
        return CheckpointEditor(controller, rel)
    if kind == "handoff":
        from desktop.views.handoff_reader import HandoffReader
        return HandoffReader(controller, rel)
    if kind == "flushes":
        from desktop.views.flush_reader import FlushReader
        return FlushReader(controller, rel)
    if kind == "search":
        from desktop.views.search_view import SearchView
        return SearchView(controller)
    if kind == "dreams":
        from desktop.views.dream_view import DreamView
        return DreamView(controller)
    if kind == "text":
        from desktop.views.text_reader import TextReader
        return TextReader(controller, rel)
    return None


def view_kind(rel: str) -> str:
    kind = kind_of(rel)
    if rel == ".reverie/flushes.jsonl":
        return "flushes"
    if kind == "session":
        return "session" if rel.endswith(".log.jsonl") else "text"
    if kind == "evicted":
        return "text"
    if kind in ("progress", "file", "private"):
        return "file" if rel.endswith(".md") else "text"
    return kind


def affects(key: str, paths: list[str], kinds: set[str]) -> bool:
    """Whether a change of `paths` concerns the view opened under `key`."""
    if key == "dreams":
        return "proposal" in kinds or any(p.startswith((".reverie/proposals", ".reverie/dreams")) for p in paths)
    if key == "search":
        return bool(kinds & {"memory", "daily", "session", "progress", "index"})
    if key.startswith("checkpoints/"):
        return any(p == key or p.startswith(key + "/") for p in paths)
    if key.startswith("handoffs/"):
        return any(p.startswith("handoffs/") for p in paths)
    return key in paths or any(p.endswith("/") and key.startswith(p) for p in paths)
