"""A read-only view of a text file: evicted tool results, the session cache, anything else.

Lines wrap at the window's width. A JSON-lines file is shown one record at a time: the
session cache as time, session and its summary; any other record as indented JSON.
"""
from __future__ import annotations

import json

from PySide6.QtGui import QFontDatabase, QTextCursor
from PySide6.QtWidgets import QPlainTextEdit

from desktop.views.reader import Reader


class TextReader(Reader):
    def __init__(self, controller, rel_path: str, parent=None):
        super().__init__(controller, rel_path, rel_path, parent)
        self.view = QPlainTextEdit()
        self.view.setReadOnly(True)
        self.view.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.view.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.finish(self.view)

    def read_job(self):
        ws, rel = self.controller.ws, self.rel
        return lambda _ctx: ws.read(rel)

    def _show(self, snapshot) -> None:
        scroll = self.view.verticalScrollBar().value()
        self.view.setPlainText(readable(self.rel, snapshot.text))
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


def readable(rel: str, text: str) -> str:
    """`text` as a person reads it: JSON lines laid out record by record, anything else as it is."""
    if not rel.endswith(".jsonl"):
        return text
    out = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            out.append(f"line {number}: {line}")
            continue
        if isinstance(record, dict) and "summary" in record and "session_id" in record:
            ended = str(record.get("ended", "")).replace("T", " ")[:16]
            out.append(f"{ended} · {record['session_id']}\n    {record['summary']}")
        else:
            out.append(json.dumps(record, ensure_ascii=False, indent=2))
    return "\n\n".join(out)
