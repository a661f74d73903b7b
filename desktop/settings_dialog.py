"""Settings: the model (desktop/model_tab.py: catalog, fit, download, server check), device, context length,
the thresholds and schedule of core.config (compaction, eviction, dream gates), and the idle
time before a dream.

Values are the workspace's `.reverie/config.toml` (core.config.Settings); saving goes
through `Workspace.save_settings`, and a bad value is refused with core's message.
"""
from __future__ import annotations

import re

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDialog, QDialogButtonBox, QDoubleSpinBox, QFormLayout,
                               QLabel, QLineEdit, QSpinBox, QTabWidget, QVBoxLayout, QWidget)

from core.errors import CoreError
from desktop.model_tab import ModelTab
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
                 ("dream", "relevance_min_age_days", "… only bullets older than (days)"),
                 ("dream", "relevance_max_suggestions", "… at most this many per dream"),
                 ("dream", "max_new_facts", "New facts proposed per dream (at most)"),
                 ("retention", "archive_after_days", "Archive daily logs after (days)"),
                 ("retention", "prune_sessions_after_days", "Prune session logs after (days)")],
    "Search": [("search", "embedding_model", "Embedding model (empty: the bundled all-MiniLM-L6-v2)"),
               ("search", "recency_half_life_days", "Recency half-life (days, 0 = off)")],
}


class _Number(QDoubleSpinBox):
    """A decimal field that shows 300 as "300", not "300.000"."""

    def textFromValue(self, value: float) -> str:
        return f"{value:.{self.decimals()}f}".rstrip("0").rstrip(".")


# Why a new workspace is not dreamed over at once (the autoDream chapter's trigger starts its clock
# when the memory is created); shown under the dream gates.
GATE_NOTE = ("The 24-hour clock starts when the workspace is first opened, so the first scheduled dream "
             "comes a day later (or after the sessions above, or when a flush asks for one early). "
             "\"Dream now\" always runs at once.")


_KEY = re.compile(r"\[(\w+)\] (\w+)|\bin \[(\w+)\]")


def in_gui_words(message: str) -> str:
    """core's message about a setting, with its config-file key ("[dream] idle_minutes") named as the
    dialog names it ("“Idle minutes before a dream” on the Dreaming tab")."""
    labels = {(section, name): (label, title) for title, rows in TABS.items() for section, name, label in rows}

    def named(match) -> str:
        if match.group(3):
            tabs = sorted({t for (s, _n), (_l, t) in labels.items() if s == match.group(3)})
            return f"on the {tabs[0]} tab" if tabs else match.group(0)
        found = labels.get((match.group(1), match.group(2)))
        if found is None:
            return match.group(2).replace("_", " ").capitalize() if match.group(1) == "model" else match.group(0)
        label, title = found
        return f"“{label.rstrip(':')}” on the {title} tab"
    return _KEY.sub(named, message)


def _field_widget(name: str, value):
    if isinstance(value, bool):
        widget = QCheckBox()
        widget.setChecked(value)
    elif isinstance(value, int):
        widget = QSpinBox()
        widget.setRange(0, 2_000_000_000)
        widget.setValue(value)
    elif isinstance(value, float):
        widget = _Number()
        widget.setDecimals(3 if name.endswith(("fraction", "cosine")) else 1)
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
    if isinstance(widget, QComboBox):
        return widget.currentText().strip()
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
        self.model_tab = ModelTab(self, self.settings, _field_widget)
        for name, widget in self.model_tab.fields.items():
            self.fields[("model", name)] = widget
        tabs.addTab(self._model_page(), "Model")
        for title, rows in TABS.items():
            page, form = QWidget(), QFormLayout()
            page.setLayout(form)
            for section, name, label in rows:
                widget = _field_widget(name, getattr(getattr(self.settings, section), name))
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
    def _model_page(self) -> QWidget:
        tab = self.model_tab
        # The names tests and the rest of the dialog use.
        self.model_combo, self.backend, self.device = tab.model_combo, tab.backend, tab.device
        self.download_button, self.download_progress = tab.download_button, tab.download_progress
        mode = QComboBox()
        for key, title in (("hybrid", "hybrid"), ("keyword", "keyword"), ("meaning", "meaning")):
            mode.addItem(title, key)
        older = {"fts": "keyword", "vector": "meaning", "semantic": "meaning"}     # the modes' older names
        current = self.settings.search.default_mode
        mode.setCurrentIndex(max(0, mode.findData(older.get(current, current))))
        self.search_mode = mode
        form = tab.layout()
        form.addRow("Default search", mode)
        form.addRow(QLabel("Catalog models not on this machine are fetched from Hugging Face when online."))
        return tab

    def chosen_model(self) -> str:
        return self.model_tab.chosen_model()

    def download(self):
        return self.model_tab.download()

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
            self.bar.show_message(f"Not saved: {in_gui_words(str(exc))}", "error")
            return None
        if settings.model == self.settings.model:
            return self._store(settings)
        tab = self.model_tab

        def failed(exc) -> None:
            if not tab.offer_download(exc):
                self.bar.show_message(f"Not saved: {in_gui_words(str(exc))}", "error")

        def checked(verified) -> None:
            if verified.model.backend == "openai":
                tab.server_models([verified.model.server_model], verified.model.server_model)
            self._store(verified)
        # A local model file is opened (not loaded): a missing, corrupt or too-large file, or an unknown
        # backend, is refused with core's message; a server must answer and offer the model.
        self.bar.show_message("Checking the model…", "info", closable=False)
        return self.controller.submit(lambda _ctx: tab.verify(settings), name="check model",
                                      on_finished=checked, on_failed=failed)

    def _store(self, settings):
        def done(_settings) -> None:
            self.bar.clear()
            self.saved.emit(settings)
            self.accept()
        return self.controller.apply_settings(settings, on_success=done,
                                              on_failed=lambda exc: self.bar.show_message(f"Not saved: {in_gui_words(str(exc))}", "error"))
