"""MEMORY.md editor: open, edit and save, outside changes (conflict, pure append), provenance, pin, history, recovery."""
from __future__ import annotations

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QTextCursor

from core.store.atomic import append_durable
from core.store.memory_md import parse_document
from desktop.views.memory_editor import MemoryEditor



def open_editor(qtbot, controller, rel="MEMORY.md") -> MemoryEditor:
    editor = MemoryEditor(controller, rel)
    qtbot.addWidget(editor)
    with qtbot.waitSignal(editor.loaded, timeout=10_000):
        pass
    return editor


def type_at_end(editor, text: str) -> None:
    cursor = editor.editor.textCursor()
    cursor.movePosition(QTextCursor.MoveOperation.End)
    editor.editor.setTextCursor(cursor)
    editor.editor.insertPlainText(text)


def replace_line(editor, old: str, new: str) -> None:
    doc = editor.editor.document()
    found = doc.find(old)
    assert not found.isNull(), old
    found.insertText(new)


def test_open_edit_save_goes_through_cas_and_history(qtbot, demo_workspace, make_controller):
    ws = demo_workspace
    controller = make_controller(ws)
    editor = open_editor(qtbot, controller)
    assert editor.text() == ws.read_memory().text
    before = len(ws.history_entries("MEMORY.md"))
    replace_line(editor, "Drinks tea, not coffee", "Drinks green tea, not coffee")
    assert editor.dirty
    with qtbot.waitSignal(editor.saved, timeout=10_000):
        editor.save()
    assert "Drinks green tea, not coffee" in ws.read_memory().text
    assert not editor.dirty and editor.base.hash == ws.read_memory().hash
    assert len(ws.history_entries("MEMORY.md")) == before + 1


def test_outside_rewrite_while_editing_offers_reload_keep_compare(qtbot, demo_workspace, make_controller):
    ws = demo_workspace
    controller = make_controller(ws)
    editor = open_editor(qtbot, controller)
    replace_line(editor, "Drinks tea, not coffee", "Drinks rooibos")
    mine = editor.text()
    snap = ws.read_memory()
    theirs = snap.text.replace("Uses the Helix editor", "Uses Neovim")
    ws.write_memory(theirs, snap.hash, reason="outside agent")
    with qtbot.waitSignal(editor.conflictShown, timeout=10_000):
        editor.check_disk()
    assert set(editor.bar.buttons) >= {"Reload", "Keep mine", "Compare"}

    editor.bar.buttons["Compare"].click()
    dialog = editor.compare_dialog
    assert dialog is not None and not dialog.diff.alignment.identical
    assert "Uses Neovim" in "\n".join(dialog.diff.alignment.left)
    assert "Drinks rooibos" in "\n".join(dialog.diff.alignment.right)
    dialog.reload_button.click()                       # reload from the dialog
    assert editor.text() == theirs and not editor.dirty and not editor.in_conflict
    editor.editor.undo()                               # the reload is one undoable edit: nothing lost
    assert editor.text() == mine


def test_keep_mine_then_save_replaces_disk_and_keeps_theirs_in_history(qtbot, demo_workspace, make_controller):
    ws = demo_workspace
    controller = make_controller(ws)
    editor = open_editor(qtbot, controller)
    replace_line(editor, "Drinks tea, not coffee", "Drinks rooibos")
    snap = ws.read_memory()
    theirs = snap.text.replace("Uses the Helix editor", "Uses Neovim")
    ws.write_memory(theirs, snap.hash, reason="outside agent")
    with qtbot.waitSignal(editor.conflictShown, timeout=10_000):
        editor.check_disk()
    editor.bar.buttons["Keep mine"].click()
    with qtbot.waitSignal(editor.saved, timeout=10_000):
        editor.save()
    now = ws.read_memory().text
    assert "Drinks rooibos" in now and "Uses the Helix editor" in now
    latest = ws.history_entries("MEMORY.md")[0]
    assert "Uses Neovim" in ws.history.snapshot(latest).decode()


def test_outside_pure_append_merges_into_unsaved_edits(qtbot, demo_workspace, make_controller):
    ws = demo_workspace
    controller = make_controller(ws)
    editor = open_editor(qtbot, controller)
    replace_line(editor, "Drinks tea, not coffee", "Drinks rooibos")
    append_durable(ws.paths.memory_md, "- Appended by the agent meanwhile\n")
    editor.check_disk()
    qtbot.waitUntil(lambda: "Appended by the agent meanwhile" in editor.text(), timeout=10_000)
    assert "Drinks rooibos" in editor.text() and not editor.in_conflict and editor.dirty
    assert "merged" in editor.notice.text
    with qtbot.waitSignal(editor.saved, timeout=10_000):
        editor.save()
    disk = ws.read_memory().text
    assert "Drinks rooibos" in disk and disk.endswith("- Appended by the agent meanwhile\n")


