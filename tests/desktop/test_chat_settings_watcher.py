"""The chat panel (the in-app agent), the settings dialog, and the file watcher's debounce."""
from __future__ import annotations

import json
import os
import time

import pytest

from core.config import load_settings
from desktop.settings_dialog import SettingsDialog
from desktop.views.chat_panel import ChatPanel
from desktop.watcher import WorkspaceWatcher, relevant

from tests.support.fakes import ScriptedLLM, session_llm
from tests.support.qt_views import discard_edits
from tests.support.blocking_llm import BlockingLLM


def chat(qtbot, controller) -> ChatPanel:
    panel = ChatPanel(controller)
    qtbot.addWidget(panel)
    return panel


def test_a_chat_turn_uses_the_tools_answers_and_counts_as_agent_activity(qtbot, demo_workspace, make_controller):
    llm = ScriptedLLM([json.dumps({"tool": "memory_get", "input": "MEMORY.md"}),
                       json.dumps({"tool": "answer", "input": "Maya drinks tea, not coffee."})])
    controller = make_controller(demo_workspace, llm_factory=lambda _ws: llm, index=False)
    panel = chat(qtbot, controller)
    with qtbot.waitSignal(panel.turnFinished, timeout=60_000) as done:
        panel.send("What does Maya drink?")
    result = done.args[0]
    assert result.answer == "Maya drinks tea, not coffee."
    assert [call["name"] for call in result.tool_calls] == ["memory_get"]
    text = panel.transcript.toPlainText()
    assert "What does Maya drink?" in text and "memory_get" in text and "tea, not coffee" in text
    assert controller.monitor.idle_for(controller.clock()) < 60        # the agent is active now
    assert (demo_workspace.paths.private_dir / "activity.jsonl").exists()   # the shared activity log
    assert panel.end_button.isEnabled() and panel.send_button.isEnabled()


def test_stop_cancels_a_turn(qtbot, demo_workspace, make_controller):
    llm = BlockingLLM()
    controller = make_controller(demo_workspace, llm_factory=lambda _ws: llm, index=False)
    panel = chat(qtbot, controller)
    panel.send("Summarise the project")
    assert llm.entered.wait(30) and panel.busy and not panel.send_button.isEnabled()
    with qtbot.waitSignal(panel.turnFinished, timeout=20_000):
        panel.stop()
    assert "stopped." in panel.transcript.toPlainText() and panel.send_button.isEnabled()


def test_without_a_model_the_panel_says_so(qtbot, demo_workspace, make_controller):
    controller = make_controller(demo_workspace, llm_factory=lambda _ws: None, index=False)
    panel = chat(qtbot, controller)
    with qtbot.waitSignal(panel.turnFinished, timeout=20_000):
        panel.send("hello")
    assert "no model configured" in panel.transcript.toPlainText()


@pytest.mark.slow
def test_a_chat_turn_with_the_real_bundled_model(qtbot, demo_workspace, make_controller):
    controller = make_controller(demo_workspace, index=False)       # the default: the bundled SmolLM2
    panel = chat(qtbot, controller)
    with qtbot.waitSignal(panel.turnFinished, timeout=300_000) as done:
        panel.send("What does Maya drink?")
    result = done.args[0]
    assert not isinstance(result, Exception), result
    assert result.answer.strip() and result.steps >= 1
    assert "(ready)" in controller.model.state
    with qtbot.waitSignal(panel.sessionEnded, timeout=300_000):
        panel.end_session()
    assert controller.ws.sessions()


def test_settings_dialog_saves_through_the_workspace(qtbot, demo_workspace, make_controller):
    ws = demo_workspace
    controller = make_controller(ws, llm_factory=lambda _ws: None, index=False)
    dialog = SettingsDialog(controller)
    qtbot.addWidget(dialog)
    assert dialog.model_combo.count() >= 2                     # the catalog, with the bundled models
    assert dialog.chosen_model() == ws.settings.model.model
    dialog.fields[("dream", "idle_minutes")].setValue(3.5)
    dialog.fields[("compaction", "trigger_messages")].setValue(40)
    dialog.device.setCurrentIndex(2)                           # CPU only
    dialog.fields[("model", "context_length")].setValue(4096)
    with qtbot.waitSignal(dialog.saved, timeout=5_000):
        dialog.save()
    saved = load_settings(ws.paths.config_toml)
    assert saved.dream.idle_minutes == 3.5 and saved.compaction.trigger_messages == 40
    assert saved.model.n_gpu_layers == 0 and saved.model.context_length == 4096
    assert controller.monitor.idle_seconds_needed == 3.5 * 60


def test_settings_dialog_refuses_a_bad_model_and_keeps_the_file(qtbot, demo_workspace, make_controller, tmp_path):
    ws = demo_workspace
    controller = make_controller(ws, llm_factory=lambda _ws: None, index=False)
    bogus = tmp_path / "not-a-model.gguf"
    bogus.write_bytes(b"this is not a GGUF file at all" * 100)
    for backend, model in (("local", str(bogus)), ("local", str(tmp_path / "missing.gguf")),
                           ("carrier-pigeon", "smollm2-135m-instruct-q4_1")):
        dialog = SettingsDialog(controller)
        qtbot.addWidget(dialog)
        dialog.backend.addItem(backend, backend)
        dialog.backend.setCurrentIndex(dialog.backend.count() - 1)
        dialog.model_combo.setEditText(model)
        handle = dialog.save()     # None when the settings themselves are refused (an unknown backend)
        if handle is not None:
            qtbot.waitUntil(lambda: handle.done, timeout=20_000)
        assert dialog.bar.kind == "error" and "Not saved" in dialog.bar.text, (backend, model)
        assert not ws.paths.config_toml.exists()
    assert "not-a-model.gguf" in dialog.bar.text or "Backend" in dialog.bar.text


