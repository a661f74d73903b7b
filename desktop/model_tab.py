"""The Model tab of Settings: which model, on which engine and device, and whether it fits.

- Each catalog model's fit is judged at the context length the tab shows (the setting), not
  at the model's native context (262k for Qwen3), and the tab says which context it assumed;
  a changed context is judged again.
- A catalog model is downloaded from here, with progress and Cancel (the partial file is kept
  to resume); a failure to reach the server says "offline".
- An OpenAI-compatible server is checked with "Check server" and again on save: connect, list
  its models, pick one (the first, when none is named). A failure is shown and nothing is saved.
- What does not apply to the chosen engine is disabled; Metal is offered on macOS only.
"""
from __future__ import annotations

import sys

from PySide6.QtWidgets import (QComboBox, QFileDialog, QFormLayout, QHBoxLayout, QLabel, QLineEdit, QProgressBar,
                               QPushButton, QWidget)

from core.errors import ConfigError, CoreError, ModelCancelled, ModelNotFoundError

if sys.platform == "darwin":
    DEVICES = (("Automatic (Metal on Apple Silicon, else CPU)", None), ("Metal / GPU: all layers", -1),
               ("CPU only", 0))
else:
    DEVICES = (("Automatic (CPU on this system)", None), ("GPU: all layers (a GPU build of llama.cpp)", -1),
               ("CPU only", 0))
LOCAL_ONLY = ("idle_unload_s",)
SERVER_ONLY = ("base_url", "server_model", "api_key")


def catalog_rows(context_length: int) -> list[tuple[str, str, str]]:
    """(model id, label, fit note) for every catalog model: here or not, and whether it fits at
    `context_length` tokens."""
    from core.llm.catalog import catalog_models

    try:
        models = catalog_models(context_length)
    except CoreError:            # an unreadable catalog: the person can still type a GGUF path
        return []
    return [(m.id, f"{m.name} · {m.size_text} · {'here' if m.present else 'not downloaded'}"
                   + (" · fits" if m.fits else " · too large for this machine"), m.fit_note) for m in models]


def check_server(model) -> tuple[list[str], str]:
    """Connect to the server `model` (ModelSettings) names and list its models: (names, the one to use).
    Raises CoreError with what is wrong."""
    from core.llm import open_client

    client = open_client(model)
    try:
        names = client.list_models()
    finally:
        client.close()
    if not names:
        raise ConfigError(f"the server at {model.base_url} answers but offers no model; load one in it first")
    wanted = model.server_model.strip()
    if wanted and wanted not in names:
        raise ConfigError(f"the server at {model.base_url} has no model {wanted!r}; it has {', '.join(names)}")
    return names, wanted or names[0]


