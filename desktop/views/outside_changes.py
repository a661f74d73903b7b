"""What an editor does when its file changes on disk (a mixin of DocumentEditor).

Clean buffer: it follows the disk. Unsaved edits: a pure append is merged in at once;
anything else offers merge both (a three-way merge whose ancestor is the version the
buffer loaded, when the two change different lines), reload, keep mine or compare.
A reload or a merge is one undoable edit, so nothing is lost whichever is chosen.
"""
from __future__ import annotations

from core.workspace import Snapshot
from desktop.views.merge import merge3


def joined(text: str, appended: str) -> str:
    """`text` with an outside append after it, the way the store merges it."""
    joiner = "" if text.endswith("\n") or not text else "\n"
    return text + joiner + appended


class OutsideChanges:
    # ----- outside changes ------------------------------------------------------------------------------
    def check_disk(self) -> None:
        """The file may have changed outside: compare it with the buffer's base and react."""
        ws, rel = self.ws, self.rel
        self.controller.submit(lambda ctx: ws.read(rel), name=f"check {rel}", on_finished=self._disk_read,
                               on_failed=lambda exc: self.bar.show_message(f"{rel}: {exc}", "error"))

    def _disk_read(self, snapshot: Snapshot) -> None:
        if self.base is None or self.saving or snapshot.hash == self.base.hash:
            return                                   # our own write, or a touch
        if not self.dirty:
            self._adopt(snapshot)
            self.notice.show_message(f"{self.rel} was updated on disk; showing the new version.", "info")
            return
        if snapshot.text.startswith(self.base.text) and len(snapshot.text) > len(self.base.text):
            appended = snapshot.text[len(self.base.text):]
            mine = self.text()
            self._set_text(joined(mine, appended), undoable=True)
            self.base = snapshot
            self.editor.document().setModified(True)
            lines = appended.strip("\n").count("\n") + 1
            self.notice.show_message(f"An outside writer appended {lines} line(s) to {self.rel}; they were merged "
                                     f"after your unsaved edits.", "info")
            self._filled()
            return
        self.disk = snapshot
        merged = merge3(self.base.text, self.text(), snapshot.text)
        choices = [("Merge both", lambda: self.merge_both(merged))] if merged is not None else []
        why = ("" if merged is not None else
               " You both changed the same lines: compare them, then reload or keep yours.")
        self.bar.show_message(f"{self.rel} changed on disk while you were editing it.{why}", "warning",
                              choices + [("Reload", self.reload_from_disk), ("Keep mine", self.keep_mine),
                                         ("Compare", lambda: self.compare(self.text(), snapshot.text))],
                              closable=False)
        self.conflictShown.emit()

    def merge_both(self, merged: str) -> None:
        """Take the three-way merge (the ancestor is the version this buffer loaded): the outside
        change and the person's edits, both; one undoable edit, saved by the next save."""
        snapshot = self.disk
        if snapshot is None:
            return
        self._set_text(merged, undoable=True)
        self.base, self.disk = snapshot, None
        self.editor.document().setModified(True)
        self.bar.clear()
        self._close_compare()
        self.notice.show_message("Merged: the outside change and your edits are both in. Save to keep it "
                                 "(Ctrl+Z undoes the merge).", "info")
        self._filled()

    @property
    def in_conflict(self) -> bool:
        return self.disk is not None

    def reload_from_disk(self) -> None:
        """Take the disk version; one undoable edit, so Ctrl+Z brings the person's text back."""
        snapshot = self.disk
        if snapshot is None:
            return
        self._set_text(snapshot.text, undoable=True)
        self.base, self.disk = snapshot, None
        self.editor.document().setModified(False)
        self.bar.clear()
        self._close_compare()
        self.notice.show_message("Reloaded from disk (Ctrl+Z brings your edits back).", "info")
        self._filled()

    def keep_mine(self) -> None:
        """Keep the buffer; the next save replaces the disk version (which stays in history)."""
        snapshot = self.disk
        if snapshot is None:
            return
        self.base, self.disk = snapshot, None
        self.editor.document().setModified(True)
        self.bar.clear()
        self._close_compare()
        self.notice.show_message("Keeping your version; saving replaces the one on disk (it stays in history).",
                                 "info")

    def compare(self, mine: str, disk: str, recovered: bool = False) -> None:
        from desktop.views.conflict import CompareDialog

        self._close_compare()
        dialog = CompareDialog(self.rel, disk, mine, recovered=recovered, parent=self)
        if recovered:
            dialog.reloadChosen.connect(self.discard_recovery)
            dialog.keepChosen.connect(lambda: self.restore_recovery(mine))
        else:
            dialog.reloadChosen.connect(self.reload_from_disk)
            dialog.keepChosen.connect(self.keep_mine)
        self.compare_dialog = dialog
        dialog.show()

    def _close_compare(self) -> None:
        if self.compare_dialog is not None:
            self.compare_dialog.close()
            self.compare_dialog = None

