"""The main window: sidebar, tabs of views, the chat panel, menus and shortcuts, the status bar.

It opens a workspace (recent list, desktop/welcome.py; folder picker; command-line argument) into a
WorkspaceController and routes everything: a sidebar click or a link opens the right
view at its line; every `Changes` the app made and every outside file change goes
to the views that show those paths (each decides itself: reload, merge, or offer a
choice), and to the sidebar. Window, dock and splitter state are kept in QSettings.
Closing the window closes the workspace and then stops every task still running on a
runner of the window's (the start-up preload), waiting a bounded time for each to reach
its cancellation point, so the app never exits with a worker in the middle of a write.
"""
from __future__ import annotations

import gc
import sys
from pathlib import Path

from PySide6.QtCore import QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QFileDialog, QMainWindow, QMessageBox, QSplitter, QTabWidget, QVBoxLayout, QWidget

from core.errors import CoreError
from core.types import kind_of
from desktop.chat_dock import ChatDock
from desktop.edit_commands import EditCommands
from desktop.menus import build_menus
from desktop.sidebar import Sidebar, scan
from desktop.status_bar import StatusBar
from desktop.tasks import QUIT_WAIT_S, stop_all
from desktop.views.factory import affects, view_kind
from desktop.welcome import WelcomePage

START_AFTER_MS = 1500      # the background machinery starts by then even if the first view never loads
START_AFTER_LOAD_MS = 250  # ... and this long after it loaded: its first paint and the sidebar's come first
QUIT_JOBS_WAIT_S = 1.0     # quitting: how long the controller waits for its cancelled jobs
SIDEBAR_MIN_WIDTH = 160    # the file names stay readable; the splitter does not squash it below this


