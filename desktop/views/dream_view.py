"""The dream view: dream now, live progress per stage, cancel; proposals to review; the history of dreams.

The dream itself runs on the controller's task pool (asked for here, or started by
the scheduler when the agent is idle); this view only shows its events. A
cancelled or interrupted dream writes nothing (core stops at a stage boundary).
"""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (QGridLayout, QHBoxLayout, QLabel, QListWidget, QListWidgetItem, QProgressBar,
                               QPushButton, QSplitter, QVBoxLayout, QWidget)

from desktop import theme
from desktop.status_bar import MAINTENANCE, describe_dream_end
from desktop.views.proposal_review import ProposalReview, model_line

STAGES = ("orient", "gather", "consolidate", "prune")
TITLES = {"orient": "Orient", "gather": "Gather", "consolidate": "Consolidate", "prune": "Prune"}


class DreamView(QWidget):
    openRequested = Signal(str, int)
    proposalsLoaded = Signal()

    def __init__(self, controller, parent=None):
        super().__init__(parent)
        self.controller = controller
        self.rel = ""
        self.proposals = []
        self.last_result = None
        self.dream_button = QPushButton("Dream now")
        self.dream_button.setToolTip("Consolidate new daily logs and sessions into a MEMORY.md proposal")
        self.dream_button.clicked.connect(self.dream_now)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(controller.cancel_dream)
        self.state = QLabel("No dream running.")
        self.state.setWordWrap(True)
        grid = QGridLayout()
        self.bars: dict[str, QProgressBar] = {}
        self.messages: dict[str, QLabel] = {}
        for row, stage in enumerate(STAGES):
            bar = QProgressBar()
            bar.setRange(0, 1)
            bar.setValue(0)
            bar.setFormat("")
            message = QLabel("")
            message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            grid.addWidget(QLabel(TITLES[stage]), row, 0)
            grid.addWidget(bar, row, 1)
            grid.addWidget(message, row, 2)
            self.bars[stage], self.messages[stage] = bar, message
        grid.setColumnStretch(2, 1)
        top = QHBoxLayout()
        top.addWidget(self.dream_button)
        top.addWidget(self.cancel_button)
        top.addWidget(self.state, 1)
        self.list = QListWidget()
        self.list.currentRowChanged.connect(self._selected)
        self.show_all = QPushButton("Show decided too")
        self.show_all.setCheckable(True)
        self.show_all.toggled.connect(lambda _on: self.refresh())
        self.history = QListWidget()
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(QLabel("Proposals"))
        left_layout.addWidget(self.list, 2)
        left_layout.addWidget(self.show_all)
        left_layout.addWidget(QLabel("Dreams so far"))
        left_layout.addWidget(self.history, 1)
        self.review = ProposalReview(controller)
        self.review.openRequested.connect(self.openRequested)
        self.review.decided.connect(lambda _p: self.refresh())
        split = QSplitter(Qt.Orientation.Horizontal)
        split.setObjectName("dreamSplit")
        split.addWidget(left)
        split.addWidget(self.review)
        split.setSizes([260, 1140])
        self.split = split
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addLayout(grid)
        layout.addWidget(split, 1)
        controller.dreamStarted.connect(self._started)
        controller.dreamEvent.connect(self.on_event)
        controller.dreamFinished.connect(self._finished)
        self.refresh()

    # ----- running ------------------------------------------------------------------------------
    def dream_now(self):
        return self.controller.start_dream(reason="asked for")

    def _started(self, reason: str) -> None:
        for stage in STAGES:
            self.bars[stage].setRange(0, 1)
            self.bars[stage].setValue(0)
            self.messages[stage].setText("")
        self.dream_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.state.setText("Maintenance tick: archiving and pruning; a dream runs only if one is due…"
                           if reason == MAINTENANCE else f"Dreaming ({reason})…")

    def on_event(self, event) -> None:
        stage = getattr(event, "stage", "")
        if stage not in self.bars:
            return
        bar = self.bars[stage]
        if event.status == "start" and stage == STAGES[0] and self.state.text().startswith("Maintenance"):
            self.state.setText(f"Dreaming ({MAINTENANCE})…")
        if event.status == "start":
            bar.setRange(0, 0)                        # busy until the stage says how much there is
            self.messages[stage].setText("…")
        elif event.status == "progress":
            if event.total:
                bar.setRange(0, event.total)
                bar.setValue(min(event.done, event.total))
                bar.setFormat(f"{event.done}/{event.total}")
            self.messages[stage].setText(event.message)
        elif event.status == "done":
            bar.setRange(0, 1)
            bar.setValue(1)
            bar.setFormat("done")

    def _finished(self, outcome) -> None:
        self.dream_button.setEnabled(True)
        self.cancel_button.setEnabled(False)
        result = getattr(outcome, "dream", outcome)      # a maintenance report carries its dream, if any
        if isinstance(outcome, Exception) or result is None:
            self.state.setText(describe_dream_end(outcome))
        else:
            self.last_result = result
            note, failed = model_line({"stats": result.stats, "notes": result.notes})
            self.state.setText(f"Dream {result.status}: {result.reason}" + (f" · {'⚠ ' if failed else ''}{note}"
                                                                           if result.stats else ""))
        self.refresh(select=getattr(getattr(result, "proposal", None), "id", None))

    # ----- proposals -------------------------------------------------------------------------------
    def refresh(self, select: str | None = None) -> None:
        ws, everything = self.controller.ws, self.show_all.isChecked()
        current = select or (self.review.proposal.id if self.review.proposal is not None else None)

        def job(_ctx):
            from core.dream import OPEN, dream_history, list_proposals

            return list_proposals(ws.paths, None if everything else OPEN), dream_history(ws)
        self.controller.submit(job, name="proposals", on_finished=lambda r: self._listed(r, current),
                               on_failed=lambda exc: self.state.setText(f"Could not list proposals: {exc}"))

    def check_disk(self) -> None:
        self.refresh()

    def _listed(self, result, current: str | None) -> None:
        self.proposals, history = result
        self.list.blockSignals(True)
        self.list.clear()
        for proposal in self.proposals:
            held = " · held" if proposal.status == "held" else ""
            item = QListWidgetItem(f"{proposal.created[:16].replace('T', ' ')}  {proposal.status}{held}  "
                                   f"{len(proposal.undecided())}/{len(proposal.changes)} open")
            item.setToolTip(proposal.id + ("\n" + "\n".join(proposal.hold_reasons) if proposal.hold_reasons else ""))
            self.list.addItem(item)
        self.list.blockSignals(False)
        ids = [p.id for p in self.proposals]
        if current in ids:
            self.list.setCurrentRow(ids.index(current))
            self.review.show_proposal(self.proposals[ids.index(current)])
        elif self.proposals:
            self.list.setCurrentRow(0)
            self.review.show_proposal(self.proposals[0])
        elif self.review.proposal is None or self.review.proposal.id != current:
            self.review.show_proposal(None)     # (one just decided stays in view, as decided)
        self.history.clear()
        for entry in history:
            note, failed = model_line(entry)
            item = QListWidgetItem(f"{str(entry.get('time', ''))[:16].replace('T', ' ')}  {entry.get('status', '?')}  "
                                   f"{entry.get('facts', 0)} facts from {entry.get('files_read', 0)} log(s) · "
                                   f"{'⚠ ' if failed else ''}{note}")
            item.setToolTip(note)
            if failed:
                item.setForeground(QColor(theme.colors().pin))
            self.history.addItem(item)
        self.proposalsLoaded.emit()

    def _selected(self, row: int) -> None:
        if 0 <= row < len(self.proposals):
            self.review.show_proposal(self.proposals[row])
