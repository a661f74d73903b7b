"""An outside edit while the person edits: a three-way merge keeps both; the tab marker and the Saved
banner follow the text."""
from __future__ import annotations

from PySide6.QtGui import QTextCursor

from desktop.views.merge import merge3

from tests.support.qt_views import open_memory_editor

BASE = "# MEMORY\n\n## Preferences\n- Drinks tea\n- Uses Helix\n\n## Projects\n- Orchard\n"


def test_merge3_keeps_edits_of_different_lines_and_refuses_the_same_line():
    mine = BASE.replace("- Drinks tea", "- Drinks rooibos")
    theirs = BASE.replace("- Uses Helix", "- Uses Neovim")
    assert merge3(BASE, mine, theirs) == BASE.replace("- Drinks tea", "- Drinks rooibos").replace(
        "- Uses Helix", "- Uses Neovim")
    assert merge3(BASE, mine, BASE.replace("- Drinks tea", "- Drinks coffee")) is None
    assert merge3(BASE, mine, mine) == mine                                   # the same edit on both sides
    both_added = merge3(BASE, BASE.replace("- Orchard\n", "- Orchard\n- Mine\n"),
                        BASE.replace("- Orchard\n", "- Orchard\n- Theirs\n"))
    assert both_added == BASE.replace("- Orchard\n", "- Orchard\n- Theirs\n- Mine\n")


def replace_line(editor, old: str, new: str) -> None:
    found = editor.editor.document().find(old)
    assert not found.isNull(), old
    found.insertText(new)


def edited_while_changed_outside(qtbot, ws, controller, outside: tuple[str, str]):
    """An editor with "Drinks rooibos" typed in, after an outside writer replaced `outside` on disk."""
    editor = open_memory_editor(qtbot, controller)
    replace_line(editor, "Drinks tea, not coffee", "Drinks rooibos")
    snap = ws.read_memory()
    ws.write_memory(snap.text.replace(*outside), snap.hash, reason="outside agent")
    with qtbot.waitSignal(editor.conflictShown, timeout=10_000):
        editor.check_disk()
    return editor


def test_merge_both_keeps_the_outside_change_and_mine(qtbot, demo_workspace, make_controller):
    ws = demo_workspace
    editor = edited_while_changed_outside(qtbot, ws, make_controller(ws), ("Uses the Helix editor", "Uses Neovim"))
    assert list(editor.bar.buttons)[:4] == ["Merge both", "Reload", "Keep mine", "Compare"]
    editor.bar.buttons["Merge both"].click()
    assert "Drinks rooibos" in editor.text() and "Uses Neovim" in editor.text() and editor.dirty
    with qtbot.waitSignal(editor.saved, timeout=10_000):
        editor.save()
    now = ws.read_memory().text
    assert "Drinks rooibos" in now and "Uses Neovim" in now and "Uses the Helix editor" not in now


def test_the_same_line_changed_on_both_sides_offers_no_merge(qtbot, demo_workspace, make_controller):
    ws = demo_workspace
    editor = edited_while_changed_outside(qtbot, ws, make_controller(ws), ("Drinks tea, not coffee", "Drinks coffee"))
    assert "Merge both" not in editor.bar.buttons and "same lines" in editor.bar.text


def test_the_dirty_marker_and_the_saved_banner_follow_the_text(qtbot, demo_workspace, make_controller):
    ws = demo_workspace
    editor = open_memory_editor(qtbot, make_controller(ws))
    marks = []
    editor.dirtyChanged.connect(marks.append)
    cursor = editor.editor.textCursor()
    cursor.movePosition(QTextCursor.MoveOperation.End)
    editor.editor.setTextCursor(cursor)
    editor.editor.insertPlainText("- one more\n")
    assert marks[-1] is True
    editor.editor.undo()                                      # back to the saved text
    assert marks[-1] is False and not editor.dirty
    editor.editor.insertPlainText("- saved line\n")
    with qtbot.waitSignal(editor.saved, timeout=10_000):
        editor.save()
    assert editor.notice.text.startswith("Saved") and marks[-1] is False
    editor.editor.insertPlainText("- after the save\n")
    assert marks[-1] is True and editor.notice.text == ""
