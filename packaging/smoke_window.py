"""The smoke test's Qt step: start a real window on the offscreen platform, let the event loop run, quit.

It proves the bundle carries Qt's platform plugin, fonts and the widgets the app
needs. When the desktop app's own main window is in the bundle, that is the
window started (on the demo workspace); otherwise a plain window showing
MEMORY.md, so the Qt part of the bundle is still checked.
"""
from __future__ import annotations

import sys
from pathlib import Path

RUN_MS = 500


def _app_window(workspace: Path):
    """The desktop app's own main window, built the way desktop/app.py builds it, on the workspace."""
    try:
        from desktop.app import build_window, make_app, parse_args
    except ImportError:
        return None
    from PySide6.QtCore import QSettings

    make_app()
    # A private settings file: the smoke test must not touch the person's recent workspaces.
    qsettings = QSettings(str(workspace.parent / "smoke-qsettings.ini"), QSettings.Format.IniFormat)
    window = build_window(parse_args([str(workspace), "--no-schedule"]), qsettings=qsettings)
    window.show()
    if not window.open_workspace(str(workspace)):
        raise RuntimeError(f"the app could not open {workspace}")
    return window


def _plain_window(workspace: Path):
    from PySide6.QtWidgets import QMainWindow, QPlainTextEdit

    window = QMainWindow()
    window.setWindowTitle(f"Reverie smoke test - {workspace.name}")
    editor = QPlainTextEdit()
    editor.setPlainText((workspace / "MEMORY.md").read_text(encoding="utf-8"))
    window.setCentralWidget(editor)
    window.resize(800, 600)
    return window


def start_window(workspace: Path) -> str:
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    window = _app_window(workspace)
    app = QApplication.instance() or QApplication([sys.argv[0]])
    window = window or _plain_window(workspace)
    seen: dict[str, object] = {}

    def look_and_quit() -> None:   # checked from inside the running event loop
        seen["visible"] = window.isVisible()
        seen["size"] = (window.width(), window.height())
        seen["title"] = window.windowTitle()
        app.quit()

    window.show()
    QTimer.singleShot(RUN_MS, look_and_quit)
    app.exec()
    window.close()
    if not seen.get("visible"):
        raise RuntimeError("the window did not stay visible while the event loop ran")
    return (f"{type(window).__name__} {seen['size'][0]}x{seen['size'][1]} {seen['title']!r} "
            f"on the {app.platformName()} platform")
