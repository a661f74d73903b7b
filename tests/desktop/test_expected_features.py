"""What Obsidian, VS Code and LM Studio users reach for: a new workspace from the welcome page, quick
open, tab shortcuts, hidden provenance comments (Fold and Preview remembered), clean history rows,
settings errors in the dialog's words, and a status bar that names the model just chosen."""
from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence

from tests.support.blocking_llm import no_model
from tests.support.qt_views import discard_edits

OPTIONS = {"schedule": False, "watch": False, "index": False, "llm_factory": no_model}


@pytest.fixture
def make_window(window):
    """Shown main windows with no model (conftest's `window`, which closes them at the end)."""
    def make():
        win = window(OPTIONS)
        win.show()
        return win
    return make


def test_a_new_workspace_from_the_welcome_page_has_the_full_layout(qtbot, tmp_path, make_window):
    win = make_window()
    assert win.welcome.new_button.isVisible()
    folder = tmp_path / "fresh"
    folder.mkdir()
    assert win.new_workspace(folder)
    for name in ("MEMORY.md", "memory", "sessions", "checkpoints", "handoffs", ".reverie"):
        assert (folder / name).exists(), name
    assert win.controller is not None and "MEMORY.md" in win.views


def test_quick_open_tab_shortcuts_and_fold_remembered(qtbot, demo_workspace, make_window):
    from desktop.quick_open import choices_for, matching

    root = demo_workspace.root
    choices = choices_for(demo_workspace)
    assert any(c.label == "MEMORY.md › Preferences" and c.line > 0 for c in choices)
    assert any(c.path.startswith("memory/") for c in choices) and any(c.path.startswith("sessions/") for c in choices)
    assert matching(choices, "pref")[0].label == "MEMORY.md › Preferences"
    demo_workspace.close()
    win = make_window()
    assert win.open_workspace(root)
    memory = win.views["MEMORY.md"]
    assert memory.fold_button.isChecked()                 # <!-- id… src… --> hidden by default
    memory.preview_button.setChecked(True)
    memory.fold_button.setChecked(False)
    handle = win.quick_open()
    qtbot.waitUntil(lambda: getattr(win, "quick_dialog", None) is not None, timeout=10_000)
    dialog = win.quick_dialog
    dialog.query.setText("decisions")
    qtbot.keyClick(dialog.query, Qt.Key.Key_Return)
    assert win.current_view() is memory and handle is not None
    win.open_view("search", "")
    win.open_view("dreams", "")
    assert win.tabs.count() >= 3
    at = win.tabs.currentIndex()
    assert QKeySequence("Ctrl+PgDown") in win.next_tab_action.shortcuts()
    assert QKeySequence("Ctrl+Tab") in win.next_tab_action.shortcuts()
    win.next_tab_action.trigger()
    assert win.tabs.currentIndex() == (at + 1) % win.tabs.count()
    win.previous_tab_action.trigger()
    assert win.tabs.currentIndex() == at
    discard_edits(win.views.values())
    win.close()
    again = make_window()
    assert again.open_workspace(root)
    memory = again.views["MEMORY.md"]
    assert not memory.fold_button.isChecked() and memory.preview_button.isChecked()


def test_history_rows_have_no_internal_ids_and_distinct_times():
    from core.store.history import HistoryEntry
    from desktop.views.history_summary import summaries

    class Now:
        text, hash = "- a\n- b\n- c\n", "h3"
    entries = [HistoryEntry("20261207T010203456000Z-11-h3", "MEMORY.md", "2026-12-07T01:02:03+00:00",
                            "restore version from 2026-12-07 (20261207T010203123000Z-11-h2)", "h2", "h3", 4),
               HistoryEntry("20261207T010203123000Z-11-h2", "MEMORY.md", "2026-12-07T01:02:03+00:00",
                            "edited in Reverie", "h1", "h2", 4)]
    texts = {entries[0].id: "- a\n- b\n", entries[1].id: "- a\n"}
    lines = summaries(entries, lambda e: texts[e.id], Now())
    assert lines[0].startswith("2026-12-07 01:02:03.456") and lines[1].startswith("2026-12-07 01:02:03.123")
    assert all("Z-11" not in line for line in lines)


def test_settings_errors_in_the_dialogs_words_and_the_status_bar_follows(qtbot, demo_workspace, make_controller):
    from desktop.settings_dialog import SettingsDialog, in_gui_words
    from desktop.status_bar import StatusBar

    text = in_gui_words("[dream] idle_minutes must not be negative (-5)")
    assert "[dream]" not in text and "idle_minutes" not in text and "tab" in text
    controller = make_controller(demo_workspace, llm_factory=no_model, index=False)
    status = StatusBar()
    qtbot.addWidget(status)
    controller.modelState.connect(status.model.setText)
    dialog = SettingsDialog(controller)
    qtbot.addWidget(dialog)
    key = next(k for k in dialog.fields if k == ("dream", "idle_minutes"))
    widget = dialog.fields[key]
    if hasattr(widget, "setMinimum"):
        widget.setMinimum(-10)
        widget.setValue(-5)
        dialog.save()
        qtbot.waitUntil(lambda: "Not saved" in dialog.bar.text, timeout=5_000)
        assert "idle_minutes" not in dialog.bar.text and "[dream]" not in dialog.bar.text
        widget.setValue(10)
    new = demo_workspace.settings.replace("model", model="gemma3-270m-it-q4_k_m")
    with qtbot.waitSignal(controller.modelState, timeout=10_000):
        controller.apply_settings(new)
    assert "gemma3-270m-it-q4_k_m" in status.model.text()
