"""Where a workspace comes from while none is open: the welcome page, and the recent workspaces
(kept in QSettings) that both the page and File ▸ Open recent list."""
from __future__ import annotations

from PySide6.QtCore import QObject, QSettings, Signal
from PySide6.QtWidgets import QLabel, QListWidget, QMenu, QPushButton, QVBoxLayout, QWidget

MAX_RECENT = 8


class WelcomePage(QWidget):
    openRequested = Signal()         # "Open workspace…": pick a folder
    newRequested = Signal()          # "New workspace…": pick (or make) a folder and create the layout in it
    chosen = Signal(str)             # a recent workspace, activated or double-clicked

    def __init__(self, parent=None):
        super().__init__(parent)
        layout = QVBoxLayout(self)
        title = QLabel("<h2>Reverie</h2><p>Open an agent's memory workspace: MEMORY.md, daily logs, sessions, "
                       "checkpoints and hand-offs.</p>")
        title.setWordWrap(True)
        open_button = QPushButton("Open workspace…")
        open_button.clicked.connect(self.openRequested)
        self.new_button = QPushButton("New workspace…")
        self.new_button.setToolTip("Make a memory workspace in a folder: MEMORY.md, memory/, sessions/, "
                                   "checkpoints/ and handoffs/")
        self.new_button.clicked.connect(self.newRequested)
        self.recent_list = QListWidget()
        self.recent_list.itemActivated.connect(lambda item: self.chosen.emit(item.text()))
        self.recent_list.itemDoubleClicked.connect(lambda item: self.chosen.emit(item.text()))
        layout.addWidget(title)
        layout.addWidget(open_button)
        layout.addWidget(self.new_button)
        layout.addWidget(QLabel("Recent workspaces"))
        layout.addWidget(self.recent_list, 1)

    def show_recent(self, paths: list[str]) -> None:
        self.recent_list.clear()
        self.recent_list.addItems(paths)


class RecentWorkspaces(QObject):
    """The last MAX_RECENT workspaces opened, newest first, shown in a menu and on the welcome page."""

    chosen = Signal(str)

    def __init__(self, qsettings: QSettings, menu: QMenu, page: WelcomePage, parent=None):
        super().__init__(parent)
        self.qsettings = qsettings
        self.menu = menu
        self.page = page
        page.chosen.connect(self.chosen)
        self.refresh()

    def paths(self) -> list[str]:
        value = self.qsettings.value("recent", [])
        if isinstance(value, str):         # QSettings gives back a one-item list as a plain string
            value = [value]
        return [str(v) for v in (value or [])]

    def remember(self, path: str) -> None:
        paths = [path] + [p for p in self.paths() if p != path]
        self.qsettings.setValue("recent", paths[:MAX_RECENT])
        self.refresh()

    def refresh(self) -> None:
        paths = self.paths()
        self.menu.clear()
        for path in paths:
            action = self.menu.addAction(path)
            action.triggered.connect(lambda _checked=False, p=path: self.chosen.emit(p))
        self.menu.setEnabled(bool(paths))
        self.page.show_recent(paths)
