"""A read-only view of a text file: evicted tool results, the session cache, anything else."""
from __future__ import annotations

from PySide6.QtGui import QFontDatabase, QTextCursor
from PySide6.QtWidgets import QPlainTextEdit

from desktop.views.reader import Reader


class TextReader(Reader):
    def __init__(self, controller, rel_path: str, parent=None):
        super().__init__(controller, rel_path, rel_path, parent)
        self.view = QPlainTextEdit()
        self.view.setReadOnly(True)
        self.view.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.finish(self.view)

    def read_job(self):
        ws, rel = self.controller.ws, self.rel
        return lambda _ctx: ws.read(rel)

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
