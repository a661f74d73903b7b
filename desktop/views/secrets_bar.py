"""The banner of a file that holds a pasted secret: how many, of which kinds, and a Redact button.

Agents, dreams and prompts read these files, so a password pasted into a log long ago is
shown where the person looks at it. Finding and redacting go through the workspace facade
on the task pool; a redaction is an edit like any other (history, undo).
"""
from __future__ import annotations

from typing import Callable

from PySide6.QtCore import Signal

from desktop.views.bars import MessageBar


def describe(findings) -> str:
    kinds = ", ".join(dict.fromkeys(f.kind for f in findings))
    count = len(findings)
    lines = ", ".join(str(n) for n in dict.fromkeys(f.line for f in findings))
    return (f"This file holds {count} secret{'s' if count != 1 else ''} ({kinds}; line {lines}): "
            f"agents, dreams and prompts read it. Redact replaces each value with [redacted …] "
            f"(undoable from History).")


class SecretsBar(MessageBar):
    redacted = Signal(object)       # the Changes of a redaction (the view reloads)

    def __init__(self, controller, rel: str, *, busy: Callable[[], str] = lambda: "", parent=None):
        super().__init__(parent)
        self.setObjectName("secretsBar")
        self.controller = controller
        self.rel = rel
        self.busy = busy            # why the view cannot be redacted under it now ("" when it can)
        self.findings: list = []

    def check(self) -> None:
        """Look for secrets in the file as it is on disk now (on a task)."""
        ws, rel = self.controller.ws, self.rel
        self.controller.submit(lambda ctx: ws.find_secrets([rel]), name=f"secrets in {rel}",
                               on_finished=self._found, on_failed=lambda exc: None)

    def _found(self, findings) -> None:
        self.findings = list(findings)
        if self.findings:
            self.show_message(describe(self.findings), "warning", [("Redact", self.redact)])
        elif self.kind == "warning":
            self.clear()

    def redact(self) -> None:
        why = self.busy()
        if why:
            self.show_message(f"{describe(self.findings)} {why}", "warning", [("Redact", self.redact)])
            return
        ws, rel = self.controller.ws, self.rel
        self.controller.run_op(lambda ctx: ws.redact_secrets([rel]), name=f"redact {rel}",
                               on_success=self._redacted,
                               on_failed=lambda exc: self.show_message(f"Not redacted: {exc}", "error",
                                                                       [("Try again", self.redact)]))

    def _redacted(self, changes) -> None:
        skipped = changes.info.get("skipped", {})
        count = changes.info.get("redacted", 0)
        if skipped:
            self.show_message(f"Not redacted: {'; '.join(skipped.values())}", "error")
        else:
            self.findings = []
            snapshots = changes.info.get("snapshots", 0)
            self.show_message(f"Redacted {count} secret{'s' if count != 1 else ''} in this file and in "
                              f"{snapshots} earlier version{'s' if snapshots != 1 else ''} in its history.", "info")
        self.redacted.emit(changes)       # run_op has already published the changes to every view
