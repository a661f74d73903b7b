"""The app names a part of the workspace that is a symbolic link out, rather than showing less."""
from __future__ import annotations

from PySide6.QtCore import QSettings

from desktop.main_window import MainWindow
from tests.support.hostile import hostile_workspace, plant_memory_folder_link
from tests.support.qt_views import discard_edits


def test_a_memory_folder_link_out_is_named_in_the_status_bar(qtbot, tmp_path):
    ws, _outside = hostile_workspace(tmp_path, plant_memory_folder_link)
    win = MainWindow(qsettings=QSettings(), controller_options={"schedule": False, "watch": False, "index": False})
    try:
        assert win.open_workspace(ws)
        message = win.status.currentMessage()
        assert message.startswith("memory/ is a symbolic link") and "outside the workspace" in message
    finally:
        discard_edits(win.views.values())
        win.close()
        win.deleteLater()
