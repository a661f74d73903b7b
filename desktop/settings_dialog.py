"""Settings: the model (from the catalog, with download progress), Metal/CPU, context length,
the thresholds and schedule of core.config (compaction, eviction, dream gates), and the idle
time before a dream.

Values are the workspace's `.reverie/config.toml` (core.config.Settings); saving goes
through `Workspace.save_settings`, and a bad value is refused with core's message.
"""
from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDialog, QDialogButtonBox, QDoubleSpinBox, QFileDialog,
                               QFormLayout, QHBoxLayout, QLabel, QLineEdit, QProgressBar, QPushButton, QSpinBox,
                               QTabWidget, QVBoxLayout, QWidget)

from core.errors import ConfigError, CoreError
from desktop.views.bars import MessageBar

TABS = {
    "Harness": [("compaction", "trigger_messages", "Compact after (messages)"),
                ("compaction", "trigger_tokens", "… or after (tokens)"),
                ("compaction", "keep_messages", "Messages kept after compaction"),
                ("compaction", "keep_tokens", "… or a token budget kept (0 = use messages)"),
                ("compaction", "flush_before", "Flush durable facts before compacting"),
                ("compaction", "offload_before", "Offload raw messages before compacting"),
                ("truncation", "enabled", "Truncate long tool arguments"),
                ("truncation", "max_arg_chars", "Arguments longer than (chars)"),
                ("eviction", "threshold_tokens", "Evict tool results over (tokens, the model's own count)"),
                ("eviction", "preview_chars", "Keep of an evicted result (chars, head and tail)"),
                ("overflow", "enabled", "Recover from context overflow (compact, retry once)"),
                ("memory", "memory_md_tokens", "MEMORY.md budget (tokens)"),
                ("memory", "anchor_every_steps", "Re-inject the anchor every (steps)")],
    "Dreaming": [("dream", "idle_minutes", "Agent idle before a dream (minutes)"),
                 ("dream", "gate_hours", "Dream after (hours since the last; the first: since first opened)"),
                 ("dream", "gate_sessions", "… or after (sessions ended)"),
                 ("dream", "maintenance_hours", "Maintenance tick every (hours)"),
                 ("dream", "early_dream_min_minutes", "Early dream at most every (minutes)"),
                 ("dream", "max_drop_fraction", "Hold a proposal dropping more than (fraction)"),
                 ("dream", "auto_apply_safe", "Apply proposals no guard held without review"),
                 ("memory", "near_duplicate_cosine", "Near-duplicate threshold (cosine)"),
                 ("dream", "relevance_threshold", "Suggest dropping bullets unrelated to recent work under (cosine, 0 = off)"),
                 ("dream", "relevance_days", "… recent work: the last (days)"),
                 ("retention", "archive_after_days", "Archive daily logs after (days)"),
                 ("retention", "prune_sessions_after_days", "Prune session logs after (days)")],
    "Search": [("search", "embedding_model", "Embedding model (empty: the bundled all-MiniLM-L6-v2)"),
               ("search", "recency_half_life_days", "Recency half-life (days, 0 = off)")],
}
# Why a new workspace is not dreamed over at once (the autoDream chapter's trigger starts its clock
# when the memory is created); shown under the dream gates.
GATE_NOTE = ("The 24-hour clock starts when the workspace is first opened, so the first scheduled dream "
             "comes a day later (or after the sessions above, or when a flush asks for one early). "
             "\"Dream now\" always runs at once.")
DEVICES = (("Automatic (Metal on Apple Silicon, else CPU)", None), ("Metal / GPU: all layers", -1), ("CPU only", 0))


def catalog_rows() -> list[tuple[str, str]]:
    """(model id, label) for every catalog model: present here or not, and whether it fits."""
    from core.llm.catalog import catalog_models

    try:
        models = catalog_models()
    except CoreError:            # an unreadable catalog: the person can still type a GGUF path
        return []
    return [(m.id, f"{m.name} · {m.size_text} · {'here' if m.present else 'not downloaded'}"
                   + ("" if m.fits else " · too large for this machine")) for m in models]


def _field_widget(value):
    if isinstance(value, bool):
        widget = QCheckBox()
        widget.setChecked(value)
    elif isinstance(value, int):
        widget = QSpinBox()
        widget.setRange(0, 2_000_000_000)
        widget.setValue(value)
    elif isinstance(value, float):
        widget = QDoubleSpinBox()
        widget.setDecimals(3)
        widget.setRange(0.0, 1_000_000.0)
        widget.setValue(value)
    else:
        widget = QLineEdit(str(value))
    return widget


def _value(widget):
    if isinstance(widget, QCheckBox):
        return widget.isChecked()
    if isinstance(widget, (QSpinBox, QDoubleSpinBox)):
        return widget.value()
    return widget.text()


