"""Helpers for tests that drive the desktop's views: drop unsaved edits, find a demo log, open an editor."""
from __future__ import annotations

QUIET = {"schedule": False, "watch": False, "index": False}     # a main window with no background machinery


def discard_edits(views) -> None:
    """Teardown helper: drop unsaved edits so closing asks nothing."""
    for view in views:
        for target in (view, getattr(view, "json_editor", None)):
            editor = getattr(target, "editor", None)
            if editor is not None and hasattr(editor, "document"):
                editor.document().setModified(False)


def demo_log_with(ws, text: str) -> str:
    """The demo's daily log holding `text` (the demo is dated relative to today, so file names move)."""
    hits = sorted(p for p in ws.paths.memory_dir.glob("*.md") if text in p.read_text(encoding="utf-8"))
    assert hits, f"no demo daily log contains {text!r}"
    return ws.paths.relative(hits[0])


def open_memory_editor(qtbot, controller):
    """A MEMORY.md editor that has loaded its text."""
    from desktop.views.memory_editor import MemoryEditor

    editor = MemoryEditor(controller, "MEMORY.md")
    qtbot.addWidget(editor)
    with qtbot.waitSignal(editor.loaded, timeout=10_000):
        pass
    return editor
