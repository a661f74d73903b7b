"""What every read view shares: a title, a message bar, a body; reading on a task, re-reading on a change.

A subclass builds its body widget, calls `self.finish(body)`, and implements
`read_job()` (a function run on the task pool that returns what `_show` displays)
and `_show(result)`. A failed read says why and offers to try again. Every reader has a
find-in-file line under its body.
"""
from __future__ import annotations

from typing import Any, Callable

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QWidget

from desktop.views.bars import MessageBar
from desktop.views.find_bar import FindBar
from desktop.views.secrets_bar import SecretsBar
from desktop.views.layout import title_label, titled_column


class Reader(QWidget):
    openRequested = Signal(str, int)
    loaded = Signal()

    def __init__(self, controller, rel_path: str, title: str, parent=None):
        super().__init__(parent)
        self.controller = controller
        self.rel = rel_path
        self._pending_line = 0
        self.title = title_label(title)
        self.bar = MessageBar()
        self.secrets = SecretsBar(controller, rel_path)    # a pasted password, a token in what it shows
        self.secrets.redacted.connect(lambda _changes: self.refresh())

    def finish(self, body: QWidget) -> None:
        """Lay the view out (a find-in-file line under the body) and start the first read."""
        self.find_bar = FindBar(body)
        titled_column(self, self.title, self.bar, body, self.find_bar).insertWidget(2, self.secrets)   # under the bar
        self.refresh()

    def read_job(self) -> Callable[[Any], Any]:
        raise NotImplementedError(f"{type(self).__name__} must say how it reads {self.rel}")

    def refresh(self) -> None:
        self.controller.submit(self.read_job(), name=f"read {self.rel}", on_finished=self._shown,
                               on_failed=self._failed)

    def _shown(self, result) -> None:
        self._show(result)
        self.secrets.check()

    def check_disk(self) -> None:
        self.refresh()

    def _show(self, result) -> None:
        raise NotImplementedError

    def _failed(self, exc) -> None:
        self.bar.show_message(f"Could not read {self.rel}: {exc}", "error", [("Try again", self.refresh)])
        self.loaded.emit()
