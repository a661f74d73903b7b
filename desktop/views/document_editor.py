"""The base of every editable view (MEMORY.md, daily logs, checkpoints): load, save, conflicts, recovery.

- Loading and saving run on the task pool; the editor is read-only while a save is on its way.
  A save, an undo and a restore are operations (`controller.run_op`): the Changes they
  return reach the other views on their own.
- A save is the store's compare-and-swap on the hash the buffer started from, with
  that text as `base_text`: an outside append made meanwhile is merged by the store
  and comes back into the buffer.
- An outside change while the buffer is clean reloads it (cursor kept). While it has
  unsaved edits: a pure append is merged into the buffer at once; anything else shows
  a choice — reload, keep mine, compare — and nothing is lost whichever is chosen
  (a reload is one undoable edit, so Ctrl+Z brings the person's text back).
- A copy of the unsaved buffer goes to `.reverie/recovery/` a moment after each edit,
  and is offered back when the file is opened after a crash.
"""
from __future__ import annotations

from PySide6.QtCore import QTimer, Signal
from PySide6.QtGui import QFontDatabase, QTextCursor
from PySide6.QtWidgets import (QHBoxLayout, QLabel, QMessageBox, QPlainTextEdit, QPushButton, QSizePolicy,
                               QVBoxLayout, QWidget)

from core.errors import ConflictError, CoreError
from core.workspace import Snapshot
from desktop.operations import Outcome
from desktop.views.bars import MessageBar
from desktop.views.line_numbers import NumberedText
from desktop.views.outside_changes import OutsideChanges
from desktop.views.secrets_bar import SecretsBar


