"""Reviewing one dream proposal change by change: accept or reject one bullet without its
neighbours, see old and new side by side for an update, promote a fact the dream left out.

Accepting goes through core's `apply_proposal` (compare-and-swap, rebase over an
append, held when MEMORY.md changed where the proposal edits it), rejecting through
`reject_proposal`, promoting through `promote`, undoing through `undo_last_accept`
(which reverts exactly the last accept, never a person's own save), each as an
operation (`controller.run_op`): what it changed reaches every view (an open
MEMORY.md editor, the list of proposals) on its own. The right-hand pane shows
MEMORY.md as the proposal now stands (`proposed_text`): a rejected change leaves it.
"""
from __future__ import annotations

import html

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QSizePolicy, QTextBrowser, QWidget

from core.workspace import Source
from desktop import theme
from desktop.operations import Outcome
from desktop.views.bars import MessageBar
from desktop.views.change_list import ROLE, ChangeList, bullet_text, relation_label, skipped_label
from desktop.views.diff_view import DiffView
from desktop.views.held_confirm import confirm_held_apply
from desktop.views.layout import splitter, title_label, titled_column


def model_line(summary: dict) -> tuple[str, bool]:
    """What the model did in a dream, from its summary or its dreams.jsonl entry; (text, a failure?)."""
    stats = summary.get("stats") or {}
    decided, fell_back = int(stats.get("model_decided") or 0), int(stats.get("fallbacks") or 0)
    failures, calls = int(stats.get("model_failures") or 0), int(stats.get("model_calls") or 0)
    if not (decided or fell_back or failures or calls):
        return "decided by the rules (no model)", False
    text = f"model decided {decided} fact(s), {fell_back} fell back to the rules"
    if failures:
        failed = [n for n in summary.get("notes") or [] if "model" in str(n) and "fail" in str(n)]
        text += f"; {failures} model call(s) failed" + (f": {failed[0]}" if failed else "")
    return text, bool(failures)


def _sources_html(refs) -> str:
    return "".join(f"<li><a href='src:{html.escape(ref)}'>{html.escape(ref)}</a></li>" for ref in refs)


def describe_change(proposal, change_id: str) -> str:
    change = proposal.change(change_id)
    decision = proposal.decisions.get(change_id, "open")
    head = (f"<p><b>{change.id}</b> · {html.escape(relation_label(change))} · <i>{decision}</i> · "
            f"section {html.escape(change.section or '(top)')}</p>")
    if change.before and change.after:
        body = ("<table width='100%' cellspacing='4'><tr><th align='left'>old</th><th align='left'>new</th></tr>"
                f"<tr><td valign='top'>{html.escape(bullet_text(change.before))}</td>"
                f"<td valign='top'>{html.escape(bullet_text(change.after))}</td></tr></table>")
    else:
        body = f"<p><code>{html.escape(bullet_text(change.after or change.before))}</code></p>"
    group = [c.id for c in proposal.changes if change.group and c.group == change.group and c.id != change.id]
    extra = f"<p>Decided together with {', '.join(group)}.</p>" if group else ""
    sources = _sources_html(change.sources) if change.kind != "drop" else ""
    return (head + body + f"<p>{html.escape(change.reason)}</p>" + extra
            + (f"<p>sources:</p><ul>{sources}</ul>" if sources else
               ("<p><i>no source</i></p>" if change.kind != "drop" else "")))


def describe_skipped(item: dict) -> str:
    return (f"<p><b>{html.escape(skipped_label(item))}</b></p><p><code>{html.escape(str(item.get('fact', '')))}"
            f"</code></p><p>{html.escape(str(item.get('reason', '')))}</p>"
            f"<p>sources:</p><ul>{_sources_html(item.get('sources') or [])}</ul>"
            + (f"<p>Promoted as {html.escape(str(item['promoted']))}.</p>" if item.get("promoted") else
               "<p>Kept in the logs and in search. <b>Promote</b> adds it to MEMORY.md.</p>"))