class ModelTab(QWidget):
    def __init__(self, dialog, settings, field_widget):
        super().__init__()
        self.dialog = dialog
        self.controller = dialog.controller
        self.download_task = None
        model = settings.model
        form = QFormLayout(self)
        self.model_combo = QComboBox()
        self.model_combo.setEditable(True)     # a GGUF path typed or picked is a model too
        self.browse = QPushButton("GGUF file…")
        self.browse.clicked.connect(self._browse)
        self.download_button = QPushButton("Download")
        self.download_button.clicked.connect(self.download)
        self.cancel_download = QPushButton("Cancel download")
        self.cancel_download.clicked.connect(self._cancel_download)
        self.cancel_download.hide()
        self.download_progress = QProgressBar()
        self.download_progress.hide()
        row = QHBoxLayout()
        row.addWidget(self.model_combo, 1)
        row.addWidget(self.browse)
        row.addWidget(self.download_button)
        form.addRow("Model", row)
        progress = QHBoxLayout()
        progress.addWidget(self.download_progress, 1)
        progress.addWidget(self.cancel_download)
        form.addRow("", progress)
        self.fit_note = QLabel("")
        self.fit_note.setWordWrap(True)
        form.addRow("", self.fit_note)
        self.check_note = QLabel("")            # what `reverie models check` measured for this model
        self.check_note.setWordWrap(True)
        form.addRow("Dream judgment", self.check_note)
        self.backend = QComboBox()
        self.backend.addItem("Local (llama.cpp, in a worker process)", "local")
        self.backend.addItem("A model server I run (OpenAI-compatible)", "openai")
        self.backend.setCurrentIndex(max(0, self.backend.findData(model.backend)))
        form.addRow("Engine", self.backend)
        self.device = QComboBox()
        for label, layers in DEVICES:
            self.device.addItem(label, layers)
        self.device.setCurrentIndex(next((i for i, (_l, v) in enumerate(DEVICES) if v == model.n_gpu_layers), 0))
        form.addRow("Device", self.device)
        self.fields = {}
        for name, label in (("context_length", "Context length (tokens)"), ("base_url", "Server URL"),
                            ("server_model", "Server model name"), ("api_key", "Server API key"),
                            ("idle_unload_s", "Unload the model after idle (s)"),
                            ("request_timeout_s", "Request timeout (s)")):
            if name == "server_model":
                widget = QComboBox()
                widget.setEditable(True)
                widget.setEditText(model.server_model)
                widget.lineEdit().setPlaceholderText("empty: the first model the server lists")
            else:
                widget = field_widget(name, getattr(model, name))
            if name == "api_key":
                widget.setEchoMode(QLineEdit.EchoMode.Password)
            self.fields[name] = widget
            form.addRow(label, widget)
            if name == "server_model":
                self.check_button = QPushButton("Check server")
                self.check_button.setToolTip("Connect to the server and list its models")
                self.check_button.clicked.connect(self.check)
                form.addRow("", self.check_button)
        self.context = self.fields["context_length"]
        self.context.editingFinished.connect(self.judge_fit)
        self.model_combo.currentIndexChanged.connect(lambda _i: self._show_fit())
        self.backend.currentIndexChanged.connect(lambda _i: self.follow_engine())
        self.judge_fit(select=model.model)
        self.follow_engine()

    # ----- which model, and whether it fits -----------------------------------------------------------
    def judge_fit(self, select: str | None = None) -> None:
        """Label every catalog model with its fit at the context length shown now."""
        keep = select if select is not None else self.chosen_model()
        context = self.context.value()
        self.model_combo.blockSignals(True)
        self.model_combo.clear()
        for model_id, label, note in catalog_rows(context):
            self.model_combo.addItem(label, (model_id, note))
        index = next((i for i in range(self.model_combo.count()) if self.model_combo.itemData(i)[0] == keep), -1)
        if index >= 0:
            self.model_combo.setCurrentIndex(index)
        else:
            self.model_combo.setEditText(keep)
        self.model_combo.blockSignals(False)
        self._show_fit()

    def _show_fit(self) -> None:
        data = self.model_combo.currentData()
        text = self.model_combo.currentText()
        note = data[1] if data and self.model_combo.findText(text) >= 0 else ""
        self.fit_note.setText(f"Fit judged at a context of {self.context.value():,} tokens (the setting below)"
                              + (f": {note}" if note else "."))
        self.show_check()

    def show_check(self) -> None:
        """The stored verdict of `reverie models check` on the chosen model, in plain words."""
        from core.dream import model_check_words

        self.check_note.setText(f"{self.chosen_model() or 'This model'}: {model_check_words(self.chosen_model())}")

    def chosen_model(self) -> str:
        text = self.model_combo.currentText()
        index = self.model_combo.findText(text)
        return self.model_combo.itemData(index)[0] if index >= 0 else text.strip()

    def _browse(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "A GGUF model file", "", "GGUF models (*.gguf)")
        if path:
            self.model_combo.setEditText(path)

    def follow_engine(self) -> None:
        """Enable only what the chosen engine uses."""
        local = self.backend.currentData() == "local"
        for widget in (self.model_combo, self.browse, self.download_button, self.device):
            widget.setEnabled(local)
        for name in LOCAL_ONLY:
            self.fields[name].setEnabled(local)
        for name in SERVER_ONLY:
            self.fields[name].setEnabled(not local)
        self.check_button.setEnabled(not local)

    # ----- download ----------------------------------------------------------------------------------
    def download(self):
        """Fetch the chosen catalog model (resumable, sha256-checked) with a progress bar and Cancel."""
        from core.llm.catalog import catalog_model, download_model

        bar, model_id = self.dialog.bar, self.chosen_model()
        try:
            model = catalog_model(model_id)
        except CoreError as exc:      # a GGUF path or a typo: only catalog models can be fetched
            bar.show_message(f"Only catalog models can be downloaded here: {exc}", "warning")
            return None
        if model.bundled or model.present:
            bar.show_message(f"{model.name} is already on this machine.", "info")
            return None
        self.download_progress.setRange(0, 0)
        self.download_progress.show()
        self.cancel_download.show()
        self.download_button.setEnabled(False)
        bar.show_message(f"Downloading {model.name}…", "info", closable=False)

        def job(ctx):
            # The progress callback is also the cancel point: the partial file is kept for a resume.
            return download_model(model_id, progress=lambda done, total: ctx.progress((done, total)))

        def progress(value) -> None:
            done, total = value
            if total:
                self.download_progress.setRange(0, 1000)
                self.download_progress.setValue(int(1000 * done / total))
                self.download_progress.setFormat(f"{done / 2**20:.0f} / {total / 2**20:.0f} MiB")

        def finished(path) -> None:
            self._download_over()
            bar.show_message(f"Downloaded to {path}.", "info")
            self.judge_fit()

        def failed(exc) -> None:
            self._download_over()
            if isinstance(exc, ModelCancelled):
                bar.show_message("Download cancelled; what arrived is kept, and Download resumes it.", "info")
            else:
                bar.show_message(f"Download failed: {exc}", "error")
        self.download_task = self.controller.submit(job, name="download model", on_progress=progress,
                                                    on_finished=finished, on_failed=failed)
        return self.download_task

    def _cancel_download(self) -> None:
        if self.download_task is not None and not self.download_task.done:
            self.download_task.cancel("cancelled by the person")

    def _download_over(self) -> None:
        self.download_button.setEnabled(self.backend.currentData() == "local")
        self.download_progress.hide()
        self.cancel_download.hide()

    # ----- the server ----------------------------------------------------------------------------------
    def server_models(self, names: list[str], chosen: str) -> None:
        box = self.fields["server_model"]
        box.clear()
        box.addItems(names)
        box.setEditText(chosen)

    def check(self):
        """Connect to the server the fields name and list its models into the model-name box."""
        try:
            model = self.dialog.collect().model
        except CoreError as exc:
            self.dialog.bar.show_message(f"Not checked: {exc}", "error")
            return None
        self.dialog.bar.show_message(f"Connecting to {model.base_url}…", "info", closable=False)

        def done(result) -> None:
            names, chosen = result
            self.server_models(names, chosen)
            self.dialog.bar.show_message(f"The server at {model.base_url} answers; it offers {len(names)} model(s). "
                                         f"Using {chosen}.", "info")
        return self.controller.submit(lambda _ctx: check_server(model), name="check server", on_finished=done,
                                      on_failed=lambda exc: self.dialog.bar.show_message(f"Server check failed: {exc}",
                                                                                         "error"))

    def verify(self, settings):
        """The settings to save once the model they name is checked (run on a task; raises CoreError).
        A local model file is opened (not loaded); a server is asked for its models."""
        from core.llm import open_client

        model = settings.model
        if model.backend == "openai":
            _names, chosen = check_server(model)
            return settings.replace("model", server_model=chosen)
        if not model.model.strip():
            raise ConfigError("choose a model: a catalog id or a GGUF file")
        missing = self._missing(model.model)
        if missing:
            raise ModelNotFoundError(f"{missing} is not on this machine yet")
        open_client(model).close()
        return settings

    @staticmethod
    def _missing(model_id: str) -> str:
        """The name of the catalog model `model_id` when it is to be downloaded, else ""."""
        from core.llm.catalog import catalog_model

        try:
            model = catalog_model(model_id)
        except CoreError:            # a GGUF path: open_client says what is wrong with it
            return ""
        return "" if model.present or model.bundled else model.name

    def offer_download(self, exc) -> bool:
        """A catalog model that is not here: say so with a Download button rather than a command to run."""
        if not isinstance(exc, ModelNotFoundError) or self.model_combo.findText(self.model_combo.currentText()) < 0:
            return False
        self.dialog.bar.show_message(f"Not saved: {exc}. Download it, then save.", "error",
                                     actions=[("Download", self.download)])
        return True
