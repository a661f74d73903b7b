"""The main window: open a workspace, the sidebar and its counts, every view opens, live outside changes,
shortcuts, and window state kept between runs."""
from __future__ import annotations

from PySide6.QtGui import QKeySequence

from core.store.atomic import append_durable
from desktop.sidebar import ROLE

from tests.support.qt_views import demo_log_with


def opened(qtbot, win, path):
    assert win.open_workspace(path)
    qtbot.waitUntil(lambda: win.sidebar.topLevelItemCount() > 0, timeout=10_000)
    memory = win.views["MEMORY.md"]
    qtbot.waitUntil(lambda: memory.base is not None, timeout=10_000)
    return win.controller


def test_open_shows_the_sidebar_with_counts_and_memory(qtbot, window, demo_workspace):
    win = window()
    opened(qtbot, win, demo_workspace.root)
    assert win.windowTitle() == f"Reverie — {demo_workspace.root.name}"
    sidebar = win.sidebar
    assert sidebar.count_of("daily") == 20 and sidebar.count_of("archive") == 1
    assert sidebar.count_of("sessions") == 3 and sidebar.count_of("checkpoints") == 1
    assert sidebar.count_of("handoffs") == 1 and sidebar.count_of("evicted") == 1
    assert win.views["MEMORY.md"].text() == demo_workspace.read_memory().text
    months = [sidebar.topLevelItem(1).child(i).text(0) for i in range(sidebar.topLevelItem(1).childCount())]
    assert months and all(" (" in m for m in months)          # grouped by month, with counts
    assert str(demo_workspace.root) in win.recent()
    # The demo's logs hold flush blocks but it has no flush record: no "(0)" that says there were none.
    labels = [sidebar.topLevelItem(i).text(0) for i in range(sidebar.topLevelItemCount())]
    assert "Flush record" in labels


def test_a_collapsed_month_gets_its_logs_when_opened(qtbot, window, demo_workspace):
    win = window()
    opened(qtbot, win, demo_workspace.root)
    daily = win.sidebar.topLevelItem(1)
    month = daily.child(daily.childCount() - 1)
    count = int(month.text(0).rsplit("(", 1)[1].rstrip(")"))
    if not month.isExpanded():
        assert month.childCount() == 0
        month.setExpanded(True)
    assert month.childCount() == count
    assert all(month.child(i).data(0, ROLE)[0] == "daily" for i in range(count))


def test_every_sidebar_entry_opens_its_view(qtbot, window, demo_workspace):
    win = window()
    opened(qtbot, win, demo_workspace.root)
    entries = []
    win.sidebar.fill_all()
    stack = [win.sidebar.topLevelItem(i) for i in range(win.sidebar.topLevelItemCount())]
    while stack:
        item = stack.pop()
        if item.data(0, ROLE):
            entries.append(item.data(0, ROLE))
        stack.extend(item.child(i) for i in range(item.childCount()))
    kinds = {kind for kind, _ in entries}
    assert kinds >= {"memory", "daily", "session", "checkpoint", "handoff", "text", "file", "flushes", "search",
                     "dreams"}
    for kind, rel in entries:
        view = win.open_view(kind, rel)
        assert view is not None, (kind, rel)
        assert win.tabs.currentWidget() is view
    qtbot.waitUntil(lambda: not win.controller.runner.pending(), timeout=20_000)
    errors = [key for key, view in win.views.items() if getattr(getattr(view, "bar", None), "kind", "") == "error"]
    assert not errors


def test_a_provenance_link_opens_the_daily_log_at_its_line(qtbot, window, demo_workspace):
    win = window()
    opened(qtbot, win, demo_workspace.root)
    memory = win.views["MEMORY.md"]
    rel = demo_log_with(demo_workspace, "Maya drinks tea")
    memory.openRequested.emit(rel, 3)
    view = win.views[rel]
    qtbot.waitUntil(lambda: view.base is not None, timeout=10_000)
    assert view.current_line() == 3
    assert "tea" in view.editor.textCursor().block().text()


