"""History names who made each change and what it did: editor, pin, dream accept, outside change."""
from __future__ import annotations

from core.dream import apply_proposal, run_dream
from core.store.atomic import atomic_write
from desktop.views.memory_editor import MemoryEditor

from tests.support.dreamkit import REVIEW_NOW, review_workspace


def test_each_version_has_a_one_line_summary(qtbot, workspace, make_controller):
    ws = workspace
    review_workspace(ws)
    proposal = run_dream(ws, None, now=REVIEW_NOW).proposal
    added = next(c for c in proposal.changes if c.op == "add")
    apply_proposal(ws, proposal.id, change_ids=[added.id])                      # dream accept: +1
    controller = make_controller(ws)
    editor = MemoryEditor(controller, "MEMORY.md")
    qtbot.addWidget(editor)
    with qtbot.waitSignal(editor.loaded, timeout=10_000):
        pass
    found = editor.editor.document().find("Drinks tea, not coffee")
    found.insertText("Drinks rooibos")
    with qtbot.waitSignal(editor.saved, timeout=10_000):
        editor.save()                                                           # editor: +1 −1
    line = next(n for n, t in enumerate(editor.text().split("\n"), 1) if "Drinks rooibos" in t)
    with qtbot.waitSignal(editor.saved, timeout=10_000):
        editor.toggle_pin(line)                                                 # pin
    atomic_write(ws.root / "MEMORY.md", ws.read_memory().text + "- Written by another program\n")
    editor.show_history()
    dialog = editor.history_dialog
    with qtbot.waitSignal(dialog.entriesLoaded, timeout=10_000):
        pass
    lines = [dialog.list.item(i).text() for i in range(dialog.list.count())]
    assert lines[0].endswith("pin: changed outside Reverie after it")
    assert lines[1].endswith("editor: +1 −1 bullets")
    assert lines[2].endswith("dream accept: +1 −0 bullets")
    dialog.close()
