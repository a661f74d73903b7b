"""A file that holds a pasted secret is flagged: a marker in the sidebar, a banner in its view, a Redact button."""
from __future__ import annotations

import json


from core.store.atomic import append_durable
from desktop.sidebar import ROLE, SECRET_MARK
from desktop.views.daily_log_editor import DailyLogEditor
from desktop.views.session_reader import SessionReader

from tests.support.qt_views import demo_log_with, discard_edits

PASSWORD = "Heron-Glide-3307"


def paste_password(ws, text: str = "Maya drinks tea") -> str:
    """An agent's `>>` into a demo log (outside Reverie, so nothing redacts it on the way in)."""
    rel = demo_log_with(ws, text)
    append_durable(ws.root / rel, f"- [18:00] the staging DB password is {PASSWORD}\n")
    return rel


def test_the_sidebar_marks_a_log_with_a_secret_and_the_mark_goes_after_redact(qtbot, window, demo_workspace):
    rel = paste_password(demo_workspace)
    win = window()
    assert win.open_workspace(demo_workspace.root)
    qtbot.waitUntil(lambda: win.sidebar.topLevelItemCount() > 0, timeout=10_000)
    win.sidebar.fill_all()
    assert win.sidebar.marked() == [rel]
    item = next(win.sidebar.topLevelItem(1).child(i).child(j)
                for i in range(win.sidebar.topLevelItem(1).childCount())
                for j in range(win.sidebar.topLevelItem(1).child(i).childCount())
                if win.sidebar.topLevelItem(1).child(i).child(j).data(0, ROLE)[1] == rel)
    assert item.text(0).endswith(SECRET_MARK) and "1 secret (password)" in item.toolTip(0)
    month = item.parent()
    assert SECRET_MARK in month.text(0) and month.text(0).endswith(f"({month.childCount()})")

    view = win.open_location(rel)
    qtbot.waitUntil(lambda: view.secrets.kind == "warning", timeout=10_000)
    assert "holds 1 secret (password" in view.secrets.text and PASSWORD not in view.secrets.text
    view.secrets.buttons["Redact"].click()
    qtbot.waitUntil(lambda: PASSWORD not in view.text() and "[redacted password]" in view.text(), timeout=10_000)
    assert PASSWORD not in (demo_workspace.root / rel).read_text(encoding="utf-8")
    def month_marked() -> bool:
        daily = win.sidebar.topLevelItem(1)      # a new item each time the sidebar is listed
        return any(SECRET_MARK in daily.child(i).text(0) for i in range(daily.childCount()))
    qtbot.waitUntil(lambda: not month_marked(), timeout=10_000)     # listed again, without the mark
    win.sidebar.fill_all()
    assert win.sidebar.marked() == []
    assert view.secrets.kind == "info" and "Redacted 1 secret" in view.secrets.text
    assert demo_workspace.history_entries(rel)[0].reason == "redact secrets"


def test_the_banner_shows_in_the_log_view_and_redact_waits_for_unsaved_edits(qtbot, demo_workspace,
                                                                              make_controller):
    rel = paste_password(demo_workspace)
    controller = make_controller(demo_workspace, index=False)
    view = DailyLogEditor(controller, rel)
    qtbot.addWidget(view)
    qtbot.waitUntil(lambda: view.secrets.kind == "warning", timeout=10_000)
    assert "Redact" in view.secrets.buttons
    # unsaved edits: the file is not rewritten under them
    view.editor.document().find("Maya drinks tea").insertText("Maya drinks mate")
    view.secrets.buttons["Redact"].click()
    assert "Save or discard your edits first" in view.secrets.text
    assert PASSWORD in (demo_workspace.root / rel).read_text(encoding="utf-8")
    view.editor.document().undo()
    view.editor.document().setModified(False)
    view.secrets.buttons["Redact"].click()
    qtbot.waitUntil(lambda: "[redacted password]" in view.text(), timeout=10_000)
    assert "Maya drinks tea" in view.text()
    discard_edits([view])


def test_a_session_with_a_secret_has_the_banner_too(qtbot, demo_workspace, make_controller):
    path = demo_workspace.paths.session_log("s-0003-hypertable")
    append_durable(path, json.dumps({"role": "user", "content": f"the wiki password is {PASSWORD}"}) + "\n")
    controller = make_controller(demo_workspace, index=False)
    reader = SessionReader(controller, "sessions/s-0003-hypertable.log.jsonl")
    qtbot.addWidget(reader)
    qtbot.waitUntil(lambda: reader.secrets.kind == "warning", timeout=10_000)
    with qtbot.waitSignal(reader.loaded, timeout=10_000):
        reader.secrets.buttons["Redact"].click()
    texts = [reader.tree.topLevelItem(i).text(3) for i in range(reader.tree.topLevelItemCount())]
    assert any("[redacted password]" in t for t in texts) and not any(PASSWORD in t for t in texts)
    assert all(json.loads(line) for line in path.read_text(encoding="utf-8").splitlines())


def test_a_clean_file_shows_no_banner(qtbot, demo_workspace, make_controller):
    controller = make_controller(demo_workspace, index=False)
    view = DailyLogEditor(controller, demo_log_with(demo_workspace, "Maya drinks tea"))
    qtbot.addWidget(view)
    qtbot.waitUntil(lambda: view.base is not None, timeout=10_000)
    qtbot.waitUntil(lambda: not controller.runner.pending(), timeout=10_000)
    assert view.secrets.isHidden() and view.secrets.findings == []
