"""Getting around the main window: Back/Forward across links and tabs, a preview tab, tabs kept per
workspace, a theme switch, and the list of shortcuts under Help.

- Back (Alt+Left) and Forward (Alt+Right) walk the places a person went: every tab that came
  to the front and every line a link opened, with the line each view was left at.
- A single click in the sidebar opens the preview tab, which the next single click reuses; a
  double click or an edit keeps it.
- The open tabs of a workspace (their files and the current one) are kept in QSettings under
  the workspace's path and opened again the next time it is opened.
- View > Theme: system, light or dark, kept in QSettings; REVERIE_THEME still wins.
- Settings gets Ctrl+, where the platform has no standard shortcut for it (Linux).
"""
from __future__ import annotations

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QApplication, QDialog, QTableWidget, QTableWidgetItem, QVBoxLayout

from desktop import theme

THEMES = (("system", "Follow the system"), ("light", "Light"), ("dark", "Dark"))
KEEP = 40          # places remembered for Back


class Navigator(QObject):
    def __init__(self, window):
        super().__init__(window)
        self.window = window
        self.trail: list[list] = []        # [view key, line]
        self.at = -1
        self._moving = False
        self._current = None
        window.tabs.currentChanged.connect(self._tab_changed)

    # ----- the trail ------------------------------------------------------------------------------
    def _key_of(self, view) -> str | None:
        return next((key for key, value in self.window.views.items() if value is view), None)

    @staticmethod
    def _line_of(view) -> int:
        return view.current_line() if view is not None and hasattr(view, "current_line") else 0

    def _leave(self) -> None:
        """Remember the line the view in front is left at."""
        if 0 <= self.at < len(self.trail) and self._current is not None and self._key_of(self._current):
            self.trail[self.at][1] = self._line_of(self._current)

    def _push(self, key: str, line: int) -> None:
        if 0 <= self.at < len(self.trail) and self.trail[self.at][0] == key:
            self.trail[self.at][1] = line
            return
        self.trail = self.trail[: self.at + 1] + [[key, line]]
        self.trail = self.trail[-KEEP:]
        self.at = len(self.trail) - 1

    def _tab_changed(self, _index: int) -> None:
        view = self.window.tabs.currentWidget()
        key = self._key_of(view)
        if not self._moving and key is not None:
            self._leave()
            self._push(key, self._line_of(view))
        self._current = view

    def moved(self, key: str, line: int) -> None:
        """A link opened `key` at `line` (the tab may already have been in front)."""
        if self._moving:
            return
        view = self.window.views.get(key)
        if self._current is not view:
            self._leave()
        self._push(key, line)
        self._current = view

    def back(self) -> None:
        self._go(self.at - 1)

    def forward(self) -> None:
        self._go(self.at + 1)

    def _go(self, index: int) -> None:
        if not 0 <= index < len(self.trail) or self.window.controller is None:
            return
        self._leave()
        self.at = index
        key, line = self.trail[index]
        self._moving = True
        try:
            if key in ("dreams", "search"):
                view = self.window.open_view(key, "")
            else:
                view = self.window.open_location(key, line)
        finally:
            self._moving = False
        self._current = view

    # ----- tabs kept per workspace -------------------------------------------------------------------
    def save_tabs(self, root: str) -> None:
        keys = [self._key_of(self.window.tabs.widget(i)) for i in range(self.window.tabs.count())]
        keys = [k for k in keys if k]
        current = self._key_of(self.window.tabs.currentWidget()) or ""
        self.window.qsettings.setValue(f"tabs/{root}", keys)
        self.window.qsettings.setValue(f"tabs-current/{root}", current)

    def restore_tabs(self, root: str) -> None:
        keys = self.window.qsettings.value(f"tabs/{root}", []) or []
        keys = [keys] if isinstance(keys, str) else [str(k) for k in keys]
        current = str(self.window.qsettings.value(f"tabs-current/{root}", "") or "")
        for key in keys:
            if key not in self.window.views:
                self.window.open_view(key, "") if key in ("dreams", "search") else self.window.open_location(key)
        if current in self.window.views:
            self.window.tabs.setCurrentWidget(self.window.views[current])


