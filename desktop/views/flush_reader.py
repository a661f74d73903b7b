"""The flush record reader: every memory flush and its outcome (`.reverie/flushes.jsonl`).

Shows that flushes really ran: written, no_reply, empty, duplicate, failed. A written
flush links to the daily-log lines it added (double-click the row).
"""
from __future__ import annotations

from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QTableWidget, QTableWidgetItem

from desktop import theme
from desktop.views.reader import Reader

COLUMNS = ("time", "outcome", "session", "messages", "bullets", "written to", "model", "error")


class FlushReader(Reader):
    def __init__(self, controller, rel_path: str = ".reverie/flushes.jsonl", parent=None):
        super().__init__(controller, rel_path, "Flush record", parent)
        self.records: list[dict] = []
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.cellDoubleClicked.connect(self._open_row)
        self.finish(self.table)

    def read_job(self):
        ws = self.controller.ws
        return lambda _ctx: ws.flush_records()

    def _show(self, read) -> None:
        self.records = list(reversed(read.objects))          # newest first
        c = theme.colors()
        colours = {"written": c.added, "failed": c.removed, "duplicate": c.changed}
        self.table.setRowCount(len(self.records))
        for row, rec in enumerate(self.records):
            lines = rec.get("lines") or [0, 0]
            where = f"{rec['path']}#L{lines[0]}-L{lines[1]}" if rec.get("path") else ""
            values = (rec.get("ts", ""), rec.get("outcome", "?"), rec.get("session_id") or "-",
                      rec.get("messages", 0), rec.get("bullets", 0), where, rec.get("model", ""),
                      rec.get("error", ""))
            for col, value in enumerate(values):
                item = QTableWidgetItem(str(value))
                if col == 1 and rec.get("outcome") in colours:
                    item.setBackground(QBrush(QColor(colours[rec["outcome"]])))
                self.table.setItem(row, col, item)
        self.table.resizeColumnsToContents()
        self.title.setText(f"Flush record · {len(self.records)} flush(es)")
        if not self.records:
            self.bar.show_message("No flush has run in this workspace yet (.reverie/flushes.jsonl).", "info")
        else:
            self.bar.clear()
        if read.problems:
            self.bar.show_message(f"{len(read.problems)} damaged line(s) in the flush record were skipped.",
                                  "warning")
        self.loaded.emit()

    def _open_row(self, row: int, _col: int = 0) -> None:
        rec = self.records[row] if 0 <= row < len(self.records) else {}
        if rec.get("path"):
            self.openRequested.emit(rec["path"], (rec.get("lines") or [1])[0] or 1)

    def goto_line(self, line: int) -> None:
        if 0 < line <= self.table.rowCount():
            self.table.selectRow(line - 1)


