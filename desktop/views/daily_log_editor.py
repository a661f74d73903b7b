"""The daily-log editor: fix a wrong fact before a dream promotes it.

Daily logs are append-only for agents, but a person curating memory may edit one.
The edit goes through the same compare-and-swap and history as MEMORY.md, and an
agent's append made while the person edits is merged, never lost (the base class
does both). Flush blocks (`## Memory Flush — <time>` and the bullets under it) are
marked with a band, and the header counts them.
"""
from __future__ import annotations

from PySide6.QtWidgets import QLabel

from core.workspace import FLUSH_HEADING
from desktop.views.document_editor import DocumentEditor
from desktop.views.highlighters import DailyLogHighlighter


class DailyLogEditor(DocumentEditor):
    save_reason = "daily log edited in Reverie"

    def __init__(self, controller, rel_path: str, parent=None):
        super().__init__(controller, rel_path, parent)
        self.highlighter = DailyLogHighlighter(self.editor.document())
        if rel_path.startswith("memory/archive/"):
            self.title.setText(f"{rel_path}  (archived)")

    def add_tools(self, toolbar) -> None:
        self.flush_count = QLabel("")
        self.flush_count.setToolTip("Blocks a memory flush wrote (marked with a band)")
        toolbar.addWidget(self.flush_count)

    def flush_blocks(self) -> list[int]:
        """1-based line numbers of the flush headings in the buffer."""
        return [n for n, line in enumerate(self.text().split("\n"), start=1) if line.startswith(FLUSH_HEADING)]

    def after_load(self) -> None:
        count = len(self.flush_blocks())
        self.flush_count.setText(f"{count} flush block{'s' if count != 1 else ''}")


class MarkdownFileEditor(DocumentEditor):
    """progress.md, AGENTS.md and other markdown files: the same save path, markdown highlighting."""

    save_reason = "edited in Reverie"

    def __init__(self, controller, rel_path: str, parent=None):
        from desktop.views.highlighters import MarkdownHighlighter

        super().__init__(controller, rel_path, parent)
        self.highlighter = MarkdownHighlighter(self.editor.document())
