"""Compare two versions of a file side by side, and choose which one to keep."""
from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QPushButton, QVBoxLayout

from desktop.views.diff_view import DiffView


class CompareDialog(QDialog):
    reloadChosen = Signal()
    keepChosen = Signal()

    def __init__(self, rel_path: str, disk_text: str, mine: str, *, recovered: bool = False, parent=None):
        super().__init__(parent)
        self.setWindowTitle(f"Compare — {rel_path}")
        self.resize(1000, 600)
        layout = QVBoxLayout(self)
        if recovered:
            what = "Left: the file on disk. Right: the unsaved edits kept when the app closed."
            left, right, reload_title, keep_title = "on disk", "recovered edits", "Discard recovered edits", \
                "Restore recovered edits"
        else:
            what = "Left: the version on disk now. Right: your unsaved edits."
            left, right, reload_title, keep_title = "on disk now", "your edits", "Reload from disk", "Keep mine"
        layout.addWidget(QLabel(what))
        self.diff = DiffView(left, right)
        self.diff.set_texts(disk_text, mine)
        layout.addWidget(self.diff, 1)
        buttons = QDialogButtonBox()
        self.reload_button = QPushButton(reload_title)
        self.keep_button = QPushButton(keep_title)
        buttons.addButton(self.reload_button, QDialogButtonBox.ButtonRole.DestructiveRole)
        buttons.addButton(self.keep_button, QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.addButton(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        self.reload_button.clicked.connect(lambda: (self.reloadChosen.emit(), self.accept()))
        self.keep_button.clicked.connect(lambda: (self.keepChosen.emit(), self.accept()))
        layout.addWidget(buttons)
