"""Model set-up in Settings: the fit at the configured context, download with progress, Cancel and an
honest offline message, a model server checked on save (a real llama_cpp.server, a closed port), only
the controls that apply, no Metal off macOS, times without trailing zeros."""
from __future__ import annotations

import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from core.config import load_settings
from core.llm.catalog import catalog_models
from desktop.settings_dialog import SettingsDialog

from tests.support.llm_server import free_port, running_server

QWEN = "qwen3-4b-instruct-2507-q4_k_m"
GIB = 2**30


@pytest.fixture
def dialog_for(qtbot, demo_workspace, make_controller, tmp_path, monkeypatch):
    monkeypatch.setenv("REVERIE_MODELS_DIR", str(tmp_path / "models"))    # downloads land here, not in ~/.cache
    controller = make_controller(demo_workspace, llm_factory=lambda _ws: None, index=False)

    def make() -> SettingsDialog:
        dialog = SettingsDialog(controller)
        qtbot.addWidget(dialog)
        return dialog
    return make


def choose(dialog, model_id: str) -> None:
    combo = dialog.model_combo
    combo.setCurrentIndex(next(i for i in range(combo.count()) if combo.itemData(i)[0] == model_id))


def test_qwen3_4b_is_judged_at_the_configured_context():
    at_setting = {m.id: m for m in catalog_models(8192, usable_bytes=20 * GIB)}
    native = {m.id: m for m in catalog_models(None, usable_bytes=20 * GIB)}
    assert at_setting[QWEN].fits and at_setting[QWEN].context_length == 8192
    assert "8192 tokens" in at_setting[QWEN].fit_note
    assert not native[QWEN].fits and native[QWEN].context_length == 262144      # what the dialog used to ask


def test_the_dialog_says_which_context_it_judged_the_fit_at(dialog_for):
    dialog = dialog_for()
    assert dialog.fields[("model", "context_length")].value() == 8192
    choose(dialog, QWEN)
    expected = {m.id: m.fits for m in catalog_models(8192)}[QWEN]
    assert ("· fits" in dialog.model_combo.currentText()) == expected
    assert "a context of 8,192 tokens" in dialog.model_tab.fit_note.text()
    assert "for 8192 tokens" in dialog.model_tab.fit_note.text()
    context = dialog.fields[("model", "context_length")]
    context.setValue(262144)
    context.editingFinished.emit()
    assert dialog.chosen_model() == QWEN                          # still chosen, judged again
    assert "a context of 262,144 tokens" in dialog.model_tab.fit_note.text()
    expected = {m.id: m.fits for m in catalog_models(262144)}[QWEN]
    assert ("· fits" in dialog.model_combo.currentText()) == expected


def test_saving_a_model_that_is_not_here_offers_the_download(qtbot, dialog_for, demo_workspace):
    dialog = dialog_for()
    choose(dialog, QWEN)
    handle = dialog.save()
    qtbot.waitUntil(lambda: handle.done, timeout=20_000)
    assert dialog.bar.kind == "error" and "not on this machine yet" in dialog.bar.text
    assert "Download" in dialog.bar.buttons and "reverie models download" not in dialog.bar.text
    assert not demo_workspace.paths.config_toml.exists()


