"""The changes of one dream proposal, one row each, to accept or reject one at a time.

Rows are grouped by MEMORY.md section. Each shows the bullet, what kind of change it
is (add, update, duplicate, merge, drop) and, while it is open, its own Accept and
Reject buttons; a decided row looks decided at once (a click marks it "accepting…"
before the job runs; the reloaded proposal then shows it accepted, or struck through
when rejected). Below them, the facts the dream did not promote: conflicts with a
pinned bullet (open), and to-dos, status lines, one-off events and secrets (a
collapsed group), each with the reason and a Promote button.
"""
from __future__ import annotations

import shiboken6
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QHBoxLayout, QHeaderView, QToolButton, QTreeWidget, QTreeWidgetItem, QWidget

from core.workspace import parse_bullet
from desktop import theme

ROLE = Qt.ItemDataRole.UserRole
TEXT, ACTIONS, RELATION, STATE = range(4)     # the buttons next to the text, where a narrow pane shows them

# What each change op means to a person (Change.op is the dream's own word for it).
RELATIONS = {"add": "add · new fact", "replace": "update · new value", "update": "update",
             "sources": "duplicate · source added", "supersede": "drop · superseded", "expired": "drop · expired",
             "budget": "drop · over the budget"}
SKIPPED_KINDS = {"transient": "not promoted · transient", "one_off": "not promoted · one-off event",
                 "secret": "not promoted · secret", "conflict": "conflict with a pinned bullet"}
DECIDED = {"applied": "accepted", "already": "already there", "rejected": "rejected"}


def relation_label(change) -> str:
    if change.kind == "add":             # a fact new to MEMORY.md, even if a later log line restated it
        return {"replace": "add · new fact, updated in the logs",
                "sources": "add · new fact, repeated in the logs"}.get(change.op, "add · new fact")
    if change.op == "merge":
        return "merge · near-duplicates folded" if change.kind == "update" else "merge · folded into another"
    return RELATIONS.get(change.op, f"{change.kind} · {change.op}")


def skipped_label(item: dict) -> str:
    kind = str(item.get("kind") or "")
    return SKIPPED_KINDS.get(kind, f"not promoted · {kind or 'unknown'}")


def bullet_text(line: str) -> str:
    """A MEMORY.md line as a person reads it: no list marker, no provenance comment."""
    bullet = parse_bullet(line)
    return bullet.text if bullet is not None else line.strip()


def _buttons(*specs) -> tuple[QWidget, list[QToolButton]]:
    holder = QWidget()
    layout = QHBoxLayout(holder)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(2)
    made = []
    for title, tip, callback in specs:
        button = QToolButton()
        button.setText(title)
        button.setToolTip(tip)
        button.clicked.connect(callback)
        layout.addWidget(button)
        made.append(button)
    layout.addStretch(1)
    return holder, made