class MainWindow(EditCommands, QMainWindow):
    workspaceOpened = Signal(object)      # the controller

    def __init__(self, qsettings: QSettings | None = None, controller_options: dict | None = None):
        super().__init__()
        self.qsettings = qsettings or QSettings()
        self.controller_options = controller_options or {}
        self.controller = None
        self.views: dict[str, QWidget] = {}
        self.setWindowTitle("Reverie")
        self.resize(1280, 820)
        self.sidebar = Sidebar()
        self.sidebar.activated.connect(self.open_view)
        self.tabs = QTabWidget()
        self.tabs.setTabsClosable(True)
        self.tabs.setDocumentMode(True)
        self.tabs.tabCloseRequested.connect(self.close_tab)
        self.welcome = WelcomePage()
        self.welcome.openRequested.connect(self.choose_workspace)
        self.welcome.newRequested.connect(self.new_workspace)
        self.tabs.hide()
        center = QWidget()
        center_layout = QVBoxLayout(center)
        center_layout.setContentsMargins(0, 0, 0, 0)
        center_layout.addWidget(self.welcome)
        center_layout.addWidget(self.tabs)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.setObjectName("mainSplitter")
        self.splitter.addWidget(self.sidebar)
        self.splitter.addWidget(center)
        self.splitter.setStretchFactor(1, 1)
        self.sidebar.setMinimumWidth(SIDEBAR_MIN_WIDTH)
        self.splitter.setCollapsible(0, False)
        self.splitter.setSizes([280, 1000])
        self.setCentralWidget(self.splitter)
        self.chat_dock = ChatDock(self)
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.chat_dock)
        self.chat_dock.hide()
        self.status = StatusBar()
        self.setStatusBar(self.status)
        self._sidebar_timer = QTimer(self)
        self._sidebar_timer.setSingleShot(True)
        self._sidebar_timer.setInterval(300)
        self._sidebar_timer.timeout.connect(self.refresh_sidebar)
        self.navigator = build_menus(self)     # and Back/Forward, theme, Help, tabs kept per workspace
        self._restore_state()

    @property
    def chat(self):
        """The chat panel, once the chat was shown for the open workspace; None before and after."""
        return self.chat_dock.panel

    # ----- building -------------------------------------------------------------------------------
    def _action(self, menu, text: str, slot, shortcut=None, tip: str = "") -> QAction:
        action = QAction(text, self)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        if tip:
            action.setStatusTip(tip)
        action.triggered.connect(slot)
        menu.addAction(action)
        return action

    # ----- state between runs -----------------------------------------------------------------------
    def _restore_state(self) -> None:
        geometry = self.qsettings.value("window/geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)
        state = self.qsettings.value("window/state")
        if state is not None:
            self.restoreState(state)
        self._splitter_restored = False

    def showEvent(self, event) -> None:
        super().showEvent(event)
        # Splitter sizes are only right once the window has its restored size: apply them on first show.
        if not self._splitter_restored:
            self._splitter_restored = True
            splitter = self.qsettings.value("window/splitter")
            if splitter is not None:
                self.splitter.restoreState(splitter)

    def save_state(self) -> None:
        self.qsettings.setValue("window/geometry", self.saveGeometry())
        self.qsettings.setValue("window/state", self.saveState())
        self.qsettings.setValue("window/splitter", self.splitter.saveState())
        memory = self.views.get("MEMORY.md")
        if memory is not None and hasattr(memory, "split"):
            self.qsettings.setValue("memory/splitter", memory.split.saveState())
            self.qsettings.setValue("memory/fold", memory.fold_button.isChecked())
            self.qsettings.setValue("memory/preview", memory.preview_button.isChecked())
        if self.controller is not None:
            self.navigator.save_tabs(str(self.controller.ws.root))
        self.qsettings.sync()

    def recent(self) -> list[str]:
        return self.recents.paths()

    # ----- opening and closing a workspace ------------------------------------------------------------
    def choose_workspace(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Open a memory workspace", self.recent()[0]
                                                  if self.recent() else str(Path.home()))
        if folder:
            self.open_workspace(folder)

    def new_workspace(self, folder: str | Path | None = None) -> bool:
        """Make a workspace with the full layout in a folder (chosen here when not given) and open it.
        A folder that already is a workspace is completed, never overwritten (Workspace.create)."""
        from core.workspace import Workspace

        if folder is None:
            folder = QFileDialog.getExistingDirectory(self, "Folder for the new memory workspace", str(Path.home()))
            if not folder:
                return False
        try:
            Workspace.create(folder).close()
        except CoreError as exc:
            QMessageBox.warning(self, "Cannot make a workspace there", str(exc))
            return False
        return self.open_workspace(folder)

    def open_workspace(self, path: str | Path, *, model: str = "") -> bool:
        from core.workspace import Workspace
        from desktop.controller import WorkspaceController

        try:
            ws = Workspace.open(path)
        except CoreError as exc:
            QMessageBox.warning(self, "Cannot open the workspace", str(exc))
            return False
        if not self.close_workspace():
            ws.close()
            return False
        if model:
            ws.settings = ws.settings.replace("model", model=model)
        controller = WorkspaceController(ws, parent=self, **self.controller_options)
        self.controller = controller
        controller.changed.connect(self._on_changes)
        controller.filesChanged.connect(self._on_files_changed)
        controller.indexState.connect(self.status.index.setText)
        controller.modelState.connect(self.status.model.setText)
        controller.scheduleStatus.connect(lambda s: self.status.show_schedule(s, controller.now(),
                                                                               controller.dream_running))
        controller.errorOccurred.connect(lambda text: self.status.showMessage(text, 8000))
        controller.dreamStarted.connect(self.status.dream_started)
        controller.dreamFinished.connect(self.status.dream_ended)
        self.status.model.setText(controller.model.state)
        links = ws.outside_links()        # never read or written through: say so rather than show less
        if links:
            self.status.showMessage(links[0] + (f" (and {len(links) - 1} more)" if len(links) > 1 else ""), 20000)
        self.setWindowTitle(f"Reverie — {ws.root.name}")
        self.welcome.hide()
        self.tabs.show()
        self.recents.remember(str(ws.root))
        memory = self.open_location("MEMORY.md")      # what the person came for, first
        self._start_when_shown(controller, memory)    # then the sidebar and the background machinery
        self.navigator.restore_tabs(str(ws.root))     # and the tabs it had open last time
        gc.freeze()               # what the workspace and its views hold now lives on: keep it out of later scans
        if self.chat_dock.isVisible():
            self.chat_dock.ensure_panel(controller)   # a dock restored open from the last run shows the chat
        self.workspaceOpened.emit(controller)
        return True

    def _start_when_shown(self, controller, first_view) -> None:
        """List the workspace in the sidebar, and start the index build, the watcher and the schedule,
        once the first view shows its text.

        Started with the open, their start-up work on the pool threads (opening the index,
        starting child processes) held the GIL that the first paint of the view needed: the
        GUI benchmark measured 170-320 ms stalls there: queued results are handled in one
        batch, so the view's text, the sidebar and the jobs' start-up all landed in one frame.
        A view that never loads still gets the machinery started after START_AFTER_MS.
        """
        started = []

        def start() -> None:
            if not started and self.controller is controller:
                started.append(True)
                self.refresh_sidebar()
                controller.start()
        if first_view is not None and hasattr(first_view, "loaded"):
            first_view.loaded.connect(lambda: QTimer.singleShot(START_AFTER_LOAD_MS, start))
        QTimer.singleShot(START_AFTER_MS, start)

    def close_workspace(self, quitting: bool = False) -> bool:
        """Close every view (asking about unsaved edits) and stop the controller. False: the person said no."""
        if self.controller is None:
            return True
        for view in list(self.views.values()):
            if hasattr(view, "close_request") and not view.close_request():
                return False
        for view in list(self.views.values()):
            if hasattr(view, "flush_recovery"):
                view.flush_recovery()
        self.save_state()
        if quitting:
            # Waiting for a job to reach its next cancellation point (a model load cannot be
            # interrupted) should not look like a frozen window.
            self.hide()
        self.chat_dock.finish_session()     # its flush and summary, as a session end would write them
        controller, self.controller = self.controller, None
        while self.tabs.count():
            widget = self.tabs.widget(0)
            self.tabs.removeTab(0)
            widget.deleteLater()
        self.views.clear()
        self.chat_dock.drop_panel()
        # Quitting waits about a second for cancelled jobs (a model stops at its next token); the whole
        # quit stays within 2 s, and no job is left to write after the window is gone (stop_all below).
        controller.shutdown(QUIT_JOBS_WAIT_S, quitting=True) if quitting else controller.shutdown()
        controller.deleteLater()
        self.status.reset()
        self.tabs.hide()
        self.welcome.show()
        self.setWindowTitle("Reverie")
        return True

    def closeEvent(self, event) -> None:
        had_workspace = self.controller is not None
        if not self.close_workspace(quitting=True):   # saves the window state while the views are still there
            event.ignore()
            return
        if not had_workspace:
            self.save_state()
        left = stop_all(QUIT_WAIT_S, owner=self)
        if left:
            print(f"reverie: quitting while still running: {', '.join(left)}", file=sys.stderr)
        event.accept()

    # ----- the sidebar --------------------------------------------------------------------------------
    def refresh_sidebar(self) -> None:
        controller = self.controller
        if controller is None:
            return
        controller.submit(lambda ctx: scan(controller.ws), name="scan workspace",
                          on_finished=lambda listing: self.controller is controller and self.sidebar.populate(listing),
                          on_failed=lambda exc: self.status.showMessage(f"Listing the workspace: {exc}", 8000))

    # ----- views ----------------------------------------------------------------------------------------
    def open_view(self, kind: str, rel: str) -> QWidget | None:
        if self.controller is None:
            return None
        if kind == "search":
            return self.show_search()
        if kind == "dreams":
            return self._view("dreams", "Dreams", lambda: self._make("dreams", ""))
        return self.open_location(rel, kind=kind)

    def open_location(self, rel: str, line: int = 0, *, kind: str = "") -> QWidget | None:
        """Open the view that shows `rel` (a workspace path) and go to `line`."""
        if self.controller is None or not rel:
            return None
        kind = kind or view_kind(rel)
        key = f"checkpoints/{rel.split('/')[1]}" if kind == "checkpoint" and rel.count("/") >= 1 else rel
        title = key.rsplit("/", 1)[-1] if kind != "checkpoint" else f"checkpoints · {key.split('/')[-1]}"
        view = self._view(key, title, lambda: self._make(kind, key))
        if view is not None and line and hasattr(view, "goto_line"):
            view.goto_line(line)
            self.navigator.moved(key, line)
        return view

    def _view(self, key: str, title: str, make) -> QWidget | None:
        view = self.views.get(key)
        if view is None:
            view = make()
            if view is None:
                return None
            self.views[key] = view
            index = self.tabs.addTab(view, title)
            self.tabs.setTabToolTip(index, key or title)
            if hasattr(view, "openRequested"):
                view.openRequested.connect(lambda path, line: self.open_location(path, line))
            if hasattr(view, "dirtyChanged"):
                view.dirtyChanged.connect(lambda dirty, v=view, t=title: self._mark_dirty(v, t, dirty))
        self.tabs.setCurrentWidget(view)
        return view

    def _make(self, kind: str, rel: str) -> QWidget | None:
        from desktop.views import factory

        view = factory.make_view(self.controller, kind, rel)
        if kind == "memory" and view is not None:
            state = self.qsettings.value("memory/splitter")
            if state is not None:
                view.split.restoreState(state)
            # The <!-- id… src… --> comments are hidden unless the person showed them; Preview as left.
            view.fold_button.setChecked(_flag(self.qsettings.value("memory/fold"), True))
            view.preview_button.setChecked(_flag(self.qsettings.value("memory/preview"), False))
        return view

    def _mark_dirty(self, view: QWidget, title: str, dirty: bool) -> None:
        index = self.tabs.indexOf(view)
        if index >= 0:
            self.tabs.setTabText(index, f"• {title}" if dirty else title)

    def close_tab(self, index: int) -> None:
        view = self.tabs.widget(index)
        if view is None or (hasattr(view, "close_request") and not view.close_request()):
            return
        self.tabs.removeTab(index)
        for key, value in list(self.views.items()):
            if value is view:
                del self.views[key]
        view.deleteLater()

    def switch_tab(self, step: int) -> None:
        count = self.tabs.count()
        if count:
            self.tabs.setCurrentIndex((self.tabs.currentIndex() + step) % count)

    def quick_open(self):
        """Ctrl+P: the workspace's files and MEMORY.md's sections, listed on a task, then a picker."""
        controller = self.controller
        if controller is None:
            return None
        from desktop.quick_open import QuickOpen, choices_for

        def show(choices) -> None:
            if self.controller is not controller:
                return
            dialog = QuickOpen(choices, self)
            dialog.chosen.connect(lambda rel, line: self.open_location(rel, line))
            self.quick_dialog = dialog
            dialog.open()
        return controller.submit(lambda ctx: choices_for(controller.ws), name="quick open", on_finished=show,
                                 on_failed=lambda exc: self.status.showMessage(f"Quick open: {exc}", 8000))

    def show_search(self):
        view = self._view("search", "Search", lambda: self._make("search", ""))
        if view is not None:
            view.focus_query()
        return view

    def toggle_chat(self) -> None:
        self.chat_dock.toggle(self.controller)

    def dream_now(self) -> None:
        if self.controller is not None:
            self.open_view("dreams", "")
            self.controller.start_dream(reason="asked for")

    def show_settings(self) -> None:
        if self.controller is None:
            return
        from desktop.settings_dialog import SettingsDialog

        SettingsDialog(self.controller, self).open()

    # ----- fan-out of changes --------------------------------------------------------------------------------
    def _on_changes(self, changes) -> None:
        self._notify(list(changes.paths), set(changes.kinds))
        if changes.info.get("redacted"):
            self._sidebar_timer.start()      # MEMORY.md too: its secret marker goes

    def _on_files_changed(self, paths: list[str]) -> None:
        self._notify(paths, {kind_of(p) for p in paths})

    def _notify(self, paths: list[str], kinds: set[str]) -> None:
        for key, view in list(self.views.items()):
            if affects(key, paths, kinds) and hasattr(view, "check_disk"):
                if key == "search" and not view.isVisible():
                    continue
                view.check_disk()
        if kinds - {"index", "settings", "memory"} or any(p.startswith(".reverie/") for p in paths):
            self._sidebar_timer.start()



def _flag(value, default: bool) -> bool:
    """A QSettings boolean (stored as "true"/"false" text by some formats), or `default` when unset."""
    if value is None:
        return default
    if isinstance(value, str):
        return value.lower() in ("true", "1", "yes")
    return bool(value)
