"""The dream review, change by change, through the real view: accept or reject one bullet without its
neighbours, what each row says it is, the not-promoted group and its Promote, what the model did,
and undo by operation (an accept is undone, never the person's own save)."""
from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QToolButton

from core.config import ModelSettings
from core.dream import load_proposal
from core.llm import open_client
from desktop.views.change_list import RELATION, STATE, TEXT, bullet_text
from desktop.views.dream_view import DreamView

from tests.support.blocking_llm import dreamed_view, no_model
from tests.support.dreamkit import review_workspace
from tests.support.llm_server import free_port


def opened(qtbot, controller) -> DreamView:
    return dreamed_view(qtbot, controller, (1400, 850))


@pytest.fixture
def reviewed(qtbot, workspace, make_controller):
    review_workspace(workspace)
    return workspace, opened(qtbot, make_controller(workspace, llm_factory=no_model))


def press(qtbot, button) -> None:
    """A real click (press and release): the row's buttons go away inside their own click."""
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def visible_buttons(review) -> list[str]:
    return sorted(b.text() for b in review.changes.viewport().findChildren(QToolButton) if b.isVisible())


def change_of(proposal, op: str):
    return next(c for c in proposal.changes if c.op == op)


def right_pane(view) -> str:
    return view.review.diff.right.toPlainText()


def test_accept_one_change_leaves_its_neighbours_open(qtbot, reviewed):
    ws, view = reviewed
    review = view.review
    proposal = review.proposal
    added = change_of(proposal, "add")
    others = [c.id for c in proposal.changes if c.id != added.id and not (added.group and c.group == added.group)]
    assert others and all(review.changes.state_of(cid) == "open" for cid in others)
    accept, _reject = review.changes.buttons[added.id]
    with qtbot.waitSignal(review.decided, timeout=20_000):
        press(qtbot, accept)
        assert review.changes.state_of(added.id) == "accepting…"      # looks different at once
    assert added.after in ws.read_memory().text
    assert review.changes.state_of(added.id) == "accepted"
    open_rows = len(review.changes.buttons)
    shown = visible_buttons(review)                  # none left on the decided row, one pair per open row
    assert shown.count("Accept") == shown.count("Reject") == open_rows >= 1
    assert all(review.changes.state_of(cid) == "open" for cid in others)
    stored = load_proposal(ws.paths, proposal.id)
    assert stored.is_open and set(stored.decisions) == {added.id}
    assert not any(c.after and c.after in ws.read_memory().text for c in proposal.changes if c.id in others
                   and c.kind == "add")


def test_rejecting_one_change_takes_it_out_of_the_proposed_pane(qtbot, reviewed):
    ws, view = reviewed
    review = view.review
    replace = change_of(review.proposal, "replace")
    new_value = bullet_text(replace.after)
    assert new_value in right_pane(view)
    review.changes.setCurrentItem(review.changes.rows[replace.id])
    details = review.details.toPlainText()
    assert bullet_text(replace.before) in details and new_value in details          # old and new side by side
    before = ws.read_memory().text
    with qtbot.waitSignal(review.decided, timeout=20_000):
        press(qtbot, review.changes.buttons[replace.id][1])
        assert review.changes.state_of(replace.id) == "rejecting…"
    row = review.changes.rows[replace.id]
    assert row.text(STATE) == "rejected" and row.font(TEXT).strikeOut()
    assert new_value not in right_pane(view)
    assert ws.read_memory().text == before
    assert review.proposal.is_open and len(review.proposal.undecided()) == len(review.proposal.changes) - 1


def test_each_row_says_what_kind_of_change_it_is_and_a_skipped_fact_can_be_promoted(qtbot, reviewed):
    ws, view = reviewed
    review, changes = view.review, view.review.changes
    labels = {c.op: changes.rows[c.id].text(RELATION) for c in review.proposal.changes}
    assert labels["add"] == "add · new fact" and labels["replace"] == "update · new value"
    assert labels["sources"] == "duplicate · source added"
    kinds = {item["kind"]: i for i, item in enumerate(review.proposal.summary["skipped"])}
    assert {"transient", "secret", "conflict"} <= set(kinds)
    assert changes.skipped_rows[kinds["conflict"]].text(RELATION) == "conflict with a pinned bullet"
    assert changes.not_promoted is not None and not changes.not_promoted.isExpanded()    # collapsed
    assert changes.skipped_rows[kinds["secret"]].text(RELATION) == "not promoted · secret"
    todo = review.proposal.summary["skipped"][kinds["transient"]]
    changes.setCurrentItem(changes.skipped_rows[kinds["transient"]])
    assert "transient" in review.details.toPlainText() and todo["sources"][0] in review.details.toPlainText()
    with qtbot.waitSignal(review.decided, timeout=20_000):
        press(qtbot, changes.promote_buttons[kinds["transient"]])
    assert todo["fact"] in ws.read_memory().text
    assert changes.skipped_rows[kinds["transient"]].text(STATE).startswith("promoted")
    assert review.changes.rows                                            # the promoted fact is a change now


