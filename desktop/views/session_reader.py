"""The session transcript reader: one row per message, roles coloured, tool calls and results collapsible.

A tool result that was evicted (`[tool result evicted: ... saved to large_tool_results/...]`)
gets a child row that opens the saved result. Malformed lines of the JSONL are
listed above the transcript by line number (the store skips them, never fails).
"""
from __future__ import annotations

import json
import re

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import QTreeWidget, QTreeWidgetItem

from desktop import theme
from desktop.views.reader import Reader

EVICTED = re.compile(r"large_tool_results/[A-Za-z0-9._/-]+\.txt")
ROLE = Qt.ItemDataRole.UserRole
PREVIEW_CHARS = 160


def _first_line(text: str) -> str:
    line = (text or "").strip().split("\n", 1)[0]
    return line if len(line) <= PREVIEW_CHARS else line[:PREVIEW_CHARS] + "…"


def _pretty_args(arguments) -> str:
    if isinstance(arguments, str):
        try:
            return json.dumps(json.loads(arguments), ensure_ascii=False, indent=2)
        except ValueError:
            return arguments
    return json.dumps(arguments, ensure_ascii=False, indent=2)


def short_time(ts) -> str:
    """"11-10 09:06" from an ISO time stamp ("" when there is none)."""
    text = str(ts or "")
    return f"{text[5:10]} {text[11:16]}" if len(text) >= 16 and text[10] in "T " else text


class SessionReader(Reader):
    def __init__(self, controller, rel_path: str, parent=None):
        self.session_id = rel_path.rsplit("/", 1)[-1].removesuffix(".log.jsonl")
        super().__init__(controller, rel_path, f"Session {self.session_id}", parent)
        self.records: list[tuple[int, dict]] = []
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(["line", "time", "role", "message"])
        self.tree.setColumnWidth(0, 60)
        self.tree.setColumnWidth(1, 95)
        self.tree.setColumnWidth(2, 90)
        self.tree.setWordWrap(True)
        self.tree.itemActivated.connect(self._activated)
        self.tree.itemDoubleClicked.connect(self._activated)
        self.finish(self.tree)

    def read_job(self):
        ws, sid = self.controller.ws, self.session_id
        return lambda _ctx: ws.read_session(sid)

    def _show(self, read) -> None:
        self.records = read.records
        expanded = {self.tree.topLevelItem(i).data(0, ROLE)[1] for i in range(self.tree.topLevelItemCount())
                    if self.tree.topLevelItem(i).isExpanded()}
        self.tree.clear()
        c = theme.colors()
        colours = {"user": c.user, "assistant": c.assistant, "tool": c.tool, "system": c.system}
        bold = QFont()
        bold.setBold(True)
        for line, record in read.records:
            role = str(record.get("role", "?"))
            content = record.get("content")
            content = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
            calls = record.get("tool_calls") or []
            summary = _first_line(content)
            if role == "tool":
                summary = f"{record.get('name', 'tool')} → {summary}"
            elif calls and not summary:
                summary = "calls " + ", ".join(str((c.get("function") or {}).get("name", "?")) for c in calls)
            item = QTreeWidgetItem(self.tree, [str(line), short_time(record.get("ts")), role, summary])
            item.setData(0, ROLE, ("message", line))
            item.setForeground(2, QBrush(QColor(colours.get(role, c.system))))
            item.setFont(2, bold)
            if record.get("ts"):
                item.setToolTip(1, str(record["ts"]))
            if content and (len(content) > PREVIEW_CHARS or "\n" in content.strip()):
                child = QTreeWidgetItem(item, ["", "", "", content])
                child.setData(0, ROLE, ("content", line))
            for call in calls:
                function = call.get("function") or {}
                child = QTreeWidgetItem(item, ["", "", "call", f"{function.get('name', '?')}("
                                                               f"{_pretty_args(function.get('arguments', ''))})"])
                child.setData(0, ROLE, ("call", line))
                child.setForeground(2, QBrush(QColor(c.tool)))
            for rel in dict.fromkeys(EVICTED.findall(content or "")):
                link = QTreeWidgetItem(item, ["", "", "evicted", f"Open the full result: {rel}"])
                link.setData(0, ROLE, ("evicted", rel))
                link.setForeground(3, QBrush(QColor(c.heading)))
                item.setExpanded(True)
            if line in expanded:
                item.setExpanded(True)
        if read.problems:
            lines = "; ".join(f"line {p.line}: {p.message}" if p.line else p.message for p in read.problems[:5])
            more = f" (and {len(read.problems) - 5} more)" if len(read.problems) > 5 else ""
            self.bar.show_message(f"{len(read.problems)} line(s) of {self.rel} could not be read and are skipped: "
                                  f"{lines}{more}", "warning")
        else:
            self.bar.clear()
        self.title.setText(f"Session {self.session_id} · {len(read.records)} messages")
        if self._pending_line:
            self.goto_line(self._pending_line)
        self.loaded.emit()

    def _activated(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        data = item.data(0, ROLE)
        if data and data[0] == "evicted":
            self.openRequested.emit(data[1], 1)

    def goto_line(self, line: int) -> None:
        """Select the message on JSONL line `line` (a provenance ref `session:<id>#<line>`)."""
        if not self.records:
            self._pending_line = line
            return
        self._pending_line = 0
        for i in range(self.tree.topLevelItemCount()):
            item = self.tree.topLevelItem(i)
            if item.data(0, ROLE)[1] >= line:
                self.tree.setCurrentItem(item)
                item.setExpanded(True)
                self.tree.scrollToItem(item)
                return

    def evicted_links(self) -> list[str]:
        found = []
        for i in range(self.tree.topLevelItemCount()):
            item = self.tree.topLevelItem(i)
            for j in range(item.childCount()):
                data = item.child(j).data(0, ROLE)
                if data and data[0] == "evicted":
                    found.append(data[1])
        return found