def test_outside_changes_reach_the_views_live(qtbot, window, demo_workspace):
    win = window({"schedule": False, "watch": True, "index": False})
    opened(qtbot, win, demo_workspace.root)
    ws = demo_workspace
    memory = win.views["MEMORY.md"]
    # A clean buffer follows the disk.
    snap = ws.read_memory()
    ws.write_memory(snap.text.replace("Drinks tea", "Drinks mate"), snap.hash, reason="outside agent")
    qtbot.waitUntil(lambda: "Drinks mate" in memory.text(), timeout=10_000)
    # Unsaved edits + an outside append: merged automatically.
    found = memory.editor.document().find("Drinks mate")
    found.insertText("Drinks yerba mate")
    append_durable(ws.paths.memory_md, "- Agent appended this\n")
    qtbot.waitUntil(lambda: "Agent appended this" in memory.text(), timeout=10_000)
    assert "Drinks yerba mate" in memory.text() and not memory.in_conflict
    # Unsaved edits + an outside rewrite: a choice is shown.
    snap = ws.read_memory()
    ws.write_memory(snap.text.replace("Uses the Helix editor", "Uses Emacs"), snap.hash, reason="outside agent")
    qtbot.waitUntil(lambda: memory.in_conflict, timeout=10_000)
    assert "Reload" in memory.bar.buttons and "Drinks yerba mate" in memory.text()
    # A new daily log written by an agent appears in the sidebar.
    before = win.sidebar.count_of("daily")
    ws.append_daily("An agent wrote a new day", day=__import__("datetime").date(2027, 1, 5))
    qtbot.waitUntil(lambda: win.sidebar.count_of("daily") == before + 1, timeout=10_000)


def test_shortcuts_open_save_find_undo(qtbot, window, demo_workspace):
    win = window()
    opened(qtbot, win, demo_workspace.root)
    assert win.open_action.shortcut() == QKeySequence(QKeySequence.StandardKey.Open)
    assert win.save_action.shortcut() == QKeySequence(QKeySequence.StandardKey.Save)
    assert win.find_action.shortcut() == QKeySequence(QKeySequence.StandardKey.Find)
    assert win.undo_action.shortcut() == QKeySequence(QKeySequence.StandardKey.Undo)
    memory = win.views["MEMORY.md"]
    original = memory.text()
    memory.editor.document().find("Drinks tea").insertText("Drinks cocoa")
    win.save_action.trigger()
    qtbot.waitUntil(lambda: "Drinks cocoa" in demo_workspace.read_memory().text, timeout=10_000)
    qtbot.waitUntil(lambda: not memory.dirty, timeout=10_000)
    win.tabs.setCurrentWidget(memory)
    win.sidebar.setFocus()
    win.undo_action.trigger()              # nothing typed to undo in focus: undo the saved change
    qtbot.waitUntil(lambda: demo_workspace.read_memory().text == original, timeout=10_000)
    win.find_action.trigger()
    search = win.views["search"]
    assert win.tabs.currentWidget() is search


def test_window_and_splitter_state_are_kept_between_runs(qtbot, window, demo_workspace):
    win = window()
    win.show()
    qtbot.waitExposed(win)
    opened(qtbot, win, demo_workspace.root)
    win.resize(781, 553)                   # the offscreen screen is 800x600: a restore keeps within it
    win.splitter.setSizes([171, 600])
    qtbot.wait(50)
    sizes = win.splitter.sizes()
    win.close()
    again = window()
    again.show()
    qtbot.waitExposed(again)
    assert abs(again.splitter.sizes()[0] - sizes[0]) < 5
    assert abs(again.width() - 781) < 5 and abs(again.height() - 553) < 5
    assert again.recent()[0] == str(demo_workspace.root)


def test_a_folder_that_is_not_a_workspace_is_refused_clearly(qtbot, window, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QMessageBox

    shown = []
    monkeypatch.setattr(QMessageBox, "warning", lambda *args: shown.append(args[2]))
    win = window()
    (tmp_path / "empty").mkdir()
    assert not win.open_workspace(tmp_path / "empty")
    assert shown and "not a memory workspace" in shown[0]
    assert win.controller is None


def test_closing_with_unsaved_edits_can_save_them(qtbot, window, demo_workspace, monkeypatch):
    from PySide6.QtWidgets import QMessageBox

    win = window()
    opened(qtbot, win, demo_workspace.root)
    memory = win.views["MEMORY.md"]
    memory.editor.document().find("Drinks tea").insertText("Drinks chai")
    monkeypatch.setattr(QMessageBox, "exec", lambda self: QMessageBox.StandardButton.Save)
    win.close()
    assert win.controller is None
    assert "Drinks chai" in demo_workspace.read_memory().text


def test_closing_can_be_cancelled(qtbot, window, demo_workspace, monkeypatch):
    from PySide6.QtWidgets import QMessageBox

    win = window()
    opened(qtbot, win, demo_workspace.root)
    memory = win.views["MEMORY.md"]
    memory.editor.document().find("Drinks tea").insertText("Drinks chai")
    monkeypatch.setattr(QMessageBox, "exec", lambda self: QMessageBox.StandardButton.Cancel)
    assert not win.close()
    assert win.controller is not None and memory.dirty
    monkeypatch.setattr(QMessageBox, "exec", lambda self: QMessageBox.StandardButton.Discard)


