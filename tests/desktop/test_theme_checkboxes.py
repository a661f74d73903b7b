"""Check boxes stay visible in the dark theme (Fusion draws their outline as dark as the box)."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTreeWidget, QTreeWidgetItem

from desktop import theme


def bright_pixels(widget) -> int:
    image = widget.viewport().grab().toImage()
    rect = widget.visualItemRect(widget.topLevelItem(0))
    found = 0
    for x in range(rect.left(), rect.left() + 40):
        for y in range(rect.top(), rect.bottom()):
            if image.pixelColor(x, y).lightness() > 100:
                found += 1
    return found


def test_an_unchecked_box_shows_in_the_dark_theme(qtbot, qapp, monkeypatch):
    style, palette = qapp.style().name(), qapp.palette()
    monkeypatch.setenv("REVERIE_THEME", "dark")
    try:
        assert theme.apply_theme(qapp) == "dark" and theme.is_dark()
        tree = QTreeWidget()
        qtbot.addWidget(tree)
        item = QTreeWidgetItem(tree, [""])
        item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
        item.setCheckState(0, Qt.CheckState.Unchecked)
        tree.resize(200, 100)
        tree.show()
        assert bright_pixels(tree) >= 12          # the four sides of the box, against the dark base
    finally:
        qapp.setStyle(style)
        qapp.setPalette(palette)