def test_an_append_racing_the_save_is_merged_by_the_store(qtbot, demo_workspace, make_controller):
    ws = demo_workspace
    controller = make_controller(ws)
    editor = open_editor(qtbot, controller)
    replace_line(editor, "Drinks tea, not coffee", "Drinks rooibos")
    append_durable(ws.paths.memory_md, "- Raced the save\n")      # the editor has not looked at the disk
    with qtbot.waitSignal(editor.saved, timeout=10_000):
        editor.save()
    disk = ws.read_memory().text
    assert "Drinks rooibos" in disk and "- Raced the save" in disk
    assert editor.text() == disk and "kept, in the order they were written" in editor.notice.text


def test_a_clean_buffer_follows_the_disk(qtbot, demo_workspace, make_controller):
    ws = demo_workspace
    controller = make_controller(ws)
    editor = open_editor(qtbot, controller)
    snap = ws.read_memory()
    ws.write_memory(snap.text.replace("Drinks tea", "Drinks mate"), snap.hash, reason="outside")
    editor.check_disk()
    qtbot.waitUntil(lambda: "Drinks mate" in editor.text(), timeout=10_000)
    assert not editor.dirty and not editor.in_conflict


def test_provenance_on_hover_and_ctrl_click_opens_the_source(qtbot, demo_workspace, make_controller):
    controller = make_controller(demo_workspace)
    editor = open_editor(qtbot, controller)
    qtbot.waitUntil(lambda: bool(editor.sources), timeout=10_000)
    line = next(n for n, t in enumerate(editor.text().split("\n"), 1) if "Drinks tea, not coffee" in t)
    bullet = editor.bullet_on_line(line)
    tip = editor.provenance_html(bullet)
    source = bullet.sources[0]
    assert "m-8c127b" in tip and source.ref in tip
    quoted = editor.sources[source.ref]
    assert "tea" in quoted.lower() and html_in(quoted, tip)

    editor.resize(900, 600)
    editor.show()
    qtbot.waitExposed(editor)
    editor.goto_line(line)
    rect = editor.editor.cursorRect()
    opened = []
    editor.openRequested.connect(lambda path, n: opened.append((path, n)))
    qtbot.mouseClick(editor.editor.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.ControlModifier,
                     QPoint(rect.x() + 5, rect.center().y()))
    assert opened == [(source.path, source.lines[0])]
    assert source.path in editor.provenance.text()


def html_in(quoted: str, tip: str) -> bool:
    import html

    return html.escape(quoted[:40]) in tip


def test_pin_and_unpin_save_at_once_when_clean(qtbot, demo_workspace, make_controller):
    ws = demo_workspace
    controller = make_controller(ws)
    editor = open_editor(qtbot, controller)
    line = next(n for n, t in enumerate(editor.text().split("\n"), 1) if "Drinks tea, not coffee" in t)
    assert not editor.bullet_on_line(line).pinned
    with qtbot.waitSignal(editor.saved, timeout=10_000):
        assert editor.toggle_pin(line)
    pinned = {b.text for b in parse_document(ws.read_memory().text).bullets() if b.pinned}
    assert "Drinks tea, not coffee" in pinned
    with qtbot.waitSignal(editor.saved, timeout=10_000):
        editor.toggle_pin(line)
    pinned = {b.text for b in parse_document(ws.read_memory().text).bullets() if b.pinned}
    assert "Drinks tea, not coffee" not in pinned


def test_history_shows_diffs_and_restores_a_version(qtbot, demo_workspace, make_controller):
    ws = demo_workspace
    controller = make_controller(ws)
    original = ws.read_memory().text
    editor = open_editor(qtbot, controller)
    replace_line(editor, "Drinks tea, not coffee", "Drinks rooibos")
    with qtbot.waitSignal(editor.saved, timeout=10_000):
        editor.save()
    editor.show_history()
    dialog = editor.history_dialog
    with qtbot.waitSignal(dialog.diffShown, timeout=10_000):
        pass
    assert dialog.list.count() >= 1
    assert any("Drinks tea, not coffee" in line for line in dialog.diff.alignment.left)
    with qtbot.waitSignal(editor.saved, timeout=10_000):
        dialog.restore_button.click()
    assert ws.read_memory().text == original
    qtbot.waitUntil(lambda: editor.text() == original, timeout=10_000)


def test_unsaved_edits_survive_a_crash_as_a_recovery_copy(qtbot, demo_workspace, make_controller):
    ws = demo_workspace
    controller = make_controller(ws)
    editor = open_editor(qtbot, controller)
    type_at_end(editor, "- Unsaved thought\n")
    qtbot.waitUntil(lambda: controller.recovery.load("MEMORY.md") is not None, timeout=10_000)
    assert "Unsaved thought" in controller.recovery.load("MEMORY.md").text
    # The app "crashes": the editor goes away without saving. A new one offers the edits back.
    editor.hide()
    again = open_editor(qtbot, controller)
    assert "Unsaved thought" not in again.text()
    assert "Restore them" in again.bar.buttons
    again.bar.buttons["Restore them"].click()
    assert "Unsaved thought" in again.text() and again.dirty
    with qtbot.waitSignal(again.saved, timeout=10_000):
        again.save()
    assert "Unsaved thought" in ws.read_memory().text
    qtbot.waitUntil(lambda: controller.recovery.load("MEMORY.md") is None, timeout=10_000)
