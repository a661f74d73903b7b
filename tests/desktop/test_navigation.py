"""Getting around: Back/Forward across a link and tabs, tabs kept per workspace, the theme switch,
the shortcut list, and a Settings shortcut on every platform."""
from __future__ import annotations

from PySide6.QtWidgets import QApplication

from desktop import theme
from desktop.navigation import shortcut_rows, show_shortcuts

from tests.support.qt_views import demo_log_with, discard_edits


def opened(qtbot, win, root):
    assert win.open_workspace(root)
    memory = win.views["MEMORY.md"]
    qtbot.waitUntil(lambda: memory.base is not None, timeout=10_000)
    return memory


def test_back_and_forward_walk_a_link_and_the_tabs(qtbot, window, demo_workspace):
    win = window()
    memory = opened(qtbot, win, demo_workspace.root)
    memory.goto_line(12)
    rel = demo_log_with(demo_workspace, "Maya drinks tea")
    memory.openRequested.emit(rel, 3)                              # a provenance link
    log = win.views[rel]
    qtbot.waitUntil(lambda: log.base is not None and log.current_line() == 3, timeout=10_000)
    win.open_view("dreams", "")
    assert win.back_action.shortcut().toString() == "Alt+Left"
    win.back_action.trigger()
    assert win.current_view() is log and log.current_line() == 3
    win.back_action.trigger()
    assert win.current_view() is memory and memory.current_line() == 12      # where it was left
    win.forward_action.trigger()
    assert win.current_view() is log and log.current_line() == 3
    win.forward_action.trigger()
    assert win.current_view() is win.views["dreams"]


def test_tabs_come_back_when_the_workspace_is_opened_again(qtbot, window, demo_workspace):
    win = window()
    opened(qtbot, win, demo_workspace.root)
    rel = demo_log_with(demo_workspace, "Maya drinks tea")
    win.open_location(rel)
    win.open_view("dreams", "")
    win.open_location(rel)                                            # the log in front
    discard_edits(win.views.values())
    assert win.close_workspace()
    assert win.open_workspace(demo_workspace.root)
    assert {"MEMORY.md", rel, "dreams"} <= set(win.views)
    assert win.current_view() is win.views[rel]


def test_the_theme_switch_and_the_shortcut_list(qtbot, window, demo_workspace):
    app = QApplication.instance()
    style, palette = app.style().name(), app.palette()
    win = window()
    try:
        win.theme_actions["dark"].trigger()
        assert theme.is_dark() and win.qsettings.value("view/theme") == "dark"
        win.theme_actions["light"].trigger()
        assert not theme.is_dark()
    finally:
        theme.set_choice("system")
        app.setStyle(style)
        app.setPalette(palette)
    rows = dict(shortcut_rows(win))
    assert rows["View › Back"] == "Alt+Left" and rows["Help › Keyboard shortcuts"] == "F1"
    assert not win.settings_action.shortcut().isEmpty()               # Ctrl+, where the platform has none
    dialog = show_shortcuts(win)
    assert dialog.table.rowCount() == len(rows) >= 10
    dialog.close()


def sidebar_item(win, rel):
    from desktop.sidebar import ROLE

    win.sidebar.fill_all()
    stack = [win.sidebar.topLevelItem(i) for i in range(win.sidebar.topLevelItemCount())]
    while stack:
        item = stack.pop()
        if (item.data(0, ROLE) or ("", ""))[1] == rel:
            return item
        stack.extend(item.child(i) for i in range(item.childCount()))
    raise AssertionError(rel)


def test_a_single_click_reuses_the_preview_tab_and_a_double_click_keeps_it(qtbot, window, demo_workspace):
    win = window()
    opened(qtbot, win, demo_workspace.root)
    qtbot.waitUntil(lambda: win.sidebar.topLevelItemCount() > 0, timeout=10_000)
    logs = sorted(str(log.path.relative_to(demo_workspace.root)) for log in demo_workspace.daily_logs())[:3]
    tabs = win.tabs.count()
    win.sidebar.itemClicked.emit(sidebar_item(win, logs[0]), 0)
    assert win.tabs.count() == tabs + 1 and logs[0] in win.views
    win.sidebar.itemClicked.emit(sidebar_item(win, logs[1]), 0)          # replaces the preview
    assert win.tabs.count() == tabs + 1 and logs[0] not in win.views and logs[1] in win.views
    win.sidebar.itemActivated.emit(sidebar_item(win, logs[1]), 0)        # double click: kept
    win.sidebar.itemClicked.emit(sidebar_item(win, logs[2]), 0)
    assert win.tabs.count() == tabs + 2 and {logs[1], logs[2]} <= set(win.views)
    log = win.views[logs[2]]
    qtbot.waitUntil(lambda: log.base is not None, timeout=10_000)
    log.editor.insertPlainText("- kept because it was edited\n")          # an edit keeps it too
    win.sidebar.itemClicked.emit(sidebar_item(win, logs[0]), 0)
    assert win.tabs.count() == tabs + 3 and logs[2] in win.views
