"""A plain-text editor with line numbers in a gutter: every source cites `#L3`, so the lines show it.

`marks` (line number -> a one-character sign and a tooltip) lets a view flag lines in
the gutter, e.g. the daily-log lines a MEMORY.md bullet cites.
"""
from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtGui import QColor, QPainter
from PySide6.QtWidgets import QPlainTextEdit, QToolTip, QWidget
from shiboken6 import isValid

from desktop import theme


class _Gutter(QWidget):
    def __init__(self, editor: "NumberedText"):
        super().__init__(editor)
        self.editor = editor
        self.setMouseTracking(True)

    def sizeHint(self) -> QSize:
        return QSize(self.editor.gutter_width(), 0)

    def paintEvent(self, event) -> None:
        self.editor.paint_gutter(event)

    def mouseMoveEvent(self, event) -> None:
        line = self.editor.line_at(event.position().toPoint().y())
        tip = self.editor.marks.get(line, ("", ""))[1]
        if tip:
            QToolTip.showText(event.globalPosition().toPoint(), tip, self)
        else:
            QToolTip.hideText()


class NumberedText(QPlainTextEdit):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.marks: dict[int, tuple[str, str]] = {}
        # Extra context-menu entries for a line: line number -> [(title, callback)].
        self.menu_items: Callable[[int], list[tuple[str, Callable[[], None]]]] | None = None
        self.gutter = _Gutter(self)
        self.blockCountChanged.connect(lambda _n: self._fit_gutter())
        self.updateRequest.connect(self._scrolled)
        self._fit_gutter()

    def gutter_width(self) -> int:
        digits = max(3, len(str(max(1, self.blockCount()))))
        return 10 + self.fontMetrics().horizontalAdvance("9") * (digits + 2)

    def _gutter(self) -> "_Gutter | None":
        """The gutter while it exists. Closing a tab deletes the gutter (a child) before the editor's
        own signals stop: a scroll or a late result in between reached a deleted widget."""
        gutter = self.gutter
        return gutter if gutter is not None and isValid(gutter) else None

    def set_marks(self, marks: dict[int, tuple[str, str]]) -> None:
        self.marks = dict(marks)
        if (gutter := self._gutter()) is not None:
            gutter.update()

    def _fit_gutter(self) -> None:
        self.setViewportMargins(self.gutter_width(), 0, 0, 0)

    def _scrolled(self, rect: QRect, dy: int) -> None:
        gutter = self._gutter()
        if gutter is None:
            return
        if dy:
            gutter.scroll(0, dy)
        else:
            gutter.update(0, rect.y(), gutter.width(), rect.height())

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        area = self.contentsRect()
        if (gutter := self._gutter()) is not None:
            gutter.setGeometry(QRect(area.left(), area.top(), self.gutter_width(), area.height()))

    def contextMenuEvent(self, event) -> None:
        menu = self.createStandardContextMenu()
        items = self.menu_items(self.cursorForPosition(event.pos()).blockNumber() + 1) if self.menu_items else []
        if items:
            menu.addSeparator()
            for title, callback in items:
                menu.addAction(title, callback)
        menu.exec(event.globalPos())

    def line_at(self, y: int) -> int:
        block = self.firstVisibleBlock()
        top = self.blockBoundingGeometry(block).translated(self.contentOffset()).top()
        while block.isValid():
            bottom = top + self.blockBoundingRect(block).height()
            if top <= y < bottom:
                return block.blockNumber() + 1
            block, top = block.next(), bottom
        return 0

    def visible_numbers(self) -> list[int]:
        """The line numbers the gutter draws now (what a person sees beside the text)."""
        found = []
        block = self.firstVisibleBlock()
        top = self.blockBoundingGeometry(block).translated(self.contentOffset()).top()
        while block.isValid() and top <= self.viewport().height():
            if block.isVisible():
                found.append(block.blockNumber() + 1)
            top += self.blockBoundingRect(block).height()
            block = block.next()
        return found

    def paint_gutter(self, event) -> None:
        if self._gutter() is None:
            return
        colors = theme.colors()
        painter = QPainter(self.gutter)
        painter.fillRect(event.rect(), self.palette().color(self.backgroundRole()).darker(104 if not colors.dark
                                                                                          else 90))
        current = self.textCursor().blockNumber() + 1
        block = self.firstVisibleBlock()
        top = round(self.blockBoundingGeometry(block).translated(self.contentOffset()).top())
        height = self.fontMetrics().height()
        width = self.gutter.width() - 6
        while block.isValid() and top <= event.rect().bottom():
            bottom = top + round(self.blockBoundingRect(block).height())
            if block.isVisible() and bottom >= event.rect().top():
                number = block.blockNumber() + 1
                painter.setPen(QColor(colors.heading if number == current else colors.comment))
                painter.drawText(0, top, width, height, Qt.AlignmentFlag.AlignRight, str(number))
                sign = self.marks.get(number, ("", ""))[0]
                if sign:
                    painter.setPen(QColor(colors.pin))
                    painter.drawText(3, top, width, height, Qt.AlignmentFlag.AlignLeft, sign)
            block, top = block.next(), bottom
        painter.end()