class PreviewTab:
    """A single click in the sidebar shows the entry in the preview tab, which the next single click
    reuses; a double click (or an edit) keeps it as a tab of its own. The preview tab's title is dimmed."""

    def __init__(self, window):
        self.window = window
        self.view = None
        window.sidebar.previewed.connect(self.preview)
        window.sidebar.activated.connect(lambda _kind, _rel: self.keep(window.tabs.currentWidget()))

    def preview(self, kind: str, rel: str):
        window = self.window
        before = set(map(id, window.views.values()))
        view = window.open_view(kind, rel)
        if view is None or id(view) in before:
            return view                   # already a tab: just brought to the front
        old, self.view = self.view, view
        if old is not None and not getattr(old, "dirty", False):
            index = window.tabs.indexOf(old)
            if index >= 0:
                window.close_tab(index)
        index = window.tabs.indexOf(view)
        window.tabs.tabBar().setTabTextColor(index, window.palette().color(window.palette().ColorRole.PlaceholderText))
        window.tabs.setTabToolTip(index, "Preview: the next single click in the sidebar replaces it; "
                                         "double-click or edit to keep it")
        if hasattr(view, "dirtyChanged"):
            view.dirtyChanged.connect(lambda dirty, v=view: dirty and self.keep(v))
        return view

    def keep(self, view) -> None:
        if view is None or view is not self.view:
            return
        self.view = None
        index = self.window.tabs.indexOf(view)
        if index >= 0:
            self.window.tabs.tabBar().setTabTextColor(index, self.window.palette().color(
                self.window.palette().ColorRole.WindowText))
            self.window.tabs.setTabToolTip(index, self.window.tabs.tabText(index))


def choose_theme(window, choice: str) -> None:
    window.qsettings.setValue("view/theme", choice)
    theme.set_choice(choice)
    app = QApplication.instance()
    theme.apply_theme(app)
    for view in window.views.values():
        highlighter = getattr(view, "highlighter", None)
        if highlighter is not None:
            highlighter.refresh_colors()


def shortcut_rows(window) -> list[tuple[str, str]]:
    rows = []
    for menu_action in window.menuBar().actions():
        menu = menu_action.menu()
        for action in (menu.actions() if menu is not None else []):
            keys = action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
            if keys:
                rows.append((f"{menu_action.text().replace('&', '')} › {action.text().replace('&', '')}", keys))
    return rows


def show_shortcuts(window) -> QDialog:
    dialog = QDialog(window)
    dialog.setWindowTitle("Keyboard shortcuts")
    rows = shortcut_rows(window)
    table = QTableWidget(len(rows), 2)
    table.setHorizontalHeaderLabels(["command", "keys"])
    for row, (what, keys) in enumerate(rows):
        table.setItem(row, 0, QTableWidgetItem(what))
        table.setItem(row, 1, QTableWidgetItem(keys))
    table.resizeColumnsToContents()
    layout = QVBoxLayout(dialog)
    layout.addWidget(table)
    dialog.table = table
    dialog.resize(520, 520)
    dialog.show()
    return dialog


def install(window) -> Navigator:
    """Add Back/Forward and the theme to the View menu, a Help menu, and Ctrl+, for Settings."""
    navigator = Navigator(window)
    window.preview_tab = PreviewTab(window)
    view_menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&View")
    view_menu.addSeparator()
    window.back_action = window._action(view_menu, "Back", navigator.back, "Alt+Left")
    window.forward_action = window._action(view_menu, "Forward", navigator.forward, "Alt+Right")
    themes = view_menu.addMenu("Theme")
    group = QActionGroup(window)
    chosen = str(window.qsettings.value("view/theme", "system") or "system")
    window.theme_actions = {}
    for key, title in THEMES:
        action = QAction(title, window, checkable=True)
        action.setChecked(key == chosen)
        action.triggered.connect(lambda _on=False, k=key: choose_theme(window, k))
        group.addAction(action)
        themes.addAction(action)
        window.theme_actions[key] = action
    if chosen != "system":
        choose_theme(window, chosen)
    help_menu = window.menuBar().addMenu("&Help")
    window._action(help_menu, "Keyboard shortcuts", lambda: show_shortcuts(window), "F1")
    if window.settings_action.shortcut().isEmpty():
        window.settings_action.setShortcut(QKeySequence("Ctrl+,"))
    return navigator
