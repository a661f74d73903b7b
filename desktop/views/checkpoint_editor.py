"""The checkpoint editor: a session's checkpoints as a timeline, what is done and pending,
artifact hashes checked against the files, and the JSON itself, editable.

The JSON is validated against the checkpoint schema (`validate_checkpoint`) before a
save, and a checkpoint may not be moved to another session or id by an edit. Saving
goes through the same compare-and-swap and history as every other document.
"""
from __future__ import annotations

import html
import json

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QLabel, QListWidget, QListWidgetItem, QTextBrowser, QVBoxLayout, QWidget

from core.errors import CoreError
from core.workspace import file_hash, validate_checkpoint
from desktop.views.bars import MessageBar
from desktop.views.document_editor import DocumentEditor
from desktop.views.layout import splitter, title_label, titled_column


def artifact_states(ws, artifacts: dict) -> dict[str, str]:
    """path -> matches | differs | missing | outside the workspace (runs on a task)."""
    states = {}
    for path, digest in (artifacts or {}).items():
        try:
            resolved = ws.resolve(path)
        except CoreError:
            states[path] = "outside the workspace"
            continue
        if not resolved.is_file():
            states[path] = "missing"
        else:
            states[path] = "matches" if file_hash(resolved) == digest else "differs"
    return states


def render_summary(data: dict, states: dict[str, str]) -> str:
    def items(values, mark):
        return "".join(f"<li>{mark} {html.escape(str(v))}</li>" for v in values) or "<li><i>none</i></li>"
    marks = {"matches": "✓ matches", "differs": "✗ differs from the file", "missing": "? file missing",
             "outside the workspace": "– not in this workspace (cannot check)"}
    artifacts = "".join(f"<li><code>{html.escape(p)}</code> {marks.get(states.get(p, ''), 'checking…')}</li>"
                        for p in (data.get("artifacts") or {})) or "<li><i>none</i></li>"
    tasks = "".join(f"<li>[{html.escape(str(t.get('status', 'pending')))}] {html.escape(str(t.get('id')))}: "
                    f"{html.escape(str(t.get('title', '')))}"
                    + (f" <small>(after {', '.join(map(str, t.get('depends_on', [])))})</small>"
                       if t.get("depends_on") else "") + "</li>"
                    for t in data.get("tasks") or [])
    error = data.get("error_state")
    return (f"<h3>{html.escape(str(data.get('target', '')))}</h3>"
            f"<p><small>{html.escape(str(data.get('timestamp', '')))} · "
            f"{html.escape(str(data.get('checkpoint_id', '')))}</small></p>"
            f"<p><b>Last action:</b> {html.escape(str(data.get('last_action', '')))}</p>"
            + (f"<p><b>Error:</b> {html.escape(json.dumps(error) if isinstance(error, dict) else str(error))}</p>"
               if error else "")
            + f"<p><b>Done</b></p><ul>{items(data.get('completed_steps') or [], '✓')}</ul>"
            f"<p><b>Pending</b></p><ul>{items(data.get('pending_steps') or [], '○')}</ul>"
            + (f"<p><b>Task graph</b></p><ul>{tasks}</ul>" if tasks else "")
            + f"<p><b>Artifacts</b></p><ul>{artifacts}</ul>"
            f"<p><b>Context</b>: {html.escape(str(data.get('context_summary', '')))}</p>")


class CheckpointJson(DocumentEditor):
    save_reason = "checkpoint edited in Reverie"

    def __init__(self, controller, rel_path: str, parent=None):
        parts = rel_path.split("/")
        self.expected_session = parts[1] if len(parts) == 3 else ""
        self.expected_id = parts[-1].removesuffix(".json")
        super().__init__(controller, rel_path, parent)

    def validate(self, text: str) -> list[str]:
        try:
            data = json.loads(text)
        except ValueError as exc:
            return [f"not valid JSON ({exc})"]
        problems = validate_checkpoint(data)
        if isinstance(data, dict):
            if self.expected_session and data.get("session_id") != self.expected_session:
                problems.append(f"session_id must stay {self.expected_session!r} (the folder it is in)")
            if data.get("checkpoint_id") != self.expected_id:
                problems.append(f"checkpoint_id must stay {self.expected_id!r} (its file name)")
        return problems


