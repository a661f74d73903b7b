"""The flush record reader: every memory flush and its outcome (`.reverie/flushes.jsonl`).

Shows that flushes really ran: written, no_reply, empty, duplicate, failed. A written
flush links to the daily-log lines it added (double-click the row). Flush blocks found in
the daily logs that no record covers (written before the record was kept, or by another
tool) are listed too, as "in a log".
"""
from __future__ import annotations

from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QTableWidget, QTableWidgetItem

from core.workspace import FLUSH_HEADING
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
        return lambda _ctx: (ws.flush_records(), flush_blocks(ws))

    def _show(self, result) -> None:
        read, blocks = result
        self.records = list(reversed(read.objects))          # newest first
        recorded = [r for r in self.records if r.get("path")]
        unrecorded = [b for b in blocks if not any(_covers(r, b) for r in recorded)]
        self.records += unrecorded
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
        self.title.setText(f"Flush record · {len(self.records) - len(unrecorded)} recorded flush(es), "
                           f"{len(blocks)} flush block(s) in the daily logs")
        if not self.records:
            self.bar.show_message("No flush has run in this workspace yet: no record (.reverie/flushes.jsonl) and "
                                  "no flush block in the daily logs.", "info")
        elif unrecorded:
            self.bar.show_message(f"{len(unrecorded)} flush block(s) in the daily logs have no record here (written "
                                  f"before Reverie kept one, or by another tool); they are listed as \"in a log\".",
                                  "info")
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




def flush_blocks(ws) -> list[dict]:
    """Every `## Memory Flush — <time>` block in the daily logs, as a row of the table (outcome "in a log")."""
    found = []
    for log in ws.daily_logs():
        rel = ws.relative(log.path)
        lines = [text for _n, text in ws.read_lines(rel)]
        starts = [n for n, text in enumerate(lines, start=1) if text.startswith(FLUSH_HEADING)]
        for index, start in enumerate(starts):
            end = (starts[index + 1] - 1) if index + 1 < len(starts) else len(lines)
            bullets = sum(1 for text in lines[start:end] if text.lstrip().startswith(("- ", "* ")))
            found.append({"ts": lines[start - 1][len(FLUSH_HEADING):].strip(), "outcome": "in a log",
                          "session_id": "", "messages": "", "bullets": bullets, "path": rel,
                          "lines": [start, end], "model": "", "error": ""})
    return sorted(found, key=lambda b: b["ts"], reverse=True)


def _covers(record: dict, block: dict) -> bool:
    """A flush record that wrote (part of) this block."""
    lines = record.get("lines") or [0, 0]
    return record.get("path") == block["path"] and block["lines"][0] <= lines[0] <= block["lines"][1] + 1
