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

    def save_current(self) -> None:
        target = self._edit_target()
        if target is not None and hasattr(target, "save"):
            target.save()

    def undo(self) -> None:
        """Undo typing in the focused text; with nothing to undo there, the last saved change of the file."""
        focus = QApplication.focusWidget()
        if isinstance(focus, QPlainTextEdit) and not focus.isReadOnly() and focus.document().isUndoAvailable():
            focus.undo()
            return
        self.undo_saved_change()

    def undo_saved_change(self) -> None:
        target = self._edit_target()
        if target is not None and hasattr(target, "undo_last_change"):
            target.undo_last_change()

    def show_history(self) -> None:
        target = self._edit_target()
        if target is not None and hasattr(target, "show_history"):
            target.show_history()
