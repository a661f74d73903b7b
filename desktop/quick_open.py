"""Quick open (Ctrl+P): type part of a file name or a MEMORY.md section, Enter opens it.

The choices are the workspace's files as the sidebar lists them and MEMORY.md's
section headings (each opens MEMORY.md at its line). Matching is by the typed
words, each found somewhere in the choice, in any order; shorter choices first.
"""
from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QDialog, QLineEdit, QListWidget, QListWidgetItem, QVBoxLayout

MAX_SHOWN = 200


@dataclass(frozen=True)
class Choice:
    label: str
    path: str
    line: int = 0


def choices_for(ws) -> list[Choice]:
    """MEMORY.md's sections and every file a view opens; read on a task (it walks the workspace)."""
    out = []
    if ws.paths.memory_md.exists():
        out.append(Choice("MEMORY.md", "MEMORY.md"))
        for number, line in enumerate(ws.read_memory().text.split("\n"), start=1):
            if line.startswith("## "):
                out.append(Choice(f"MEMORY.md › {line[3:].strip()}", "MEMORY.md", number))
    paths = [ws.relative(log.path) for log in ws.daily_logs()]
    paths += [ws.relative(s.path) for s in ws.sessions()]
    paths += sorted({ws.relative(p.parent) for p in ws.checkpoint_files()})
    paths += [ws.relative(ws.paths.handoff(str(h.get("id")))) for h in ws.handoffs() if h.get("id")]
    paths += [name for name in ("progress.md", "AGENTS.md") if (ws.root / name).is_file()]
    out += [Choice(rel, rel) for rel in sorted(dict.fromkeys(paths), reverse=True)]
    return out


def matching(choices: list[Choice], text: str) -> list[Choice]:
    words = text.lower().split()
    found = [c for c in choices if all(w in c.label.lower() for w in words)]
    return sorted(found, key=lambda c: (not c.label.lower().startswith(words[0]) if words else False, len(c.label)))


class QuickOpen(QDialog):
    chosen = Signal(str, int)          # workspace path, line (0: none)

    def __init__(self, choices: list[Choice], parent=None):
        super().__init__(parent)
        self.setWindowTitle("Quick open")
        self.choices = choices
        self.query = QLineEdit()
        self.query.setPlaceholderText("File or MEMORY.md section…")
        self.list = QListWidget()
        layout = QVBoxLayout(self)
        layout.addWidget(self.query)
        layout.addWidget(self.list)
        self.query.textChanged.connect(self.refresh)
        self.query.returnPressed.connect(self.accept_current)
        self.list.itemActivated.connect(lambda _item: self.accept_current())
        self.resize(520, 360)
        self.refresh("")

    def refresh(self, text: str) -> None:
        self.list.clear()
        for choice in matching(self.choices, text)[:MAX_SHOWN]:
            item = QListWidgetItem(choice.label)
            item.setData(Qt.ItemDataRole.UserRole, choice)
            self.list.addItem(item)
        if self.list.count():
            self.list.setCurrentRow(0)

    def keyPressEvent(self, event) -> None:
        if event.key() in (Qt.Key.Key_Down, Qt.Key.Key_Up) and self.list.count():
            row = self.list.currentRow() + (1 if event.key() == Qt.Key.Key_Down else -1)
            self.list.setCurrentRow(max(0, min(self.list.count() - 1, row)))
            return
        super().keyPressEvent(event)

    def accept_current(self) -> None:
        item = self.list.currentItem()
        if item is None:
            return
        choice: Choice = item.data(Qt.ItemDataRole.UserRole)
        self.chosen.emit(choice.path, choice.line)
        self.accept()
