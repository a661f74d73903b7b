"""Reviewing one dream proposal: sections and hunks with checkboxes, a side-by-side diff,
the reason and sources of every change, accept or reject all or the checked hunks.

Accepting goes through core's `apply_proposal` (compare-and-swap, rebase over an
append, held when MEMORY.md changed where the proposal edits it), rejecting through
`reject_proposal`, each as an operation (`controller.run_op`): what it changed
reaches every view (an open MEMORY.md editor, the list of proposals) on its own.
"""
from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QTextBrowser, QTreeWidget, QTreeWidgetItem, QWidget

from core.workspace import Source
from desktop.operations import Outcome
from desktop.views.bars import MessageBar
from desktop.views.diff_view import DiffView
from desktop.views.layout import splitter, title_label, titled_column

ROLE = Qt.ItemDataRole.UserRole


def describe_changes(proposal, change_ids) -> str:
    rows = []
    for cid in change_ids:
        change = proposal.change(cid)
        decision = proposal.decisions.get(cid, "open")
        text = change.after or change.before
        sources = "".join(f"<li><a href='src:{html.escape(ref)}'>{html.escape(ref)}</a></li>"
                          for ref in change.sources) if change.kind != "drop" else ""
        rows.append(f"<p><b>{cid}</b> {html.escape(change.op)} ({change.kind}) · <i>{decision}</i><br>"
                    f"<code>{html.escape(text)}</code><br>{html.escape(change.reason)}"
                    + (f"<br>sources:<ul>{sources}</ul>" if sources else
                       ("<br><i>no source</i>" if change.kind != "drop" else "")) + "</p>")
    return "".join(rows) or "<p><i>This hunk carries no bullet-level change.</i></p>"


