"""Which view shows which kind of workspace file."""
from __future__ import annotations


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