def test_a_download_that_cannot_reach_the_server_says_offline(qtbot, dialog_for, monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{free_port()}")     # nothing listens there
    dialog = dialog_for()
    choose(dialog, QWEN)
    handle = dialog.download()
    assert dialog.model_tab.cancel_download.isVisibleTo(dialog)
    qtbot.waitUntil(lambda: handle.done, timeout=30_000)
    assert dialog.bar.kind == "error" and "offline" in dialog.bar.text and "cannot be reached" in dialog.bar.text
    assert not dialog.model_tab.cancel_download.isVisibleTo(dialog) and dialog.download_button.isEnabled()


class _Trickle(BaseHTTPRequestHandler):
    """A model file that arrives slowly: 1 MiB every 50 ms of a 512 MiB file."""

    def _head(self):
        self.send_response(200)
        self.send_header("Content-Length", str(512 * 2**20))
        self.end_headers()

    def do_HEAD(self):
        self._head()

    def do_GET(self):
        self._head()
        try:
            for _ in range(512):
                self.wfile.write(b"\0" * 2**20)
                time.sleep(0.05)
        except OSError:             # the client went away (cancelled)
            pass

    def log_message(self, *_args):
        pass


def test_a_download_shows_progress_and_cancel_keeps_the_partial_file(qtbot, dialog_for, monkeypatch, tmp_path):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Trickle)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{server.server_address[1]}")
        dialog = dialog_for()
        choose(dialog, QWEN)
        handle = dialog.download()
        qtbot.waitUntil(lambda: dialog.download_progress.maximum() == 1000 and dialog.download_progress.value() > 0,
                        timeout=30_000)
        assert "MiB" in dialog.download_progress.format()
        dialog.model_tab.cancel_download.click()
        qtbot.waitUntil(lambda: handle.done, timeout=30_000)
        assert "Download cancelled" in dialog.bar.text
        parts = list((tmp_path / "models").glob("*.part"))
        assert len(parts) == 1 and parts[0].stat().st_size > 0
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def test_a_server_is_checked_on_save_and_its_model_picked(qtbot, dialog_for, demo_workspace, tmp_path):
    from models import resolve_model_path

    with running_server(resolve_model_path("smollm2-135m-instruct-q4_1"), tmp_path / "server.log") as base:
        dialog = dialog_for()
        dialog.backend.setCurrentIndex(dialog.backend.findData("openai"))
        dialog.fields[("model", "base_url")].setText(base)
        handle = dialog.model_tab.check()
        qtbot.waitUntil(lambda: handle.done, timeout=30_000)
        assert "answers" in dialog.bar.text
        assert dialog.fields[("model", "server_model")].currentText() == "smollm2"
        dialog.fields[("model", "server_model")].setEditText("")          # empty: the server's first model
        with qtbot.waitSignal(dialog.saved, timeout=30_000):
            dialog.save()
    saved = load_settings(demo_workspace.paths.config_toml).model
    assert saved.backend == "openai" and saved.base_url == base and saved.server_model == "smollm2"


def test_a_server_that_does_not_answer_is_not_saved(qtbot, dialog_for, demo_workspace):
    dialog = dialog_for()
    dialog.backend.setCurrentIndex(dialog.backend.findData("openai"))
    dialog.fields[("model", "base_url")].setText(f"http://127.0.0.1:{free_port()}/v1")
    handle = dialog.save()
    qtbot.waitUntil(lambda: handle.done, timeout=30_000)
    assert dialog.bar.kind == "error" and "no model server answers" in dialog.bar.text
    assert not demo_workspace.paths.config_toml.exists()


def test_only_the_controls_of_the_chosen_engine_are_enabled(dialog_for):
    dialog = dialog_for()
    fields = dialog.fields
    assert dialog.backend.currentData() == "local"
    assert dialog.model_combo.isEnabled() and dialog.device.isEnabled()
    assert fields[("model", "idle_unload_s")].isEnabled()
    assert not fields[("model", "base_url")].isEnabled() and not dialog.model_tab.check_button.isEnabled()
    dialog.backend.setCurrentIndex(dialog.backend.findData("openai"))
    assert not dialog.model_combo.isEnabled() and not dialog.device.isEnabled()
    assert not dialog.download_button.isEnabled() and not fields[("model", "idle_unload_s")].isEnabled()
    assert fields[("model", "base_url")].isEnabled() and fields[("model", "server_model")].isEnabled()
    assert dialog.model_tab.check_button.isEnabled()
    devices = [dialog.device.itemText(i) for i in range(dialog.device.count())]
    assert any("Metal" in d for d in devices) == (sys.platform == "darwin")
    assert fields[("model", "idle_unload_s")].text() == "300"
    assert fields[("dream", "max_drop_fraction")].text() == "0.25"
