"""Undo by operation and what a later dream proposes again (real files, real embedder):
undoing an accept takes out exactly its changes and re-opens them, a person's later save stays;
a rejected fact is not proposed again unless its log line changes."""
from __future__ import annotations

import pytest
from tests.support.dreamkit import REVIEW_NOW, dreamed_review

from core.dream import apply_proposal, load_proposal, reject_proposal, run_dream, undo_last_accept
from core.errors import NotFoundError, ProposalError
from core.store.atomic import atomic_write
from core.workspace import parse_bullet


@pytest.fixture
def dreamed(workspace):
    return dreamed_review(workspace)


def first(proposal, op):
    return next(c for c in proposal.changes if c.op == op)


def test_undo_reverts_the_last_accept_and_reopens_its_changes(dreamed):
    ws, proposal = dreamed
    before = ws.read_memory().text
    replace, added = first(proposal, "replace"), first(proposal, "add")
    apply_proposal(ws, proposal.id, change_ids=[replace.id])
    apply_proposal(ws, proposal.id, change_ids=[added.id])
    snap = ws.read_memory()
    mine = snap.text + "- A note the person saved afterwards\n"
    ws.write_memory(mine, snap.hash, reason="edited in Reverie")

    undone = undo_last_accept(ws)                 # the add, the newest accept
    assert undone.reverted == [added.id]
    text = ws.read_memory().text
    assert added.after not in text and replace.after in text and "A note the person saved afterwards" in text
    undone = undo_last_accept(ws)                 # then the replace: the old value is back
    assert undone.reverted == [replace.id]
    text = ws.read_memory().text
    assert replace.before in text and replace.after not in text
    assert text == mine.replace(added.after + "\n", "").replace(replace.after, replace.before)
    assert text != before and "A note the person saved afterwards" in text
    with pytest.raises(NotFoundError, match="no accepted dream change"):
        undo_last_accept(ws)
    stored = load_proposal(ws.paths, proposal.id)
    assert stored.status == "pending" and stored.decisions == {}
    assert all(record.get("undone") for record in stored.applied)
    entry = ws.history_entries("MEMORY.md")[0]
    assert entry.reason == f"undo dream accept {proposal.id}"
    apply_proposal(ws, proposal.id, change_ids=[added.id])       # an undone change can be accepted again
    assert added.after in ws.read_memory().text


def test_undo_refuses_to_overwrite_a_bullet_edited_since_the_accept(dreamed):
    ws, proposal = dreamed
    added = first(proposal, "add")
    apply_proposal(ws, proposal.id, change_ids=[added.id])
    snap = ws.read_memory()
    bullet = parse_bullet(added.after)
    edited = added.after.replace(bullet.text, bullet.text + " (checked by Maya)")
    ws.write_memory(snap.text.replace(added.after, edited), snap.hash, reason="edited in Reverie")
    with pytest.raises(ProposalError, match="History"):
        undo_last_accept(ws)
    assert edited in ws.read_memory().text
    assert load_proposal(ws.paths, proposal.id).decisions == {added.id: "applied"}


def test_a_rejected_fact_comes_back_only_when_its_line_changes(dreamed):
    ws, proposal = dreamed
    reject_proposal(ws, proposal.id)
    log = ws.paths.memory_dir / "2026-11-09.md"
    text = log.read_text(encoding="utf-8")
    # An edit (not an append) makes the next dream read the whole log again.
    edited = text.replace("Maya prefers dark mode screenshots in the docs",
                          "Maya prefers light mode screenshots in the docs")
    assert edited != text
    atomic_write(log, edited)
    again = run_dream(ws, None, now=REVIEW_NOW).proposal
    assert again is not None
    texts = [parse_bullet(c.after).text for c in again.changes if c.after]
    assert texts == ["Maya prefers light mode screenshots in the docs"]


def test_reject_all_then_a_new_line_proposes_only_the_new_line(dreamed):
    ws, proposal = dreamed
    reject_proposal(ws, proposal.id)
    ws.append_daily("The export service runs on port 8443")
    again = run_dream(ws, None).proposal
    assert again is not None
    assert [parse_bullet(c.after).text for c in again.changes] == ["The export service runs on port 8443"]
