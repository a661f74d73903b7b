"""Settings shows what `reverie models check` measured for the chosen model, in plain words."""
from __future__ import annotations

import pytest

from core.dream.judgment import model_check
from desktop.settings_dialog import SettingsDialog

SMOL = "smollm2-135m-instruct-q4_1"


@pytest.fixture
def dialog(qtbot, demo_workspace, make_controller, tmp_path, monkeypatch):
    monkeypatch.setenv("REVERIE_MODELS_DIR", str(tmp_path / "models"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))       # the stored verdicts, not the person's
    controller = make_controller(demo_workspace, llm_factory=lambda _ws: None, index=False)

    def make() -> SettingsDialog:
        made = SettingsDialog(controller)
        qtbot.addWidget(made)
        combo = made.model_combo
        combo.setCurrentIndex(next(i for i in range(combo.count()) if combo.itemData(i)[0] == SMOL))
        return made
    return make


def test_the_dialog_says_whether_the_model_was_checked_and_what_for(dialog):
    assert "not checked yet" in dialog().model_tab.check_note.text()
    model_check.store_check(SMOL, {"use_for": ["relations"], "checked": "2026-12-07", "sample": "30 lines",
                                   "kinds": {"model": 0.31, "heads": 0.88}, "relations": {"model": 0.85, "heads": 0.8}})
    note = dialog().model_tab.check_note.text()
    assert note.startswith(SMOL) and "good enough for relations, not for kinds" in note