class DocumentEditor(OutsideChanges, QWidget):
    openRequested = Signal(str, int)     # another view should open (path, line)
    dirtyChanged = Signal(bool)
    loaded = Signal()
    saved = Signal(object)               # the Changes of a save
    conflictShown = Signal()
    recovery_delay_ms = 1200
    save_reason = "edited in Reverie"

    def __init__(self, controller, rel_path: str, parent=None):
        super().__init__(parent)
        self.controller = controller
        self.rel = rel_path
        self.base: Snapshot | None = None     # what the buffer started from (its hash goes with a save)
        self.disk: Snapshot | None = None     # the conflicting version on disk, while a conflict is shown
        self.saving = False
        self.compare_dialog = None
        self.history_dialog = None
        self._pending_line = 0
        self._shown_dirty = False

        self.editor = self.make_editor()
        self.editor.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.editor.setReadOnly(True)
        self.editor.setPlaceholderText("loading…")
        self.title = QLabel(rel_path)
        self.title.setStyleSheet("font-weight: 600")
        # The buttons keep their size in a narrow window; the title gives way (its tooltip has it whole).
        self.title.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.title.setToolTip(rel_path)
        self.save_button = QPushButton("Save")
        self.save_button.setToolTip("Save (compare-and-swap; an outside append is merged)")
        self.save_button.clicked.connect(self.save)
        self.history_button = QPushButton("History…")
        self.history_button.clicked.connect(self.show_history)
        self.undo_button = QPushButton("Undo last change")
        self.undo_button.setToolTip("Put back the version before the last saved change (it stays in history)")
        self.undo_button.clicked.connect(self.undo_last_change)
        self.toolbar = QHBoxLayout()
        self.toolbar.addWidget(self.title)
        self.toolbar.addStretch(1)
        self.add_tools(self.toolbar)
        for button in (self.undo_button, self.history_button, self.save_button):
            self.toolbar.addWidget(button)
        self.bar = MessageBar()        # choices: conflict, recovery, errors
        self.notice = MessageBar()     # what just happened
        self.secrets = SecretsBar(controller, rel_path, busy=self._redact_blocked)   # a pasted password, a token
        self.secrets.redacted.connect(lambda _changes: self.check_disk())
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(self.toolbar)
        layout.addWidget(self.bar)
        layout.addWidget(self.notice)
        layout.addWidget(self.secrets)
        layout.addWidget(self.make_body(), 1)

        self._recovery_timer = QTimer(self)
        self._recovery_timer.setSingleShot(True)
        self._recovery_timer.setInterval(self.recovery_delay_ms)
        self._recovery_timer.timeout.connect(self._write_recovery)
        self.editor.document().modificationChanged.connect(self._modification_changed)
        self.editor.textChanged.connect(self._text_changed)
        self.load()

    # ----- what subclasses shape ---------------------------------------------------------------
    def make_editor(self) -> QPlainTextEdit:
        return NumberedText()

    def make_body(self) -> QWidget:
        return self.editor

    def add_tools(self, toolbar: QHBoxLayout) -> None:
        """Extra buttons before the common ones."""

    def validate(self, text: str) -> list[str]:
        """Problems that stop a save (the checkpoint editor checks its schema)."""
        return []

    def after_load(self) -> None:
        """Called on the main thread whenever the buffer was (re)filled from disk."""

    def _filled(self) -> None:
        self.after_load()
        self.secrets.check()

    def _redact_blocked(self) -> str:
        if self.dirty or self.saving:
            return "Save or discard your edits first: redacting rewrites the file on disk."
        return ""

    # ----- the buffer ---------------------------------------------------------------------------
    @property
    def ws(self):
        return self.controller.ws

    def text(self) -> str:
        # toRawText keeps non-breaking spaces (toPlainText would turn them into spaces on save).
        return self.editor.document().toRawText().replace("\u2029", "\n")

    @property
    def dirty(self) -> bool:
        return self.base is not None and self.editor.document().isModified() and self.text() != self.base.text

    def _set_text(self, text: str, *, undoable: bool = False) -> None:
        cursor = self.editor.textCursor()
        position, scroll = cursor.position(), self.editor.verticalScrollBar().value()
        if undoable:
            edit = QTextCursor(self.editor.document())
            edit.beginEditBlock()
            edit.select(QTextCursor.SelectionType.Document)
            edit.insertText(text)
            edit.endEditBlock()
        else:
            self.editor.setPlainText(text)
        cursor = self.editor.textCursor()
        cursor.setPosition(min(position, len(text)))
        self.editor.setTextCursor(cursor)
        self.editor.verticalScrollBar().setValue(scroll)

    def _adopt(self, snapshot: Snapshot, *, undoable: bool = False) -> None:
        """The buffer now equals `snapshot` on disk."""
        self.base = snapshot
        self.disk = None
        if self.text() != snapshot.text:
            self._set_text(snapshot.text, undoable=undoable)
        self.editor.document().setModified(False)
        self._discard_recovery()
        self._filled()

    # ----- loading -----------------------------------------------------------------------------------
    def load(self) -> None:
        ws, recovery, rel = self.ws, self.controller.recovery, self.rel
        self.controller.submit(lambda ctx: (ws.read(rel), recovery.load(rel)), name=f"read {rel}",
                               on_finished=self._loaded, on_failed=self._load_failed)

    def _loaded(self, result) -> None:
        snapshot, copy = result
        self.editor.setReadOnly(False)
        self.editor.setPlaceholderText("")
        self.base = snapshot
        self.editor.setPlainText(snapshot.text)
        self.editor.document().setModified(False)
        if snapshot.replaced_bytes:
            self.notice.show_message(f"{snapshot.replaced_bytes} byte(s) of {self.rel} are not UTF-8; they are shown "
                                     f"as \ufffd and saving writes them so", "warning")
        if copy is not None and copy.text != snapshot.text:
            changed = "" if copy.base_hash == snapshot.hash else " The file has changed on disk since then."
            self.bar.show_message(f"Unsaved edits of {self.rel} from {copy.saved_at} were kept when the app closed."
                                  f"{changed}", "warning",
                                  [("Restore them", lambda: self.restore_recovery(copy.text)),
                                   ("Compare", lambda: self.compare(copy.text, snapshot.text, recovered=True)),
                                   ("Discard them", self.discard_recovery)], closable=False)
        self._filled()
        if self._pending_line:
            self.goto_line(self._pending_line)
        self.loaded.emit()

    def _load_failed(self, exc) -> None:
        self.editor.setPlaceholderText("")
        self.bar.show_message(f"Could not open {self.rel}: {exc}", "error", [("Try again", self.load)])
        self.loaded.emit()

    def restore_recovery(self, text: str) -> None:
        self._set_text(text, undoable=True)
        self.editor.document().setModified(True)
        self.bar.clear()
        self.notice.show_message("Your unsaved edits are back. Save to keep them.", "info")

    def discard_recovery(self) -> None:
        self.bar.clear()
        self._discard_recovery()

    # ----- saving --------------------------------------------------------------------------------------
    def save(self, reason: str = ""):
        """Save the text; `reason` names the change in history (default: an edit in this editor)."""
        if self.base is None or self.saving:
            return None
        text = self.text()
        problems = self.validate(text)
        if problems:
            self.bar.show_message("Not saved: " + "; ".join(problems), "error")
            return None
        if text == self.base.text and not self.editor.document().isModified():
            return None
        self.saving = True
        self.editor.setReadOnly(True)
        ws, rel, base, reason = self.ws, self.rel, self.base, reason or self.save_reason

        def job(_ctx):
            changes = ws.write_document(rel, text, base.hash, reason=reason, base_text=base.text)
            return Outcome(changes, ws.read(rel))
        return self.controller.run_op(job, name=f"save {rel}", on_success=self._saved, on_failed=self._save_failed)

    def _saved(self, outcome: Outcome) -> None:
        changes, snapshot = outcome.changes, outcome.value
        self.saving = False
        self.editor.setReadOnly(False)
        merged = changes.info.get("merged_append", "")
        self.bar.clear()
        self._adopt(snapshot, undoable=True)
        if merged:
            lines = merged.strip("\n").count("\n") + 1
            self.notice.show_message(f"Saved. {lines} line(s) an outside writer appended meanwhile were kept, "
                                     f"in the order they were written (before the lines you added at the end).",
                                     "info")
        else:
            self.notice.show_message(f"Saved {self.rel}.", "info")
        self.saved.emit(changes)

    def save_blocking(self) -> bool:
        """Save on the calling (main) thread: only when closing, where there is no later to wait for."""
        if self.base is None or not self.dirty:
            return True
        text = self.text()
        problems = self.validate(text)
        if problems:
            self.bar.show_message("Not saved: " + "; ".join(problems), "error")
            return False
        ws, rel, base, reason = self.ws, self.rel, self.base, self.save_reason
        try:
            self.controller.run_op_here(lambda: ws.write_document(rel, text, base.hash, reason=reason,
                                                                  base_text=base.text))
        except CoreError as exc:
            self.bar.show_message(f"Not saved: {exc}", "error")
            return False
        self.editor.document().setModified(False)
        self.controller.recovery.discard(self.rel)
        return True

    def _save_failed(self, exc) -> None:
        self.saving = False
        self.editor.setReadOnly(False)
        if isinstance(exc, ConflictError):
            self.check_disk()
        else:
            self.bar.show_message(f"Not saved: {exc}", "error", [("Try again", self.save)])

    # ----- history -----------------------------------------------------------------------------------------
    def undo_last_change(self) -> None:
        if self.dirty and not self.confirm_discard("Undoing the last saved change replaces your unsaved edits."):
            return
        ws, rel = self.ws, self.rel

        def job(_ctx):
            changes = ws.undo(rel)
            return Outcome(changes, ws.read(rel))

        def done(outcome: Outcome) -> None:
            snapshot = outcome.value
            self._set_text(snapshot.text, undoable=True)
            self._adopt(snapshot)
            self.notice.show_message("The last change was undone (the undo is itself in history).", "info")
            self.saved.emit(outcome.changes)
        self.controller.run_op(job, name=f"undo {rel}", on_success=done,
                               on_failed=lambda exc: self.notice.show_message(f"Nothing undone: {exc}", "warning"))

    def show_history(self) -> None:
        from desktop.views.history_dialog import HistoryDialog

        if self.history_dialog is not None:
            self.history_dialog.close()
        self.history_dialog = HistoryDialog(self.controller, self.rel, parent=self)
        self.history_dialog.restored.connect(self._restored)
        self.history_dialog.show()

    def _restored(self, changes) -> None:      # the history dialog's restore operation published them
        self.saved.emit(changes)
        if not self.dirty:
            self.check_disk()

    # ----- navigation and closing ----------------------------------------------------------------------------
    def goto_line(self, line: int) -> None:
        if self.base is None:
            self._pending_line = line
            return
        self._pending_line = 0
        block = self.editor.document().findBlockByNumber(max(0, line - 1))
        if block.isValid():
            cursor = QTextCursor(block)
            cursor.movePosition(QTextCursor.MoveOperation.EndOfBlock, QTextCursor.MoveMode.KeepAnchor)
            self.editor.setTextCursor(cursor)
            self.editor.centerCursor()
            self.editor.setFocus()

    def current_line(self) -> int:
        return self.editor.textCursor().blockNumber() + 1

    def confirm_discard(self, why: str) -> bool:
        answer = QMessageBox.question(self, "Unsaved edits", f"{why}\nDiscard your unsaved edits of {self.rel}?")
        return answer == QMessageBox.StandardButton.Yes

    def close_request(self) -> bool:
        """Whether the view may close now (asks when there are unsaved edits)."""
        if not self.dirty:
            return True
        box = QMessageBox(QMessageBox.Icon.Question, "Unsaved edits", f"{self.rel} has unsaved edits.",
                          QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard
                          | QMessageBox.StandardButton.Cancel, self)
        choice = box.exec()
        if choice == QMessageBox.StandardButton.Save:
            return self.save_blocking()
        if choice == QMessageBox.StandardButton.Discard:
            self._discard_recovery()
            self.editor.document().setModified(False)
            return True
        return False

    # ----- recovery copies -------------------------------------------------------------------------------------
    def _modification_changed(self, _modified: bool) -> None:
        self._follow_dirty()

    def _follow_dirty(self) -> None:
        """The tab's marker follows the text: back to the saved text (Ctrl+Z) is clean again."""
        dirty = self.dirty
        if dirty != self._shown_dirty:
            self._shown_dirty = dirty
            if dirty and self.notice.kind == "info" and self.notice.text.startswith("Saved"):
                self.notice.clear()          # "Saved" no longer describes the text
            self.dirtyChanged.emit(dirty)

    def _text_changed(self) -> None:
        self._follow_dirty()
        if self.base is not None and self.editor.document().isModified():
            self._recovery_timer.start()

    def _write_recovery(self) -> None:
        if self.base is None:
            return
        if not self.dirty:
            self._discard_recovery()
            return
        recovery, rel, text, base_hash = self.controller.recovery, self.rel, self.text(), self.base.hash
        self.controller.submit(lambda ctx: recovery.save(rel, text, base_hash), name="recovery copy",
                               on_failed=lambda exc: self.notice.show_message(
                                   f"Could not keep a recovery copy: {exc}", "warning"))

    def flush_recovery(self) -> None:
        """Write the recovery copy now (before a quit or a risky step)."""
        if self._recovery_timer.isActive():
            self._recovery_timer.stop()
            self._write_recovery()

    def _discard_recovery(self) -> None:
        self._recovery_timer.stop()
        recovery, rel = self.controller.recovery, self.rel
        self.controller.submit(lambda ctx: recovery.discard(rel), name="drop recovery copy",
                               on_failed=lambda exc: None)

