"""A person promotes a fact the dream kept out (a to-do, a redacted secret, a conflict with a pin)."""
from __future__ import annotations

import pytest
from tests.support.dreamkit import REVIEW_NOW, dreamed_review

from core.dream import apply_proposal, load_proposal, promote, proposed_text, reject_proposal, run_dream
from core.dream.review.proposals import save_proposal
from core.dream.judgment.sections import guess_section
from core.errors import NotFoundError, ProposalError
from core.workspace import parse_document

PASSWORD = "Hx7!pQ2rZ9wL"


@pytest.fixture
def dreamed(workspace):
    return dreamed_review(workspace)


def skipped_index(proposal, kind: str) -> int:
    return next(i for i, item in enumerate(proposal.summary["skipped"]) if item["kind"] == kind)


def bullet_with(text: str, memory: str):
    for section in parse_document(memory).sections:
        for bullet in section.bullets():
            if text in bullet.text:
                return section.title, bullet
    return None


def test_a_promoted_to_do_is_added_with_its_source_and_marked(dreamed):
    ws, proposal = dreamed
    index = skipped_index(proposal, "transient")
    item = proposal.summary["skipped"][index]
    before = ws.read_memory().text
    result = promote(ws, proposal.id, index)
    assert result.changes.paths == ("MEMORY.md",) and len(result.applied) == 1
    change = result.proposal.change(result.applied[0])
    assert change.kind == "add" and change.op == "add"
    assert change.reason == f"promoted by a person: {item['reason']}"
    assert change.sources == tuple(item["sources"]) == ("memory/2026-11-09.md#L4",)
    after = ws.read_memory().text
    section, bullet = bullet_with("send Priya the export numbers", after)
    assert bullet.id == change.bullet_id and [s.ref for s in bullet.sources] == item["sources"]
    titles = [s.title for s in parse_document(before).sections if s.heading_line]
    assert section == change.section == guess_section(item["fact"], titles)
    assert after.replace(change.after + "\n", "") == before    # nothing else changed
    stored = load_proposal(ws.paths, proposal.id)
    assert stored.summary["skipped"][index]["promoted"] == change.id
    assert stored.decisions[change.id] == "applied" and stored.is_open          # the dream's changes still wait
    with pytest.raises(ProposalError, match="already promoted"):
        promote(ws, proposal.id, index)
    with pytest.raises(NotFoundError, match="no not-promoted fact #99"):
        promote(ws, proposal.id, 99)
    ws.undo()                                              # history and undo hold as for any accept
    assert ws.read_memory().text == before


def test_a_secret_is_promoted_only_redacted(dreamed):
    ws, proposal = dreamed
    index = skipped_index(proposal, "secret")
    assert PASSWORD not in proposal.summary["skipped"][index]["fact"]
    promote(ws, proposal.id, index)
    memory = ws.read_memory().text
    assert "The staging database password is [redacted password]" in memory and PASSWORD not in memory


@pytest.mark.parametrize("fact", [f"The staging database password is {PASSWORD}",
                                  "The staging database password is hunter-two-ish"])
def test_a_secret_that_is_not_redacted_is_refused(dreamed, fact):
    ws, proposal = dreamed
    index = skipped_index(proposal, "secret")
    proposal.summary["skipped"][index]["fact"] = fact     # a record written by an older or damaged dream
    save_proposal(ws.paths, proposal)
    before = ws.read_memory().text
    with pytest.raises(ProposalError, match="secret|password"):
        promote(ws, proposal.id, index)
    assert ws.read_memory().text == before
    stored = load_proposal(ws.paths, proposal.id)
    assert len(stored.changes) == len(proposal.changes) and "promoted" not in stored.summary["skipped"][index]


def test_a_conflict_is_added_beside_the_pin_which_stays(dreamed):
    ws, proposal = dreamed
    index = skipped_index(proposal, "conflict")
    pin = next(line for line in ws.read_memory().text.split("\n") if "id:m-c002" in line)
    result = promote(ws, proposal.id, index)
    memory = ws.read_memory().text
    assert pin in memory.split("\n")
    assert "we use Auth0 from now on" in memory
    assert "the pin" in result.proposal.change(result.applied[0]).reason


def test_promote_after_the_proposal_was_decided_and_the_preview_follows(dreamed):
    ws, proposal = dreamed
    reject_proposal(ws, proposal.id)
    assert load_proposal(ws.paths, proposal.id).status == "rejected"
    rejected = load_proposal(ws.paths, proposal.id)
    added = next(c for c in proposal.changes if c.op == "add")
    assert added.after in proposal.new_text and added.after not in proposed_text(rejected)
    result = promote(ws, proposal.id, skipped_index(proposal, "transient"))
    assert result.proposal.status == "applied"             # one change of it is in MEMORY.md now
    promoted = result.proposal.change(result.applied[0])
    assert promoted.after in proposed_text(result.proposal)
    with pytest.raises(ProposalError, match="already applied"):
        apply_proposal(ws, proposal.id)
