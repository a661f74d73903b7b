"""Layout helpers the views share: a splitter of panes, and the titled column most views are."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QLayout, QSplitter, QVBoxLayout, QWidget


def splitter(*panes: QWidget, sizes: list[int], vertical: bool = False) -> QSplitter:
    """Panes side by side (or stacked) with initial sizes in pixels."""
    split = QSplitter(Qt.Orientation.Vertical if vertical else Qt.Orientation.Horizontal)
    for pane in panes:
        split.addWidget(pane)
    split.setSizes(sizes)
    return split


def title_label(text: str) -> QLabel:
    # Bold through the font, not a style sheet: a widget with a style sheet keeps the palette it was
    # polished with, so a title made before a switch to the dark theme stayed black on dark grey.
    label = QLabel(text)
    font = label.font()
    font.setBold(True)
    label.setFont(font)
    label.setWordWrap(True)
    label.setMinimumWidth(0)
    return label


def titled_column(owner: QWidget, title: QWidget, bar: QWidget, body: QWidget, *extra: QWidget | QLayout,
                  margin: int = 4) -> QVBoxLayout:
    """owner's layout: the title, the message bar, the body (taking the room), then any extra rows."""
    layout = QVBoxLayout(owner)
    layout.setContentsMargins(margin, margin, margin, margin)
    layout.addWidget(title)
    layout.addWidget(bar)
    layout.addWidget(body, 1)
    for row in extra:
        if isinstance(row, QLayout):
            layout.addLayout(row)
        else:
            layout.addWidget(row)
    return layout
