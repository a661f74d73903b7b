"""A message bar shown above a view: what happened, and the choices the person has."""
from __future__ import annotations

from typing import Callable

from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QSizePolicy

from desktop import theme


class MessageBar(QFrame):
    """Hidden until `show_message`; each call replaces the previous message and buttons."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("messageBar")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self._layout = QHBoxLayout(self)
        self._layout.setContentsMargins(8, 4, 8, 4)
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self._layout.addWidget(self.label)
        self.buttons: dict[str, QPushButton] = {}
        self.kind = ""
        self.hide()

    def show_message(self, text: str, kind: str = "info",
                     actions: list[tuple[str, Callable[[], None]]] | None = None, closable: bool = True) -> None:
        for button in self.buttons.values():
            self._layout.removeWidget(button)
            button.deleteLater()
        self.buttons = {}
        self.kind = kind
        self.label.setText(text)
        c = theme.colors()
        background = {"warning": c.warning_bg, "error": c.removed, "info": c.info_bg}.get(kind, c.info_bg)
        self.setStyleSheet(f"#messageBar {{ background: {background}; border-radius: 4px; }} "
                           f"#messageBar QLabel {{ color: {c.on_tint}; }}")
        for title, callback in (actions or []):
            button = QPushButton(title)
            button.clicked.connect(callback)
            self._layout.addWidget(button)
            self.buttons[title] = button
        if closable:
            close = QPushButton("Dismiss")
            close.clicked.connect(self.clear)
            self._layout.addWidget(close)
            self.buttons["Dismiss"] = close
        self.show()

    def clear(self) -> None:
        self.kind = ""
        self.label.clear()
        self.hide()

    @property
    def text(self) -> str:
        return "" if self.isHidden() else self.label.text()