def test_watcher_debounces_a_burst_into_one_signal(qtbot, tmp_path):
    (tmp_path / "memory").mkdir()
    (tmp_path / ".reverie" / "history").mkdir(parents=True)
    watcher = WorkspaceWatcher(tmp_path, debounce_ms=150, max_wait_ms=2000)
    batches = []
    watcher.filesChanged.connect(batches.append)
    watcher.start()
    try:
        time.sleep(0.2)
        with qtbot.waitSignal(watcher.filesChanged, timeout=10_000):
            for i in range(20):
                with open(tmp_path / "memory" / "2026-12-01.md", "a") as handle:
                    handle.write(f"- line {i}\n")
                (tmp_path / ".reverie" / "history" / f"x{i}.snap").write_text("ignored")
        qtbot.wait(400)
        assert len(batches) == 1
        assert batches[0] == ["memory/2026-12-01.md"]
    finally:
        watcher.stop()
    assert not watcher.running


def test_which_paths_the_views_care_about():
    assert relevant("MEMORY.md") and relevant("memory/2026-12-01.md") and relevant("sessions/s.log.jsonl")
    assert relevant(".reverie/flushes.jsonl") and relevant(".reverie/proposals/d-1.json")
    assert not relevant(".reverie/index.db") and not relevant(".reverie/history/MEMORY.md/x.snap")
    assert not relevant(".MEMORY.md.abc.tmp") and not relevant(".reverie/locks/MEMORY.md.lock")
    assert not relevant(os.path.join("..", "outside"))


def test_quitting_with_an_open_chat_session_ends_it(qtbot, demo_workspace):
    """Closing the window while the chat holds an unfinished session saves it without the model: its log,
    a summary read off the messages (sessions/cache.jsonl) and the dream gates' session count, off the main
    thread, before the workspace closes. No flush runs: nothing writes after the window is gone."""
    import threading

    from PySide6.QtCore import QSettings

    from core.dream.state import load_state
    from desktop.main_window import MainWindow

    root = demo_workspace.root
    sessions_before = load_state(demo_workspace.paths).sessions_since
    cache_before = len(demo_workspace.session_cache.read().objects)
    demo_workspace.close()
    threads: list[str] = []
    llm = session_llm(threads)
    win = MainWindow(QSettings(), controller_options={"schedule": False, "watch": False, "index": False,
                                                      "llm_factory": lambda _ws: llm})
    win.show()
    assert win.open_workspace(root)
    win.toggle_chat()
    with qtbot.waitSignal(win.chat.turnFinished, timeout=60_000) as done:
        win.chat.send("What does Maya drink?")
    assert done.args[0].answer == "Maya drinks tea."
    session_id = win.chat.agent.session_id
    threads.clear()
    discard_edits(win.views.values())
    assert win.close()
    assert win.controller is None and win.chat is None

    from core.workspace import Workspace

    ws = Workspace.open(root)
    try:
        cache = ws.session_cache.read().objects
        assert len(cache) == min(cache_before + 1, 10)
        assert cache[-1]["session_id"] == session_id and cache[-1]["summary"].strip()
        assert load_state(ws.paths).sessions_since == sessions_before + 1
        flushed = [p for p in ws.paths.memory_dir.glob("*.md") if "green tea in the afternoon" in p.read_text("utf-8")]
        assert flushed == []                                              # no flush on the way out
        assert [r["content"] for r in ws.read_session(session_id).objects][0] == "What does Maya drink?"
    finally:
        ws.close()
    assert threads == [] and threading.main_thread().name not in threads   # quitting asked the model nothing
    win.deleteLater()


@pytest.mark.slow
def test_quitting_with_an_open_chat_session_and_the_real_bundled_model(qtbot, demo_workspace):
    """The same quit with the bundled SmolLM2: the real flush and summary run before the workspace closes."""
    from PySide6.QtCore import QSettings

    from core.dream.state import load_state
    from core.workspace import Workspace
    from desktop.main_window import MainWindow

    root = demo_workspace.root
    sessions_before = load_state(demo_workspace.paths).sessions_since
    demo_workspace.close()
    win = MainWindow(QSettings(), controller_options={"schedule": False, "watch": False, "index": False})
    win.show()
    assert win.open_workspace(root)
    win.toggle_chat()
    with qtbot.waitSignal(win.chat.turnFinished, timeout=300_000) as done:
        win.chat.send("What does Maya drink?")
    assert not isinstance(done.args[0], Exception), done.args[0]
    session_id = win.chat.agent.session_id
    discard_edits(win.views.values())
    assert win.close()
    ws = Workspace.open(root)
    try:
        cache = ws.session_cache.read().objects
        assert cache[-1]["session_id"] == session_id and cache[-1]["summary"].strip()
        assert load_state(ws.paths).sessions_since == sessions_before + 1
        assert ws.read_session(session_id).objects
    finally:
        ws.close()
    win.deleteLater()


def test_settings_dialog_shows_an_older_search_mode_name_and_saves_todays(qtbot, demo_workspace, make_controller):
    ws = demo_workspace
    ws.paths.config_toml.write_text('[search]\ndefault_mode = "fts"\n', encoding="utf-8")
    ws.settings = load_settings(ws.paths.config_toml)
    controller = make_controller(ws, llm_factory=lambda _ws: None, index=False)
    dialog = SettingsDialog(controller)
    qtbot.addWidget(dialog)
    assert dialog.search_mode.currentText() == "keyword"
    dialog.search_mode.setCurrentIndex(dialog.search_mode.findData("meaning"))
    with qtbot.waitSignal(dialog.saved, timeout=5_000):
        dialog.save()
    assert load_settings(ws.paths.config_toml).search.default_mode == "meaning"
