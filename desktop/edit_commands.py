"""The Edit menu's commands on whichever view is current: save, undo, history.

A mixin of the main window: each command asks the current view (or the JSON editor inside it, as
in the checkpoint view) for the ability and does nothing where the view has none.
"""
from __future__ import annotations

from PySide6.QtWidgets import QApplication, QPlainTextEdit, QWidget


class EditCommands:
    def current_view(self) -> QWidget | None:
        return self.tabs.currentWidget()

    def _edit_target(self) -> QWidget | None:
        """The editor the editing commands act on: the current view, or the JSON editor inside it."""
        view = self.current_view()
        return getattr(view, "json_editor", None) or view

    def _on_target(self, method: str) -> None:
        """Call `method` of the edit target, where it has one (a reader has no save, a session no history)."""
        action = getattr(self._edit_target(), method, None)
        if action is not None:
            action()

    def save_current(self) -> None:
        self._on_target("save")

    def undo(self) -> None:
        """Undo typing in the focused text; with nothing to undo there, the last saved change of the file."""
        focus = QApplication.focusWidget()
        if isinstance(focus, QPlainTextEdit) and not focus.isReadOnly() and focus.document().isUndoAvailable():
            focus.undo()
            return
        self.undo_saved_change()

    def undo_saved_change(self) -> None:
        self._on_target("undo_last_change")

    def show_history(self) -> None:
        self._on_target("show_history")
