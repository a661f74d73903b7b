"""A side-by-side diff of two texts: removed lines on the left, added on the right, aligned.

`align()` is pure (run it on a task for big files); `DiffView.show()` draws its result.
Used by the history browser, the conflict compare dialog and the dream review.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass

from PySide6.QtGui import QColor, QTextCharFormat, QTextCursor, QTextFormat
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPlainTextEdit, QSizePolicy, QTextEdit, QVBoxLayout, QWidget

from desktop import theme

EQUAL, REMOVED, ADDED, CHANGED, FILLER = "equal", "removed", "added", "changed", "filler"


@dataclass(frozen=True)
class Alignment:
    left: tuple[str, ...]
    right: tuple[str, ...]
    left_kinds: tuple[str, ...]
    right_kinds: tuple[str, ...]
    changed_rows: int

    @property
    def identical(self) -> bool:
        return self.changed_rows == 0


def align(old: str, new: str) -> Alignment:
    # Lines as the file holds them, less a CRLF file's "\r" (a pane would show it as a stray mark).
    a = [line.removesuffix("\r") for line in old.split("\n")]
    b = [line.removesuffix("\r") for line in new.split("\n")]
    left, right, lk, rk = [], [], [], []
    changed = 0
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag == "equal":
            left += a[i1:i2]
            right += b[j1:j2]
            lk += [EQUAL] * (i2 - i1)
            rk += [EQUAL] * (j2 - j1)
            continue
        rows = max(i2 - i1, j2 - j1)
        changed += rows
        old_part = a[i1:i2] + [""] * (rows - (i2 - i1))
        new_part = b[j1:j2] + [""] * (rows - (j2 - j1))
        kind_old = CHANGED if tag == "replace" else REMOVED
        kind_new = CHANGED if tag == "replace" else ADDED
        left += old_part
        right += new_part
        lk += [kind_old] * (i2 - i1) + [FILLER] * (rows - (i2 - i1))
        rk += [kind_new] * (j2 - j1) + [FILLER] * (rows - (j2 - j1))
    return Alignment(tuple(left), tuple(right), tuple(lk), tuple(rk), changed)


class _Pane(QPlainTextEdit):
    def __init__(self):
        super().__init__()
        self.setReadOnly(True)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.setFont(_mono())

    def show_lines(self, lines, kinds) -> None:
        self.setPlainText("\n".join(lines))
        c = theme.colors()
        colours = {REMOVED: c.removed, ADDED: c.added, CHANGED: c.changed, FILLER: None}
        selections = []
        block = self.document().firstBlock()
        for kind in kinds:
            colour = colours.get(kind)
            if colour:
                sel = QTextEdit.ExtraSelection()
                fmt = QTextCharFormat()
                fmt.setBackground(QColor(colour))
                fmt.setForeground(QColor(c.on_tint))      # readable on the tint in either theme
                fmt.setProperty(QTextFormat.Property.FullWidthSelection, True)
                sel.format = fmt
                cursor = QTextCursor(block)
                sel.cursor = cursor
                selections.append(sel)
            block = block.next()
        self.setExtraSelections(selections)


def _mono():
    from PySide6.QtGui import QFontDatabase

    return QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)


class DiffView(QWidget):
    def __init__(self, left_title: str = "before", right_title: str = "after", parent=None):
        super().__init__(parent)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        titles = QHBoxLayout()
        self.left_title, self.right_title = QLabel(left_title), QLabel(right_title)
        for title in (self.left_title, self.right_title):       # a long title must not widen the window
            title.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        titles.addWidget(self.left_title)
        titles.addWidget(self.right_title)
        outer.addLayout(titles)
        panes = QHBoxLayout()
        self.left, self.right = _Pane(), _Pane()
        for pane in (self.left, self.right):
            pane.setMinimumWidth(120)
        panes.addWidget(self.left)
        panes.addWidget(self.right)
        outer.addLayout(panes)
        # Scroll together: the rows are aligned, so the same row is at the same height.
        self.left.verticalScrollBar().valueChanged.connect(self.right.verticalScrollBar().setValue)
        self.right.verticalScrollBar().valueChanged.connect(self.left.verticalScrollBar().setValue)
        self.alignment: Alignment | None = None

    def set_titles(self, left: str, right: str) -> None:
        self.left_title.setText(left)
        self.right_title.setText(right)

    def show_alignment(self, alignment: Alignment) -> None:
        self.alignment = alignment
        self.left.show_lines(alignment.left, alignment.left_kinds)
        self.right.show_lines(alignment.right, alignment.right_kinds)
        first = next((i for i, k in enumerate(alignment.right_kinds) if k != EQUAL), 0)
        cursor = QTextCursor(self.right.document().findBlockByNumber(first))
        self.right.setTextCursor(cursor)
        self.right.centerCursor()

    def set_texts(self, old: str, new: str) -> None:
        self.show_alignment(align(old, new))

