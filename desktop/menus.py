"""The main window's menu bar: File (open, recent, save, settings), Edit, View, Dream and their
shortcuts; desktop/navigation.py adds Back/Forward, the theme and Help. Every action calls a method
of the window, so a shortcut does exactly what its menu entry does."""
from __future__ import annotations

from PySide6.QtGui import QKeySequence

from desktop.navigation import Navigator, install
from desktop.welcome import RecentWorkspaces

Key = QKeySequence.StandardKey


def build_menus(win) -> Navigator:
    """Fill `win`'s menu bar (keeping the actions tests and navigation reach by name on it); returns
    its Navigator."""
    action = win._action
    bar = win.menuBar()
    file_menu = bar.addMenu("&File")
    win.new_action = action(file_menu, "&New workspace…", win.new_workspace, "Ctrl+Shift+N",
                            "Make a memory workspace (MEMORY.md, memory/, sessions/, …) in a folder")
    win.open_action = action(file_menu, "&Open workspace…", win.choose_workspace, Key.Open)
    win.quick_open_action = action(file_menu, "&Quick open…", win.quick_open, "Ctrl+P",
                                   "Open a file or a MEMORY.md section by typing part of its name")
    win.recent_menu = file_menu.addMenu("Open &recent")
    win.recents = RecentWorkspaces(win.qsettings, win.recent_menu, win.welcome, parent=win)
    win.recents.chosen.connect(win.open_workspace)
    win.save_action = action(file_menu, "&Save", win.save_current, Key.Save)
    action(file_menu, "Close tab", lambda: win.close_tab(win.tabs.currentIndex()), Key.Close)
    file_menu.addSeparator()
    win.settings_action = action(file_menu, "Se&ttings…", win.show_settings, Key.Preferences)
    file_menu.addSeparator()
    action(file_menu, "&Quit", win.close, Key.Quit)
    edit_menu = bar.addMenu("&Edit")
    win.undo_action = action(edit_menu, "&Undo", win.undo, Key.Undo,
                             "Undo typing, or the last saved change of this file")
    action(edit_menu, "Undo last saved change", win.undo_saved_change)
    action(edit_menu, "History of this file…", win.show_history)
    win.find_action = action(edit_menu, "&Find…", win.show_search, Key.Find)
    view_menu = bar.addMenu("&View")
    action(view_menu, "MEMORY.md", lambda: win.open_location("MEMORY.md"), "Ctrl+1")
    action(view_menu, "Dreams", lambda: win.open_view("dreams", ""), "Ctrl+2")
    action(view_menu, "Search", win.show_search, "Ctrl+3")
    action(view_menu, "Flush record", lambda: win.open_location(".reverie/flushes.jsonl"))
    action(view_menu, "Chat panel", win.toggle_chat, "Ctrl+Shift+C")
    view_menu.addSeparator()
    win.next_tab_action = action(view_menu, "Next tab", lambda: win.switch_tab(1), "Ctrl+Tab")
    win.next_tab_action.setShortcuts([QKeySequence("Ctrl+Tab"), QKeySequence("Ctrl+PgDown")])
    win.previous_tab_action = action(view_menu, "Previous tab", lambda: win.switch_tab(-1), "Ctrl+Shift+Tab")
    win.previous_tab_action.setShortcuts([QKeySequence("Ctrl+Shift+Tab"), QKeySequence("Ctrl+PgUp")])
    dream_menu = bar.addMenu("&Dream")
    action(dream_menu, "Dream &now", win.dream_now, "Ctrl+Shift+D")
    action(dream_menu, "&Cancel dream", lambda: win.controller and win.controller.cancel_dream())
    action(dream_menu, "Run maintenance now", lambda: win.controller and win.controller.start_maintenance())
    return install(win)