class SettingsDialog(QDialog):
    saved = Signal(object)          # the new Settings

    def __init__(self, controller, parent=None):
        super().__init__(parent)
        self.controller = controller
        self.settings = controller.ws.settings
        self.setWindowTitle("Settings")
        self.resize(640, 560)
        self.fields: dict[tuple[str, str], QWidget] = {}
        self.bar = MessageBar()
        tabs = QTabWidget()
        tabs.addTab(self._model_tab(), "Model")
        for title, rows in TABS.items():
            page, form = QWidget(), QFormLayout()
            page.setLayout(form)
            for section, name, label in rows:
                widget = _field_widget(getattr(getattr(self.settings, section), name))
                self.fields[(section, name)] = widget
                form.addRow(label, widget)
            if title == "Dreaming":
                note = QLabel(GATE_NOTE)
                note.setWordWrap(True)
                form.addRow(note)
            tabs.addTab(page, title)
        self.tabs = tabs
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.save)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.bar)
        layout.addWidget(tabs, 1)
        layout.addWidget(buttons)

    # ----- the model tab ---------------------------------------------------------------------------
    def _model_tab(self) -> QWidget:
        model = self.settings.model
        page, form = QWidget(), QFormLayout()
        page.setLayout(form)
        self.model_combo = QComboBox()
        self.model_combo.setEditable(True)     # a GGUF path typed or picked is a model too
        for model_id, label in catalog_rows():
            self.model_combo.addItem(label, model_id)
        index = self.model_combo.findData(model.model)
        if index >= 0:
            self.model_combo.setCurrentIndex(index)
        else:
            self.model_combo.setEditText(model.model)
        browse = QPushButton("GGUF file…")
        browse.clicked.connect(self._browse)
        self.download_button = QPushButton("Download")
        self.download_button.clicked.connect(self.download)
        self.download_progress = QProgressBar()
        self.download_progress.hide()
        row = QHBoxLayout()
        row.addWidget(self.model_combo, 1)
        row.addWidget(browse)
        row.addWidget(self.download_button)
        form.addRow("Model", row)
        form.addRow("", self.download_progress)
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
        for name, label in (("context_length", "Context length (tokens)"), ("base_url", "Server URL"),
                            ("server_model", "Server model name"), ("api_key", "Server API key"),
                            ("idle_unload_s", "Unload the model after idle (s)"),
                            ("request_timeout_s", "Request timeout (s)")):
            widget = _field_widget(getattr(model, name))
            if name == "api_key":
                widget.setEchoMode(QLineEdit.EchoMode.Password)
            self.fields[("model", name)] = widget
            form.addRow(label, widget)
        mode = QComboBox()
        for key, title in (("hybrid", "hybrid"), ("fts", "keyword"), ("vector", "meaning")):
            mode.addItem(title, key)
        mode.setCurrentIndex(max(0, mode.findData(self.settings.search.default_mode)))
        self.search_mode = mode
        form.addRow("Default search", mode)
        form.addRow(QLabel("Catalog models not on this machine are fetched from Hugging Face when online."))
        return page

    def chosen_model(self) -> str:
        text = self.model_combo.currentText()
        index = self.model_combo.findText(text)
        return self.model_combo.itemData(index) if index >= 0 else text.strip()

    def _browse(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "A GGUF model file", "", "GGUF models (*.gguf)")
        if path:
            self.model_combo.setEditText(path)

    def download(self):
        """Fetch the chosen catalog model (resumable, sha256-checked) with a progress bar."""
        from core.llm.catalog import catalog_model, download_model

        model_id = self.chosen_model()
        try:
            model = catalog_model(model_id)
        except CoreError as exc:      # a GGUF path or a typo: only catalog models can be fetched
            self.bar.show_message(f"Only catalog models can be downloaded here: {exc}", "warning")
            return None
        if model.bundled or model.present:
            self.bar.show_message(f"{model.name} is already on this machine.", "info")
            return None
        self.download_progress.setRange(0, 0)
        self.download_progress.show()
        self.download_button.setEnabled(False)

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
            self.download_button.setEnabled(True)
            self.download_progress.hide()
            self.bar.show_message(f"Downloaded to {path}.", "info")

        def failed(exc) -> None:
            self.download_button.setEnabled(True)
            self.download_progress.hide()
            self.bar.show_message(f"Download failed: {exc}", "error")
        self.download_task = self.controller.submit(job, name="download model", on_progress=progress,
                                                    on_finished=finished, on_failed=failed)
        return self.download_task

    # ----- saving -------------------------------------------------------------------------------------
    def collect(self):
        """The Settings the dialog shows now (ConfigError for an invalid value)."""
        sections: dict[str, dict] = {}
        for (section, name), widget in self.fields.items():
            sections.setdefault(section, {})[name] = _value(widget)
        sections.setdefault("model", {}).update(model=self.chosen_model(), backend=self.backend.currentData(),
                                                n_gpu_layers=self.device.currentData())
        sections["search"] = {"default_mode": self.search_mode.currentData()}
        settings = self.settings
        for section, values in sections.items():
            settings = settings.replace(section, **values)
        return settings

    def save(self):
        """Check the values (and a changed model: that it opens), then save; a problem keeps the dialog open."""
        try:
            settings = self.collect()
        except CoreError as exc:
            self.bar.show_message(f"Not saved: {exc}", "error")
            return None
        if settings.model == self.settings.model:
            return self._store(settings)
        model = settings.model

        def job(_ctx):
            # Opening a client resolves and inspects the model file (no model is loaded): a missing,
            # corrupt or too-large file, or an unknown backend, is refused here with core's message.
            from core.llm import open_client

            if not model.model.strip() and model.backend == "local":
                raise ConfigError("choose a model: a catalog id or a GGUF file")
            open_client(model).close()
        self.bar.show_message("Checking the model…", "info", closable=False)
        return self.controller.submit(job, name="check model", on_finished=lambda _r: self._store(settings),
                                      on_failed=lambda exc: self.bar.show_message(f"Not saved: {exc}", "error"))

    def _store(self, settings):
        def done(_settings) -> None:
            self.bar.clear()
            self.saved.emit(settings)
            self.accept()
        return self.controller.apply_settings(settings, on_success=done,
                                              on_failed=lambda exc: self.bar.show_message(f"Not saved: {exc}", "error"))