class ChangeList(QTreeWidget):
    decide = Signal(list, bool)     # change ids, accept?
    promote = Signal(int)           # index into proposal.summary["skipped"]

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setHeaderLabels(["change", "", "kind", "state"])
        # The text takes what is left, so Accept and Reject stay in view however narrow the pane.
        header = self.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(TEXT, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(ACTIONS, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(RELATION, QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(STATE, QHeaderView.ResizeMode.Interactive)
        self.setColumnWidth(RELATION, 150)
        self.setColumnWidth(STATE, 80)
        header.setMinimumSectionSize(40)
        self.setUniformRowHeights(True)
        self.proposal = None
        self.rows: dict[str, QTreeWidgetItem] = {}          # change id -> row
        self.skipped_rows: dict[int, QTreeWidgetItem] = {}  # not-promoted index -> row
        self.buttons: dict[str, tuple[QToolButton, QToolButton]] = {}
        self.promote_buttons: dict[int, QToolButton] = {}
        self.not_promoted: QTreeWidgetItem | None = None
        self._holders: list[QWidget] = []

    # ----- building ------------------------------------------------------------------------------
    def show_proposal(self, proposal) -> None:
        self.blockSignals(True)
        for holder in self._holders:      # clear() leaves a row's buttons on screen until they are deleted
            if shiboken6.isValid(holder):
                holder.hide()
                holder.deleteLater()
        self._holders = []
        self.clear()
        self.rows, self.skipped_rows, self.buttons, self.promote_buttons = {}, {}, {}, {}
        self.not_promoted = None
        self.proposal = proposal
        if proposal is None:
            self.blockSignals(False)
            return
        sections: dict[str, QTreeWidgetItem] = {}
        for change in proposal.changes:
            parent = sections.get(change.section)
            if parent is None:
                parent = QTreeWidgetItem(self, [change.section or "(top of the file)"])
                parent.setFlags(parent.flags() | Qt.ItemFlag.ItemIsUserCheckable | Qt.ItemFlag.ItemIsAutoTristate)
                parent.setCheckState(TEXT, Qt.CheckState.Unchecked)
                parent.setData(TEXT, ROLE, ("section", change.section))
                parent.setExpanded(True)
                sections[change.section] = parent
            self._change_row(parent, proposal, change)
        self._skipped_rows(proposal)
        self.blockSignals(False)

    def _change_row(self, parent: QTreeWidgetItem, proposal, change) -> None:
        text = bullet_text(change.after or change.before)
        row = QTreeWidgetItem(parent)
        row.setText(TEXT, text)
        row.setText(RELATION, relation_label(change))
        row.setData(TEXT, ROLE, ("change", change.id))
        row.setToolTip(TEXT, f"{change.id}: {text}\n{change.reason}")
        row.setToolTip(RELATION, change.reason)
        self.rows[change.id] = row
        decision = proposal.decisions.get(change.id)
        if decision is None and proposal.is_open:
            row.setFlags(row.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            row.setCheckState(TEXT, Qt.CheckState.Unchecked)
            row.setText(STATE, "open")
            holder, (accept, reject) = _buttons(
                ("Accept", f"Accept {change.id} into MEMORY.md (and only what belongs with it)",
                 lambda: self._clicked(change.id, True)),
                ("Reject", f"Reject {change.id}; the rest stays open",
                 lambda: self._clicked(change.id, False)))
            self._place(row, holder)
            self.buttons[change.id] = (accept, reject)
        else:
            row.setFlags(row.flags() & ~Qt.ItemFlag.ItemIsUserCheckable)
            self._paint(row, DECIDED.get(decision or "", "not decided"))

    def _skipped_rows(self, proposal) -> None:
        skipped = [item for item in proposal.summary.get("skipped") or [] if isinstance(item, dict)]
        conflicts = [(i, item) for i, item in enumerate(skipped) if item.get("kind") == "conflict"]
        others = [(i, item) for i, item in enumerate(skipped) if item.get("kind") != "conflict"]
        if conflicts:
            group = QTreeWidgetItem(self, [f"Conflicts with pinned bullets ({len(conflicts)})"])
            group.setData(TEXT, ROLE, ("group", "conflict"))
            group.setExpanded(True)
            for index, item in conflicts:
                self._skipped_row(group, index, item)
        if others:
            group = QTreeWidgetItem(self, [f"Not promoted ({len(others)}): kept in the logs and in search"])
            group.setData(TEXT, ROLE, ("group", "not promoted"))
            group.setToolTip(TEXT, "To-dos, status lines, one-off events and secrets the dream kept out of "
                                   "MEMORY.md. Promote one to add it anyway.")
            group.setExpanded(False)
            self.not_promoted = group
            for index, item in others:
                self._skipped_row(group, index, item)

    def _skipped_row(self, group: QTreeWidgetItem, index: int, item: dict) -> None:
        row = QTreeWidgetItem(group)
        row.setText(TEXT, str(item.get("fact") or ""))
        row.setText(RELATION, skipped_label(item))
        row.setData(TEXT, ROLE, ("skipped", index))
        row.setToolTip(TEXT, f"{item.get('reason', '')}\n{', '.join(item.get('sources') or [])}")
        row.setToolTip(RELATION, str(item.get("reason") or ""))
        self.skipped_rows[index] = row
        if item.get("promoted"):
            self._paint(row, f"promoted ({item['promoted']})")
            return
        row.setText(STATE, "left out")
        holder, (button,) = _buttons(("Promote", "Add this fact to MEMORY.md after all",
                                      lambda: self._promote_clicked(index)))
        self._place(row, holder)
        self.promote_buttons[index] = button

    def _place(self, row: QTreeWidgetItem, holder: QWidget) -> None:
        self.setItemWidget(row, ACTIONS, holder)
        self._holders.append(holder)

    # ----- looks ------------------------------------------------------------------------------------
    def _paint(self, row: QTreeWidgetItem, state: str) -> None:
        """Decided rows read as decided: accepted ones tinted, rejected ones struck through and dimmed."""
        colors = theme.colors()
        row.setText(STATE, state)
        holder = self.itemWidget(row, ACTIONS)
        if holder is not None:
            holder.hide()     # not deleted: this may run inside its button's own click (deleted with the rows)
        font = row.font(TEXT)
        font.setStrikeOut(state == "rejected")
        for column in range(self.columnCount()):
            row.setFont(column, font)
            if state == "rejected":
                row.setForeground(column, QBrush(QColor(colors.comment)))
            elif state in ("accepted", "already there") or state.startswith("promoted"):
                row.setBackground(column, QBrush(QColor(colors.added)))
                row.setForeground(column, QBrush(QColor(colors.on_tint)))
            else:       # on its way: accepting… / rejecting… / promoting…
                row.setBackground(column, QBrush(QColor(colors.changed)))
                row.setForeground(column, QBrush(QColor(colors.on_tint)))

    def mark_pending(self, change_ids, accept: bool) -> None:
        for cid in change_ids:
            row = self.rows.get(cid)
            if row is not None and self.buttons.pop(cid, None) is not None:
                self._paint(row, "accepting…" if accept else "rejecting…")

    def _clicked(self, change_id: str, accept: bool) -> None:
        self.decide.emit([change_id], accept)

    def _promote_clicked(self, index: int) -> None:
        row = self.skipped_rows.get(index)
        if row is not None and self.promote_buttons.pop(index, None) is not None:
            self._paint(row, "promoting…")
        self.promote.emit(index)

    # ----- the keyboard ---------------------------------------------------------------------------------
    KEYS_HINT = "Keys: A accept · R reject · N / P next / previous open change"

    def current_change(self) -> str:
        item = self.currentItem()
        data = item.data(TEXT, ROLE) if item is not None else None
        return data[1] if data and data[0] == "change" else ""

    def open_changes(self) -> list[str]:
        return [cid for cid in self.rows if cid in self.buttons]

    def step(self, forward: bool = True) -> str:
        """Select the next (or previous) open change after the current row, wrapping; its id or ""."""
        order = self.open_changes()
        if not order:
            return ""
        current = self.current_change()
        ids = list(self.rows)
        at = ids.index(current) if current in ids else (-1 if forward else len(ids))
        ahead = [c for c in (ids[at + 1:] + ids[:at + 1] if forward else list(reversed(ids[:at])) +
                             list(reversed(ids[at:]))) if c in order]
        target = ahead[0] if ahead else order[0]
        self.setCurrentItem(self.rows[target])
        self.scrollToItem(self.rows[target])
        return target

    def keyPressEvent(self, event) -> None:
        key = event.key()
        if event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier:
            super().keyPressEvent(event)
            return
        current = self.current_change()
        if key in (Qt.Key.Key_A, Qt.Key.Key_R) and current in self.buttons:
            self.step(True)                       # move on first: the decided row stays where it is
            self._clicked(current, key == Qt.Key.Key_A)
        elif key in (Qt.Key.Key_N, Qt.Key.Key_J):
            self.step(True)
        elif key in (Qt.Key.Key_P, Qt.Key.Key_K):
            self.step(False)
        else:
            super().keyPressEvent(event)

    # ----- choosing -----------------------------------------------------------------------------------
    def checked(self) -> list[str]:
        return [cid for cid, row in self.rows.items()
                if row.flags() & Qt.ItemFlag.ItemIsUserCheckable and row.checkState(TEXT) == Qt.CheckState.Checked]

    def set_checked(self, change_ids) -> None:
        wanted = set(change_ids)
        for cid, row in self.rows.items():
            if row.flags() & Qt.ItemFlag.ItemIsUserCheckable:
                row.setCheckState(TEXT, Qt.CheckState.Checked if cid in wanted else Qt.CheckState.Unchecked)

    def state_of(self, change_id: str) -> str:
        return self.rows[change_id].text(STATE)
