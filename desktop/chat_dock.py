"""The chat dock: the agent's chat panel for the open workspace, or a line saying to open one.

The panel is made the first time the person opens the dock with a workspace open (Ctrl+Shift+C,
or a dock restored open from the last run), and ended with the workspace: its session's flush and
summary are written as a session end would write them.
"""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDockWidget, QLabel, QWidget

CHAT_MIN_WIDTH = 220       # the chat dock's narrowest: the input keeps room to type in


class ChatDock(QDockWidget):
    def __init__(self, parent: QWidget | None = None):
        super().__init__("Chat with the agent", parent)
        self.setObjectName("chatDock")
        self.panel = None                 # the ChatPanel while a workspace is open and the chat was shown
        self.setWidget(self._placeholder())

    @staticmethod
    def _placeholder() -> QWidget:
        """What the dock shows with no workspace open (a dock restored from the last run included)."""
        label = QLabel("Open a workspace to chat with its agent.")
        label.setWordWrap(True)
        label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        label.setMinimumWidth(CHAT_MIN_WIDTH)
        return label

    def ensure_panel(self, controller) -> None:
        if self.panel is None and controller is not None:
            from desktop.views.chat_panel import ChatPanel

            self.panel = ChatPanel(controller)
            self.panel.setMinimumWidth(CHAT_MIN_WIDTH)
            self._replace(self.panel)

    def toggle(self, controller) -> None:
        if controller is None:
            return
        self.ensure_panel(controller)
        self.setVisible(not self.isVisible())
        if self.panel is not None and self.isVisible():
            self.panel.input.setFocus()          # Ctrl+Shift+C, then type the question

    def finish_session(self) -> None:
        """The workspace is closing: the chat writes its session end (flush and summary)."""
        if self.panel is not None:
            self.panel.finish_session()

    def drop_panel(self) -> None:
        if self.panel is not None:
            panel, self.panel = self.panel, None
            self._replace(self._placeholder())
            panel.deleteLater()

    def _replace(self, widget: QWidget) -> None:
        old = self.widget()
        self.setWidget(widget)
        if old is not None and old is not widget:
            old.deleteLater()
