"""Find in this file: a line under every reader's body; Enter finds the next match, Shift+Enter the
previous one, wrapping around at the end. Works on text views (QPlainTextEdit, QTextBrowser),
tables and trees (a match is a cell whose text contains the words)."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor, QTextDocument
from PySide6.QtWidgets import (QAbstractItemView, QHBoxLayout, QLabel, QLineEdit, QTableWidget, QTreeWidget,
                               QTreeWidgetItemIterator, QWidget)


class FindBar(QWidget):
    def __init__(self, target: QWidget, parent=None):
        super().__init__(parent)
        self.target = target
        self.field = QLineEdit()
        self.field.setPlaceholderText("Find in this file (Enter: next, Shift+Enter: previous)")
        self.field.setClearButtonEnabled(True)
        self.field.returnPressed.connect(self.next)
        self.result = QLabel("")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.field, 1)
        layout.addWidget(self.result)

    def keyPressEvent(self, event) -> None:
        shifted = event.modifiers() & Qt.KeyboardModifier.ShiftModifier
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and shifted:
            self.previous()
            return
        super().keyPressEvent(event)

    def next(self) -> bool:
        return self.find(self.field.text(), backward=False)

    def previous(self) -> bool:
        return self.find(self.field.text(), backward=True)

    def find(self, words: str, *, backward: bool = False) -> bool:
        self.field.setText(words)
        if not words:
            self.result.setText("")
            return False
        if isinstance(self.target, (QTableWidget, QTreeWidget)):
            found = self._find_item(words, backward)
        else:
            found = self._find_text(words, backward)
        self.result.setText("" if found else "not found")
        return found

    def _find_text(self, words: str, backward: bool) -> bool:
        view = self.target
        flags = QTextDocument.FindFlag.FindBackward if backward else QTextDocument.FindFlag(0)
        if view.find(words, flags):
            return True
        cursor = view.textCursor()            # wrap around: from the other end once
        cursor.movePosition(QTextCursor.MoveOperation.End if backward else QTextCursor.MoveOperation.Start)
        view.setTextCursor(cursor)
        return view.find(words, flags)

    def _cells(self) -> list:
        lowered = self.field.text().lower()
        if isinstance(self.target, QTableWidget):
            table = self.target
            return [(row, col) for row in range(table.rowCount()) for col in range(table.columnCount())
                    if table.item(row, col) is not None and lowered in table.item(row, col).text().lower()]
        found, iterator = [], QTreeWidgetItemIterator(self.target)
        while iterator.value() is not None:
            item = iterator.value()
            if any(lowered in item.text(col).lower() for col in range(self.target.columnCount())):
                found.append(item)
            iterator += 1
        return found

    def _find_item(self, _words: str, backward: bool) -> bool:
        hits = self._cells()
        if not hits:
            return False
        view = self.target
        if isinstance(view, QTableWidget):
            here = (view.currentRow(), view.currentColumn())
            after = [h for h in hits if (h < here if backward else h > here)]
            row, col = (after[-1] if backward else after[0]) if after else (hits[-1] if backward else hits[0])
            view.setCurrentCell(row, col)
            view.scrollToItem(view.item(row, col), QAbstractItemView.ScrollHint.PositionAtCenter)
            return True
        current = view.currentItem()
        index = hits.index(current) if current in hits else (-1 if not backward else len(hits))
        item = hits[(index + (-1 if backward else 1)) % len(hits)]
        parent = item.parent()
        while parent is not None:
            parent.setExpanded(True)
            parent = parent.parent()
        view.setCurrentItem(item)
        view.scrollToItem(item, QAbstractItemView.ScrollHint.PositionAtCenter)
        return True
