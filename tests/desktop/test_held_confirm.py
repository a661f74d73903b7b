"""The app asks before it applies a held proposal, naming why it is held and what would be dropped."""
from __future__ import annotations

from PySide6.QtWidgets import QMessageBox

from core.dream.review.proposals import list_proposals
from desktop.views import held_confirm

from tests.support.blocking_llm import dream_in_view


def held_review(qtbot, ws, make_controller):
    # A budget just under what the dream's additions need: its proposal crosses it and is held.
    from core.store.memory_md import strip_comments
    from core.tokens import count_tokens

    budget = count_tokens(strip_comments(ws.read_memory().text)) + 1
    ws.settings = ws.settings.replace("memory", memory_md_tokens=budget)
    view = dream_in_view(qtbot, make_controller, ws)
    assert view.review.proposal.status == "held"
    return view


def test_saying_no_applies_nothing_and_yes_applies(qtbot, demo_workspace, make_controller, monkeypatch):
    ws = demo_workspace
    view = held_review(qtbot, ws, make_controller)
    proposal = view.review.proposal
    asked = []

    def answer(reply):
        def question(_parent, _title, text, *_args):
            asked.append(text)
            return reply
        return question

    before = ws.read_memory().text
    monkeypatch.setattr(QMessageBox, "question", answer(QMessageBox.StandardButton.No))
    assert view.review.apply(all_changes=True) is None
    assert ws.read_memory().text == before
    assert asked and "is held for review" in asked[0] and proposal.hold_reasons[0][:30] in asked[0]
    assert asked[0].endswith("Apply it anyway?")

    monkeypatch.setattr(QMessageBox, "question", answer(QMessageBox.StandardButton.Yes))
    with qtbot.waitSignal(view.review.decided, timeout=60_000):
        view.review.apply(all_changes=True)
    assert ws.read_memory().text != before and len(asked) == 2
    assert next(p for p in list_proposals(ws.paths) if p.id == proposal.id).status == "applied"


def test_the_question_names_the_lines_a_held_proposal_would_drop():
    from core.dream.review.operations import Change
    from core.dream.review.proposals import Proposal

    drops = [Change(id=f"c{n}", kind="drop", op="archive", section="Old", bullet_id="", before=f"- old fact {n}",
                    base_line=n) for n in range(1, 6)]
    proposal = Proposal(id="d-1", created="2026-12-05T00:00:00", status="held", base_hash="", base_text="",
                        new_text="", changes=drops, hold_reasons=["condense: over budget"])
    text = held_confirm.held_question(proposal, ())
    assert "condense: over budget" in text and "it drops 5 line(s)" in text and '"old fact 1"' in text
    proposal.status = "pending"
    assert held_confirm.held_question(proposal, ()) == ""
