"""The daily-log editor: fix a wrong fact before a dream promotes it.

Daily logs are append-only for agents, but a person curating memory may edit one.
The edit goes through the same compare-and-swap and history as MEMORY.md, and an
agent's append made while the person edits is merged, never lost (the base class
does both). Flush blocks (`## Memory Flush — <time>` and the bullets under it) are
marked with a band, and the header counts them. A line a MEMORY.md bullet cites carries
a sign in the gutter (its tooltip names the bullets) and its menu opens them.
"""
from __future__ import annotations

from PySide6.QtWidgets import QLabel

from core.workspace import FLUSH_HEADING, parse_bullet
from desktop.views.document_editor import DocumentEditor
from desktop.views.highlighters import DailyLogHighlighter


class DailyLogEditor(DocumentEditor):
    save_reason = "daily log edited in Reverie"

    def __init__(self, controller, rel_path: str, parent=None):
        self.citing: dict[int, list[tuple[int, str]]] = {}
        super().__init__(controller, rel_path, parent)
        self.highlighter = DailyLogHighlighter(self.editor.document())
        self.editor.menu_items = self._citing_menu
        controller.changed.connect(self._memory_changed)
        controller.filesChanged.connect(self._memory_changed)
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
        self.find_citing()

    # ----- MEMORY.md bullets citing a line of this log ------------------------------------------------------
    def find_citing(self) -> None:
        """Mark the lines MEMORY.md bullets cite (a sign in the gutter; the menu opens the bullet)."""
        ws, rel = self.ws, self.rel

        def job(_ctx):
            return citing_bullets(ws.read_memory().text, rel)

        def show(found) -> None:
            self.citing = found
            self.editor.set_marks({line: ("◆", "Cited by MEMORY.md:\n" + "\n".join(
                f"line {n}: {text}" for n, text in bullets)) for line, bullets in found.items()})
        self.controller.submit(job, name=f"bullets citing {rel}", on_finished=show, on_failed=lambda _exc: None)

    def _citing_menu(self, line: int):
        return [(f"MEMORY.md line {n}: {text[:60]}", lambda n=n: self.openRequested.emit("MEMORY.md", n))
                for n, text in self.citing.get(line, [])]

    def _memory_changed(self, changes) -> None:
        if "MEMORY.md" in getattr(changes, "paths", changes):
            self.find_citing()


def citing_bullets(memory_text: str, rel: str) -> dict[int, list[tuple[int, str]]]:
    """{line of `rel`: [(MEMORY.md line, bullet text)]} for every bullet whose sources cite that line."""
    found: dict[int, list[tuple[int, str]]] = {}
    archived = rel.replace("memory/archive/", "memory/", 1)
    for number, line in enumerate(memory_text.split("\n"), start=1):
        bullet = parse_bullet(line, number)
        if bullet is None:
            continue
        for source in bullet.sources:
            if source.path in (rel, archived) and source.lines:
                for cited in range(source.lines[0], source.lines[1] + 1):
                    found.setdefault(cited, []).append((number, bullet.text))
    return found


class MarkdownFileEditor(DocumentEditor):
    """progress.md, AGENTS.md and other markdown files: the same save path, markdown highlighting."""

    save_reason = "edited in Reverie"

    def __init__(self, controller, rel_path: str, parent=None):
        from desktop.views.highlighters import MarkdownHighlighter

        super().__init__(controller, rel_path, parent)
        self.highlighter = MarkdownHighlighter(self.editor.document())
