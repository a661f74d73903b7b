"""The history of one file: every saved version with a one-line summary of the change after it
(who: editor, dream accept, pin, outside change; what: +3 −1 bullets), its diff against the
file now, and restore."""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QDialog, QHBoxLayout, QLabel, QListWidget, QListWidgetItem, QPushButton,
                               QSplitter, QVBoxLayout, QWidget)

from desktop.views.bars import MessageBar
from desktop.views.diff_view import DiffView, align
from desktop.views.history_summary import summaries


class HistoryDialog(QDialog):
    restored = Signal(object)        # Changes
    entriesLoaded = Signal()
    diffShown = Signal()

    def __init__(self, controller, rel_path: str, parent=None):
        super().__init__(parent)
        self.controller = controller
        self.rel = rel_path
        self.entries = []
        self.current = None          # Snapshot of the file now
        self.setWindowTitle(f"History — {rel_path}")
        self.resize(1100, 650)
        self.list = QListWidget()
        self.list.currentRowChanged.connect(self._selected)
        self.diff = DiffView("saved version", "the file now")
        self.restore_button = QPushButton("Restore this version")
        self.restore_button.setEnabled(False)
        self.restore_button.clicked.connect(self.restore_selected)
        self.bar = MessageBar()
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(QLabel("Saved versions, newest first (each is the file before that change)"))
        left_layout.addWidget(self.list)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(left)
        split.addWidget(self.diff)
        split.setSizes([320, 780])
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.restore_button)
        close = QPushButton("Close")
        close.clicked.connect(self.close)
        buttons.addWidget(close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.bar)
        layout.addWidget(split, 1)
        layout.addLayout(buttons)
        self.refresh()

    def refresh(self) -> None:
        ws, rel = self.controller.ws, self.rel
        def job(_ctx):
            entries, current = ws.history_entries(rel), ws.read(rel)
            text = lambda entry: ws.history.snapshot(entry).decode("utf-8", errors="replace")  # noqa: E731
            return entries, current, summaries(entries, text, current)
        self.controller.submit(job, name="history", on_finished=self._entries,
                               on_failed=lambda e: self.bar.show_message(str(e), "error"))

    def _entries(self, result) -> None:
        self.entries, self.current, lines = result
        self.list.clear()
        for entry, line in zip(self.entries, lines):
            item = QListWidgetItem(line)
            item.setToolTip(f"{entry.reason}\n{entry.size_before} bytes before this change")
            self.list.addItem(item)
        if not self.entries:
            self.bar.show_message(f"{self.rel} has no saved versions yet.", "info")
        else:
            self.list.setCurrentRow(0)
        self.entriesLoaded.emit()

    def _selected(self, row: int) -> None:
        self.restore_button.setEnabled(0 <= row < len(self.entries))
        if not 0 <= row < len(self.entries):
            return
        entry, ws, now_text = self.entries[row], self.controller.ws, self.current.text

        def job(_ctx):
            before = ws.history.snapshot(entry).decode("utf-8", errors="replace")
            return row, align(before, now_text)

        def show(result) -> None:
            shown_row, alignment = result
            if shown_row != self.list.currentRow():
                return               # an older selection's diff: a newer one is on its way
            self.diff.show_alignment(alignment)
            self.diff.set_titles(f"before “{entry.reason}” ({entry.time[:19]})", "the file now")
            self.diffShown.emit()
        self.controller.submit(job, name="history diff", on_finished=show,
                               on_failed=lambda e: self.bar.show_message(str(e), "error"))

    def restore_selected(self) -> None:
        row = self.list.currentRow()
        if not 0 <= row < len(self.entries) or self.current is None:
            return
        entry, ws, rel, expected = self.entries[row], self.controller.ws, self.rel, self.current.hash

        def done(changes) -> None:
            self.bar.show_message(f"Restored the version from {entry.time[:19]} (undo puts the other back).", "info")
            self.restored.emit(changes)
            self.refresh()
        self.controller.run_op(lambda ctx: ws.restore(rel, entry.id, expected), name="restore",
                               on_success=done, on_failed=lambda e: self.bar.show_message(f"Not restored: {e}",
                                                                                          "error"))
