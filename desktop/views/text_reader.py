"""A read-only view of a text file: evicted tool results, the session cache, anything else."""
from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtGui import QFontDatabase, QTextCursor
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QVBoxLayout, QWidget

from desktop.views.bars import MessageBar


class TextReader(QWidget):
    openRequested = Signal(str, int)
    loaded = Signal()

    def __init__(self, controller, rel_path: str, parent=None):
        super().__init__(parent)
        self.controller = controller
        self.rel = rel_path
        self._pending_line = 0
        self.title = QLabel(rel_path)
        self.title.setStyleSheet("font-weight: 600")
        self.bar = MessageBar()
        self.view = QPlainTextEdit()
        self.view.setReadOnly(True)
        self.view.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.title)
        layout.addWidget(self.bar)
        layout.addWidget(self.view, 1)
        self.refresh()

    def refresh(self) -> None:
        ws, rel = self.controller.ws, self.rel
        self.controller.submit(lambda ctx: ws.read(rel), name=f"read {rel}", on_finished=self._show,
                               on_failed=self._failed)

    def check_disk(self) -> None:
        self.refresh()

    def _show(self, snapshot) -> None:
        scroll = self.view.verticalScrollBar().value()
        self.view.setPlainText(snapshot.text)
        self.view.verticalScrollBar().setValue(scroll)
        lines = snapshot.text.count("\n") + (0 if snapshot.text.endswith("\n") else 1)
        self.title.setText(f"{self.rel} · {lines:,} lines · read-only")
        self.bar.clear()
        if self._pending_line:
            self.goto_line(self._pending_line)
        self.loaded.emit()

    def _failed(self, exc) -> None:
        self.bar.show_message(f"Could not read {self.rel}: {exc}", "error", [("Try again", self.refresh)])
        self.loaded.emit()

    def text(self) -> str:
        return self.view.toPlainText()

    def goto_line(self, line: int) -> None:
        block = self.view.document().findBlockByNumber(max(0, line - 1))
        if not self.view.toPlainText():
            self._pending_line = line
            return
        self._pending_line = 0
        self.view.setTextCursor(QTextCursor(block))
        self.view.centerCursor()