class ProposalReview(QWidget):
    openRequested = Signal(str, int)
    decided = Signal(object)          # the proposal after an apply or a reject
    undone = Signal()

    def __init__(self, controller, parent=None):
        super().__init__(parent)
        self.controller = controller
        self.proposal = None
        self.title = title_label("Select a proposal")
        self.bar = MessageBar()
        self.hunks = QTreeWidget()
        self.hunks.setHeaderLabels(["section / hunk", "changes"])
        self.hunks.setColumnWidth(0, 260)
        self.hunks.currentItemChanged.connect(self._hunk_selected)
        self.hunks.itemChanged.connect(self._check_changed)
        self.diff = DiffView("MEMORY.md as the dream read it", "MEMORY.md as proposed")
        self.details = QTextBrowser()
        self.details.setOpenLinks(False)
        self.details.anchorClicked.connect(self._source_clicked)
        self.accept_all = QPushButton("Accept all")
        self.accept_checked = QPushButton("Accept checked")
        self.reject_checked = QPushButton("Reject checked")
        self.reject_all = QPushButton("Reject all")
        self.undo = QPushButton("Undo last accept")
        self.undo.setToolTip("Put MEMORY.md back as it was before the last change (history keeps both)")
        self.accept_all.clicked.connect(lambda: self.apply(all_changes=True))
        self.accept_checked.clicked.connect(lambda: self.apply(all_changes=False))
        self.reject_checked.clicked.connect(lambda: self.reject(all_changes=False))
        self.reject_all.clicked.connect(lambda: self.reject(all_changes=True))
        self.undo.clicked.connect(self.undo_last)
        buttons = QHBoxLayout()
        for button in (self.accept_all, self.accept_checked, self.reject_checked, self.reject_all):
            buttons.addWidget(button)
        buttons.addStretch(1)
        buttons.addWidget(self.undo)
        right = splitter(self.diff, self.details, sizes=[420, 180], vertical=True)
        titled_column(self, self.title, self.bar, splitter(self.hunks, right, sizes=[320, 800]), buttons, margin=0)
        self._set_enabled(False)

    def _set_enabled(self, on: bool) -> None:
        for button in (self.accept_all, self.accept_checked, self.reject_checked, self.reject_all):
            button.setEnabled(on)

    # ----- showing a proposal ------------------------------------------------------------------------
    def show_proposal(self, proposal) -> None:
        self.proposal = proposal
        if proposal is None:
            self.title.setText("No proposal selected")
            self.hunks.clear()
            self.diff.set_texts("", "")
            self.details.clear()
            self.bar.clear()
            self._set_enabled(False)
            return
        undecided = {c.id for c in proposal.undecided()}
        self.title.setText(f"Proposal {proposal.id} · {proposal.status} · {len(proposal.changes)} change(s), "
                           f"{len(undecided)} open · created {proposal.created[:19].replace('T', ' ')}")
        if proposal.hold_reasons:
            self.bar.show_message("Held for review: " + "; ".join(proposal.hold_reasons), "warning", closable=False)
        else:
            self.bar.clear()
        self.hunks.blockSignals(True)
        self.hunks.clear()
        sections: dict[str, QTreeWidgetItem] = {}
        for hunk in proposal.hunks():
            parent = sections.get(hunk.section)
            if parent is None:
                parent = QTreeWidgetItem(self.hunks, [hunk.section or "(top of the file)", ""])
                parent.setFlags(parent.flags() | Qt.ItemFlag.ItemIsUserCheckable | Qt.ItemFlag.ItemIsAutoTristate)
                parent.setCheckState(0, Qt.CheckState.Unchecked)
                parent.setData(0, ROLE, ("section", hunk.section))
                parent.setExpanded(True)
                sections[hunk.section] = parent
            open_ids = [cid for cid in hunk.change_ids if cid in undecided]
            label = ", ".join(f"{cid}:{proposal.change(cid).op}" for cid in hunk.change_ids) or "text only"
            first = (hunk.new_lines or hunk.base_lines or ("",))[0]
            item = QTreeWidgetItem(parent, [f"{hunk.id}  {first[:60]}", label])
            item.setData(0, ROLE, ("hunk", hunk.id, tuple(hunk.change_ids)))
            item.setToolTip(0, "\n".join(hunk.new_lines) or "\n".join(hunk.base_lines))
            if open_ids and proposal.is_open:
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                item.setCheckState(0, Qt.CheckState.Unchecked)
            else:
                item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsUserCheckable)
                item.setText(1, label + " · " + ", ".join(sorted({proposal.decisions.get(c, 'open')
                                                                  for c in hunk.change_ids})))
        self.hunks.blockSignals(False)
        self.diff.set_texts(proposal.base_text, proposal.new_text)
        self.details.setHtml(describe_changes(proposal, [c.id for c in proposal.changes]))
        self._set_enabled(proposal.is_open)

    def _hunk_selected(self, item: QTreeWidgetItem, _previous=None) -> None:
        if item is None or self.proposal is None:
            return
        data = item.data(0, ROLE)
        if data and data[0] == "hunk":
            self.details.setHtml(describe_changes(self.proposal, data[2]))
            hunk = next((h for h in self.proposal.hunks() if h.id == data[1]), None)
            if hunk is not None and hunk.new_start:
                self._scroll_to(hunk.new_start)
        elif data and data[0] == "section":
            ids = [c.id for c in self.proposal.changes if c.section == data[1]]
            self.details.setHtml(describe_changes(self.proposal, ids))

    def _scroll_to(self, new_line: int) -> None:
        alignment = self.diff.alignment
        if alignment is None:
            return
        seen = 0
        for row, kind in enumerate(alignment.right_kinds):
            if kind != "filler":
                seen += 1
            if seen >= new_line:
                block = self.diff.right.document().findBlockByNumber(row)
                self.diff.right.setTextCursor(QTextCursor(block))
                self.diff.right.centerCursor()
                return

    def _check_changed(self, _item, _column) -> None:
        self.accept_checked.setEnabled(bool(self.checked_hunks()) and self.proposal is not None
                                       and self.proposal.is_open)
        self.reject_checked.setEnabled(self.accept_checked.isEnabled())

    def _source_clicked(self, url) -> None:
        ref = url.toString().removeprefix("src:")
        source = Source(ref)
        self.openRequested.emit(source.path, (source.lines or (1, 1))[0])

    # ----- choosing ------------------------------------------------------------------------------------
    def checked_hunks(self) -> list[str]:
        found = []
        for i in range(self.hunks.topLevelItemCount()):
            section = self.hunks.topLevelItem(i)
            for j in range(section.childCount()):
                item = section.child(j)
                if item.checkState(0) == Qt.CheckState.Checked and item.flags() & Qt.ItemFlag.ItemIsUserCheckable:
                    found.append(item.data(0, ROLE)[1])
        return found

    def set_checked(self, hunk_ids) -> None:
        wanted = set(hunk_ids)
        for i in range(self.hunks.topLevelItemCount()):
            section = self.hunks.topLevelItem(i)
            for j in range(section.childCount()):
                item = section.child(j)
                if item.flags() & Qt.ItemFlag.ItemIsUserCheckable:
                    item.setCheckState(0, Qt.CheckState.Checked if item.data(0, ROLE)[1] in wanted
                                       else Qt.CheckState.Unchecked)

    def apply(self, *, all_changes: bool):
        if self.proposal is None:
            return None
        hunks = () if all_changes else tuple(self.checked_hunks())
        if not all_changes and not hunks:
            self.bar.show_message("Check the hunks or sections to accept first.", "info")
            return None
        ws, pid = self.controller.ws, self.proposal.id

        def job(_ctx):
            from core.dream import apply_proposal

            result = apply_proposal(ws, pid, hunk_ids=hunks, reviewed=True)
            return Outcome(result.changes | ws.proposal_changes(pid), result)   # MEMORY.md and the decision

        def done(outcome) -> None:
            result = outcome.value
            self.show_proposal(result.proposal)
            how = {"append": " (rebased over an outside append)", "replay": " (replayed onto the current file)"}
            if result.wrote:
                self.bar.show_message(f"Accepted {len(result.applied)} change(s) into MEMORY.md"
                                      f"{how.get(result.rebased, '')}. Undo puts the old version back.", "info")
            else:
                self.bar.show_message(f"Nothing to write: {len(result.already)} change(s) were already in MEMORY.md.",
                                      "info")
            self.decided.emit(result.proposal)
        self._set_enabled(False)
        return self.controller.run_op(job, name="apply proposal", on_success=done, on_failed=self._failed)

    def reject(self, *, all_changes: bool):
        if self.proposal is None:
            return None
        hunks = () if all_changes else tuple(self.checked_hunks())
        if not all_changes and not hunks:
            self.bar.show_message("Check the hunks or sections to reject first.", "info")
            return None
        ws, pid = self.controller.ws, self.proposal.id

        def job(_ctx):
            from core.dream import reject_proposal

            return Outcome(ws.proposal_changes(pid), reject_proposal(ws, pid, hunk_ids=hunks))

        def done(outcome) -> None:
            proposal = outcome.value
            self.show_proposal(proposal)
            self.bar.show_message("Rejected; MEMORY.md is unchanged.", "info")
            self.decided.emit(proposal)
        self._set_enabled(False)
        return self.controller.run_op(job, name="reject proposal", on_success=done, on_failed=self._failed)

    def _failed(self, exc) -> None:
        self.bar.show_message(str(exc), "error")
        if self.proposal is not None:
            self.refresh()

    def refresh(self) -> None:
        if self.proposal is None:
            return
        paths, pid = self.controller.ws.paths, self.proposal.id

        def job(_ctx):
            from core.dream import load_proposal

            return load_proposal(paths, pid)
        self.controller.submit(job, name="load proposal", on_finished=self.show_proposal,
                               on_failed=lambda exc: self.bar.show_message(str(exc), "error"))

    def undo_last(self):
        ws = self.controller.ws

        def done(_changes) -> None:
            self.bar.show_message("MEMORY.md is back to the version before the last change.", "info")
            self.undone.emit()
        return self.controller.run_op(lambda ctx: ws.undo("MEMORY.md"), name="undo MEMORY.md", on_success=done,
                                      on_failed=lambda exc: self.bar.show_message(f"Nothing undone: {exc}",
                                                                                  "warning"))