def test_a_dream_without_a_model_says_so(reviewed):
    _ws, view = reviewed
    assert view.review.model_note.text() == "decided by the rules (no model)"
    assert "no model" in view.history.item(0).text()


def test_an_unreachable_model_server_is_visible_not_a_silent_fallback(qtbot, workspace, make_controller):
    review_workspace(workspace)
    closed = ModelSettings(backend="openai", base_url=f"http://127.0.0.1:{free_port()}/v1", server_model="m",
                           request_timeout_s=5.0)
    controller = make_controller(workspace, llm_factory=lambda _ws: open_client(closed))
    states = []
    controller.modelState.connect(states.append)
    view = opened(qtbot, controller)
    assert states and "(failed: no model server answers" in states[-1]           # not "(ready)"
    stats = view.review.proposal.summary["stats"]
    assert stats["model_failures"] >= 1 and stats["model_decided"] == 0 and stats["fallbacks"] >= 1
    note = view.review.model_note.text()
    assert note.startswith("⚠") and "failed" in note and f"{stats['fallbacks']} fell back" in note
    assert "failed" in view.history.item(0).text() and "failed" in view.state.text()


def test_undo_takes_back_the_accept_never_the_persons_save(qtbot, reviewed):
    ws, view = reviewed
    review = view.review
    added = change_of(review.proposal, "add")
    with qtbot.waitSignal(review.decided, timeout=20_000):
        press(qtbot, review.changes.buttons[added.id][0])
    snap = ws.read_memory()
    assert added.after in snap.text
    mine = snap.text.replace("## Projects\n", "## Projects\n- My own note, saved after the accept\n")
    ws.write_memory(mine, snap.hash, reason="edited in Reverie")
    with qtbot.waitSignal(review.undone, timeout=20_000):
        review.undo.click()
    text = ws.read_memory().text
    assert added.after not in text and "My own note, saved after the accept" in text
    qtbot.waitUntil(lambda: review.proposal is not None and added.id in review.changes.buttons, timeout=10_000)
    assert review.changes.state_of(added.id) == "open"                 # re-opened: it can be accepted again
    review.undo.click()                                                 # a second undo: nothing of the dream left
    qtbot.waitUntil(lambda: "Nothing undone" in review.bar.text, timeout=20_000)
    assert "My own note, saved after the accept" in ws.read_memory().text
    with qtbot.waitSignal(review.decided, timeout=20_000):
        press(qtbot, review.changes.buttons[added.id][0])                     # and accepted again
    assert added.after in ws.read_memory().text


def test_after_reject_all_only_a_new_log_line_is_proposed(qtbot, reviewed):
    ws, view = reviewed
    review = view.review
    with qtbot.waitSignal(review.decided, timeout=20_000):
        review.reject_all.click()
    assert review.proposal.status == "rejected"
    ws.append_daily("The export service runs on port 8443")
    with qtbot.waitSignal(view.controller.dreamFinished, timeout=120_000):
        view.dream_button.click()
    proposal = view.last_result.proposal
    assert proposal is not None and proposal.summary["facts"] == 1
    assert [bullet_text(c.after) for c in proposal.changes] == ["The export service runs on port 8443"]
    assert Qt.CheckState.Unchecked == review.changes.rows[proposal.changes[0].id].checkState(TEXT)


def test_a_fact_new_to_memory_reads_as_an_add_even_when_a_later_line_restated_it():
    from core.dream.review.operations import Change

    from desktop.views.change_list import relation_label

    restated = Change(id="c1", kind="add", op="replace", section="Learnings", bullet_id="m-1", after="- x")
    repeated = Change(id="c2", kind="add", op="sources", section="Learnings", bullet_id="m-2", after="- y")
    updated = Change(id="c3", kind="update", op="replace", section="Learnings", bullet_id="m-3", before="- a",
                     after="- b")
    assert relation_label(restated) == "add · new fact, updated in the logs"
    assert relation_label(repeated) == "add · new fact, repeated in the logs"
    assert relation_label(updated) == "update · new value"