class CheckpointEditor(QWidget):
    openRequested = Signal(str, int)
    loaded = Signal()
    summaryShown = Signal()

    def __init__(self, controller, rel_path: str, parent=None):
        super().__init__(parent)
        self.controller = controller
        self.rel = rel_path                      # checkpoints/<session>
        self.session_id = rel_path.rstrip("/").split("/")[-1]
        self.files: list[str] = []
        self.json_editor: CheckpointJson | None = None
        self.states: dict[str, str] = {}
        self.title = title_label(f"Checkpoints of session {self.session_id}")
        self.bar = MessageBar()
        self.timeline = QListWidget()
        self.timeline.currentRowChanged.connect(self._selected)
        self.summary = QTextBrowser()
        self.editor_holder = QVBoxLayout()
        holder = QWidget()
        holder.setLayout(self.editor_holder)
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(QLabel("Timeline (oldest first)"))
        left_layout.addWidget(self.timeline)
        right = splitter(self.summary, holder, sizes=[300, 400], vertical=True)
        titled_column(self, self.title, self.bar, splitter(left, right, sizes=[260, 700]))
        self.refresh()

    def refresh(self) -> None:
        ws, sid = self.controller.ws, self.session_id

        def job(_ctx):
            rows = []
            for path in ws.checkpoint_files(sid):
                try:
                    data = json.loads(path.read_text(encoding="utf-8"))
                    label = f"{str(data.get('timestamp', ''))[:19].replace('T', ' ')}  {data.get('last_action', '')}"
                except (ValueError, UnicodeDecodeError, OSError):
                    label = f"{path.stem}  (damaged JSON)"
                rows.append((ws.relative(path), label))
            return rows
        self.controller.submit(job, name="checkpoints", on_finished=self._listed,
                               on_failed=lambda exc: self.bar.show_message(str(exc), "error"))

    def check_disk(self) -> None:
        if self.json_editor is not None:
            self.json_editor.check_disk()
        self.refresh()

    def _listed(self, rows) -> None:
        current = self.files[self.timeline.currentRow()] if 0 <= self.timeline.currentRow() < len(self.files) else ""
        self.files = [rel for rel, _ in rows]
        self.timeline.blockSignals(True)
        self.timeline.clear()
        for rel, label in rows:
            item = QListWidgetItem(label)
            item.setToolTip(rel)
            self.timeline.addItem(item)
        self.timeline.blockSignals(False)
        if not rows:
            self.bar.show_message(f"Session {self.session_id} has no checkpoints.", "info")
            self.loaded.emit()
            return
        row = self.files.index(current) if current in self.files else len(self.files) - 1
        if self.json_editor is None or self.json_editor.rel != self.files[row]:
            self.timeline.setCurrentRow(row)
        else:
            self.timeline.blockSignals(True)
            self.timeline.setCurrentRow(row)
            self.timeline.blockSignals(False)
        self.loaded.emit()

    def _selected(self, row: int) -> None:
        if not 0 <= row < len(self.files):
            return
        rel = self.files[row]
        if self.json_editor is not None:
            if self.json_editor.rel == rel:
                return
            if self.json_editor.dirty and not self.json_editor.close_request():
                return
            self.editor_holder.removeWidget(self.json_editor)
            self.json_editor.deleteLater()
        self.json_editor = CheckpointJson(self.controller, rel)
        self.json_editor.openRequested.connect(self.openRequested)
        self.json_editor.loaded.connect(self.update_summary)
        self.json_editor.saved.connect(lambda _c: self.update_summary())
        self.json_editor.editor.textChanged.connect(self._text_changed)
        self.editor_holder.addWidget(self.json_editor)

    def _text_changed(self) -> None:
        editor = self.json_editor
        if editor is None or editor.base is None:
            return
        problems = editor.validate(editor.text())
        if problems:
            self.bar.show_message("The checkpoint JSON is not valid yet: " + "; ".join(problems[:4]), "warning",
                                  closable=False)
        elif self.bar.kind == "warning":
            self.bar.clear()

    def update_summary(self) -> None:
        editor = self.json_editor
        if editor is None:
            return
        try:
            data = json.loads(editor.text())
        except ValueError:
            return
        if not isinstance(data, dict):
            return
        self.summary.setHtml(render_summary(data, {}))
        ws, artifacts = self.controller.ws, dict(data.get("artifacts") or {})

        def shown(states) -> None:
            self.states = states
            self.summary.setHtml(render_summary(data, states))
            self.summaryShown.emit()
        self.controller.submit(lambda ctx: artifact_states(ws, artifacts), name="artifact hashes",
                               on_finished=shown, on_failed=lambda exc: None)

    def close_request(self) -> bool:
        return self.json_editor.close_request() if self.json_editor is not None else True

    @property
    def dirty(self) -> bool:
        return self.json_editor is not None and self.json_editor.dirty

    def goto_line(self, line: int) -> None:
        if self.json_editor is not None:
            self.json_editor.goto_line(line)
