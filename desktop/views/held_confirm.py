"""Asking before a held proposal is applied: a guard held it, so applying it is done only on purpose.

The question names why it is held and what applying the chosen changes would take out of
MEMORY.md (core's `held_warning`, the same line `reverie proposals WS apply` prints when it
refuses a held proposal without --force).
"""
from __future__ import annotations

from PySide6.QtWidgets import QMessageBox


def held_question(proposal, change_ids) -> str:
    """The question's text, or "" when the proposal is not held (nothing to ask)."""
    from core.dream import HELD, held_warning

    if proposal is None or proposal.status != HELD:
        return ""
    chosen = proposal.select(change_ids=tuple(change_ids))
    return held_warning(proposal, chosen) + ".\n\nApply it anyway?"


def confirm_held_apply(parent, proposal, change_ids) -> bool:
    """True when the changes may be applied: the proposal is not held, or the person said yes."""
    question = held_question(proposal, change_ids)
    if not question:
        return True
    answer = QMessageBox.question(parent, "Apply a held proposal?", question,
                                  QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
                                  QMessageBox.StandardButton.No)
    return answer == QMessageBox.StandardButton.Yes