class ProposalReview(QWidget):
    openRequested = Signal(str, int)
    decided = Signal(object)          # the proposal after an apply, a reject or a promote
    undone = Signal()

    def __init__(self, controller, parent=None):
        super().__init__(parent)
        self.controller = controller
        self.proposal = None
        self.title = title_label("Select a proposal")
        self.model_note = QLabel("")
        self.model_note.setWordWrap(True)
        self.bar = MessageBar()
        self.changes = ChangeList()
        self.changes.currentItemChanged.connect(self._row_selected)
        self.changes.itemChanged.connect(self._check_changed)
        self.changes.decide.connect(self.decide)
        self.changes.promote.connect(self.promote)
        self.diff = DiffView("MEMORY.md as the dream read it", "MEMORY.md as proposed (less what you rejected)")
        self.details = QTextBrowser()
        self.details.setOpenLinks(False)
        self.details.anchorClicked.connect(self._source_clicked)
        self.accept_all = QPushButton("Accept all open")
        self.accept_checked = QPushButton("Accept checked")
        self.reject_checked = QPushButton("Reject checked")
        self.reject_all = QPushButton("Reject all open")
        self.undo = QPushButton("Undo last accept")
        self.undo.setToolTip("Take the last accepted dream change out of MEMORY.md again (your own edits stay); "
                             "its changes re-open here")
        self.accept_all.clicked.connect(lambda: self.apply(all_changes=True))
        self.accept_checked.clicked.connect(lambda: self.apply(all_changes=False))
        self.reject_checked.clicked.connect(lambda: self.reject(all_changes=False))
        self.reject_all.clicked.connect(lambda: self.reject(all_changes=True))
        self.undo.clicked.connect(self.undo_last)
        buttons = QHBoxLayout()
        for button in (self.accept_all, self.accept_checked, self.reject_checked, self.reject_all):
            buttons.addWidget(button)
        buttons.addStretch(1)
        self.keys = QLabel(ChangeList.KEYS_HINT)
        self.keys.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        hint_row = QHBoxLayout()
        hint_row.addWidget(self.keys, 1)
        hint_row.addWidget(self.undo)
        # The rows and what a row does side by side on top, the diff below at the full width: both diff
        # panes get half the view, and Accept/Reject sit next to each row's text, always in view.
        top = splitter(self.changes, self.details, sizes=[640, 280])
        body = splitter(top, self.diff, sizes=[300, 260], vertical=True)
        # The message bar goes under the rows, not above: a message never moves the row under the mouse.
        no_bar = QWidget()
        no_bar.hide()
        layout = titled_column(self, self.title, no_bar, body, self.bar, buttons, hint_row, margin=0)
        layout.insertWidget(1, self.model_note)
        self._set_enabled(False)

    def _set_enabled(self, on: bool) -> None:
        for button in (self.accept_all, self.reject_all):
            button.setEnabled(on)
        self._check_changed()

    # ----- showing a proposal ------------------------------------------------------------------------
    def show_proposal(self, proposal) -> None:
        from core.dream import proposed_text
        from core.dream import not_proposed_line

        self.proposal = proposal
        self.changes.show_proposal(proposal)
        if proposal is None:
            self.title.setText("No proposal selected")
            self.model_note.setText("")
            self.diff.set_texts("", "")
            self.details.clear()
            self.bar.clear()
            self._set_enabled(False)
            return
        undecided = len(proposal.undecided())
        skipped = [item for item in proposal.summary.get("skipped") or [] if isinstance(item, dict)]
        conflicts = sum(item.get("kind") == "conflict" for item in skipped)
        left = not_proposed_line(proposal.summary)
        # The same counts as the list's groups: conflicts apart from the facts not promoted.
        self.title.setText(f"Proposal {proposal.id} · {proposal.status} · {len(proposal.changes)} change(s), "
                           f"{undecided} open · {len(skipped) - conflicts} not promoted"
                           + (f" · {conflicts} conflict(s)" if conflicts else "")
                           + (f" · {left}" if left else "")
                           + f" · created {proposal.created[:19].replace('T', ' ')}")
        note, failed = model_line(proposal.summary)
        self.model_note.setText(("⚠ " if failed else "") + note)
        self.model_note.setStyleSheet(f"color: {theme.colors().pin}; font-weight: 600" if failed else "")
        if proposal.hold_reasons and proposal.is_open:
            self.bar.show_message("Held for review: " + "; ".join(proposal.hold_reasons), "warning", closable=False)
        elif self.bar.kind == "warning":
            self.bar.clear()
        self.diff.set_texts(proposal.base_text, proposed_text(proposal))
        self.details.setHtml("<p>Select a change to see what it does and why.</p>")
        self._set_enabled(proposal.is_open)

    def _row_selected(self, item, _previous=None) -> None:
        if item is None or self.proposal is None:
            return
        data = item.data(0, ROLE) or ()
        if data and data[0] == "change":
            self.details.setHtml(describe_change(self.proposal, data[1]))
        elif data and data[0] == "skipped":
            skipped = self.proposal.summary.get("skipped") or []
            self.details.setHtml(describe_skipped(skipped[data[1]]))

    def _check_changed(self, *_args) -> None:
        on = bool(self.changes.checked()) and self.proposal is not None and self.proposal.is_open
        self.accept_checked.setEnabled(on)
        self.reject_checked.setEnabled(on)

    def _source_clicked(self, url) -> None:
        source = Source(url.toString().removeprefix("src:"))
        self.openRequested.emit(source.path, (source.lines or (1, 1))[0])

    # ----- choosing ------------------------------------------------------------------------------------
    def checked_changes(self) -> list[str]:
        return self.changes.checked()

    def set_checked(self, change_ids) -> None:
        self.changes.set_checked(change_ids)

    def apply(self, *, all_changes: bool):
        return self._decide_many(all_changes, accept=True)

    def reject(self, *, all_changes: bool):
        return self._decide_many(all_changes, accept=False)

    def _decide_many(self, all_changes: bool, *, accept: bool):
        if self.proposal is None:
            return None
        if all_changes:
            return self.decide((), accept)          # () is every open change; core refuses a decided proposal
        ids = self.checked_changes()
        if not ids:
            self.bar.show_message(f"Check the changes to {'accept' if accept else 'reject'} first.", "info")
            return None
        return self.decide(ids, accept)

    def decide(self, change_ids, accept: bool):
        """Accept or reject these changes (each brings the changes it belongs with) and nothing else;
        no ids: every open change."""
        if self.proposal is None:
            return None
        ws, pid, ids = self.controller.ws, self.proposal.id, tuple(change_ids)
        if accept and not confirm_held_apply(self, self.proposal, ids):
            return None
        self.changes.mark_pending(ids or [c.id for c in self.proposal.undecided()], accept)

        def job(_ctx):
            from core.dream import apply_proposal, reject_proposal

            if accept:
                result = apply_proposal(ws, pid, change_ids=ids, reviewed=True)
                return Outcome(result.changes | ws.proposal_changes(pid), result)   # MEMORY.md and the decision
            return Outcome(ws.proposal_changes(pid), reject_proposal(ws, pid, change_ids=ids))

        def done(outcome) -> None:
            value = outcome.value
            proposal = value.proposal if accept else value
            self.show_proposal(proposal)
            if not accept:
                self.bar.show_message(f"Rejected {len(ids) or 'every open'} change(s); MEMORY.md is unchanged.",
                                      "info")
            elif value.wrote:
                how = {"append": " (rebased over an outside append)", "replay": " (replayed onto the current file)"}
                self.bar.show_message(f"Accepted {len(value.applied)} change(s) into MEMORY.md"
                                      f"{how.get(value.rebased, '')}. Undo takes them out again.", "info")
            else:
                self.bar.show_message(f"Nothing to write: {len(value.already)} change(s) were already in MEMORY.md.",
                                      "info")
            self.decided.emit(proposal)
        self._set_enabled(False)
        return self.controller.run_op(job, name="accept changes" if accept else "reject changes", on_success=done,
                                      on_failed=self._failed)

    def promote(self, index: int):
        if self.proposal is None:
            return None
        ws, pid = self.controller.ws, self.proposal.id

        def job(_ctx):
            from core.dream import promote

            result = promote(ws, pid, index)
            return Outcome(result.changes | ws.proposal_changes(pid), result)

        def done(outcome) -> None:
            result = outcome.value
            self.show_proposal(result.proposal)
            self.bar.show_message("Promoted into MEMORY.md." if result.wrote else
                                  "Promoted: it was already in MEMORY.md.", "info")
            self.decided.emit(result.proposal)
        return self.controller.run_op(job, name="promote fact", on_success=done, on_failed=self._failed)

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

        def job(_ctx):
            from core.dream import undo_last_accept

            undone = undo_last_accept(ws)
            return Outcome(undone.changes | ws.proposal_changes(undone.proposal.id), undone)

        def done(outcome) -> None:
            undone = outcome.value
            self.bar.show_message(f"Took {len(undone.reverted)} accepted change(s) of proposal {undone.proposal.id} "
                                  f"out of MEMORY.md; they are open for review again.", "info")
            self.undone.emit()
            self.decided.emit(undone.proposal)
        return self.controller.run_op(job, name="undo accept", on_success=done,
                                      on_failed=lambda exc: self.bar.show_message(f"Nothing undone: {exc}",
                                                                                  "warning"))
