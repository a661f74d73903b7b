"""Applying proposals: compare-and-swap, rebase, partial accept, undo, idempotent re-apply."""
from __future__ import annotations

import datetime as dt
import json

import pytest
from tests.support.dreamkit import GOLDEN, all_add, golden_workspace, router, write_log
from tests.support.fakes import ScriptedLLM

from core.dream.review.apply import apply_proposal, preview_apply, reject_proposal
from core.dream.pipeline.consolidator import run_dream
from core.dream.review.proposals import load_proposal, save_proposal
from core.dream.state import record_dream_finished
from core.errors import ProposalError
from core.store.atomic import append_durable

NOW = dt.datetime(2026, 11, 10, 3, 0, tzinfo=dt.timezone.utc)


@pytest.fixture
def proposal(workspace):
    golden_workspace(workspace)
    record_dream_finished(workspace.paths, dt.datetime(2026, 11, 3, 21, tzinfo=dt.timezone.utc).timestamp(),
                          now=dt.datetime(2026, 11, 3, 22, tzinfo=dt.timezone.utc))
    write_log(workspace, "2026-11-09", ["Device 17 switched from local time to UTC with firmware 2.4",
                                        "Maya prefers dark mode screenshots in the docs",
                                        "Decided to poll live charts every 60 s"],
              mtime=dt.datetime(2026, 11, 9, 20, tzinfo=dt.timezone.utc).timestamp())
    result = run_dream(workspace, ScriptedLLM(router(all_add)), now=NOW)
    assert result.status == "proposed" and not result.held
    return result.proposal


def test_apply_writes_snapshots_and_undo_restores(workspace, proposal):
    result = apply_proposal(workspace, proposal.id)
    assert workspace.read_memory().text == proposal.new_text and result.rebased == ""
    entry = workspace.history_entries("MEMORY.md")[0]
    assert entry.reason == f"dream proposal {proposal.id}" and result.history_id == entry.id
    assert load_proposal(workspace.paths, proposal.id).status == "applied"
    workspace.undo()
    assert workspace.read_memory().text == GOLDEN
    with pytest.raises(ProposalError, match="already applied"):
        apply_proposal(workspace, proposal.id)


def test_an_append_made_after_the_dream_read_is_kept(workspace, proposal):
    append_durable(workspace.paths.memory_md, "- agent appended this <!-- id:m-x1 -->\n- and this\n")
    result = apply_proposal(workspace, proposal.id)
    text = workspace.read_memory().text
    assert result.rebased == "append"
    assert text == proposal.new_text + "- agent appended this <!-- id:m-x1 -->\n- and this\n"


def test_an_edit_elsewhere_is_rebased_and_kept(workspace, proposal):
    snap = workspace.read_memory()
    edited = snap.text.replace("Maya's manager is Priya Raman", "Maya's manager is Priya Raman (since 2025)")
    workspace.write_memory(edited, snap.hash, reason="person edit")
    result = apply_proposal(workspace, proposal.id)
    text = workspace.read_memory().text
    assert result.rebased == "replay"
    assert "Maya's manager is Priya Raman (since 2025)" in text
    assert "Device 17 sends local time" not in text and "dark mode screenshots" in text


def test_an_edit_to_a_bullet_the_proposal_touches_holds_it(workspace, proposal):
    snap = workspace.read_memory()
    edited = snap.text.replace("Device 17 sends local time instead of UTC", "Device 17 sends local time (Lisbon)")
    workspace.write_memory(edited, snap.hash, reason="person edit")
    with pytest.raises(ProposalError, match="held for review"):
        apply_proposal(workspace, proposal.id)
    assert workspace.read_memory().text == edited, "nothing written"
    held = load_proposal(workspace.paths, proposal.id)
    assert held.status == "held" and any("changed where this proposal edits" in r for r in held.hold_reasons)
    with pytest.raises(ProposalError, match="held for review"):
        apply_proposal(workspace, proposal.id, reviewed=False)


def test_accept_per_section_and_per_hunk_then_reject_the_rest(workspace, proposal):
    sections = proposal.sections()
    assert "Preferences" in sections and "Learnings" in sections
    apply_proposal(workspace, proposal.id, sections=["preferences"])
    text = workspace.read_memory().text
    assert "dark mode screenshots" in text and "Device 17 sends local time" in text
    current = load_proposal(workspace.paths, proposal.id)
    assert current.status == "pending" and current.undecided()
    learnings = next(h for h in current.hunks() if h.section == "Learnings")
    apply_proposal(workspace, proposal.id, hunk_ids=[learnings.id])
    text = workspace.read_memory().text
    assert "Device 17 sends local time" not in text and "switched to UTC with firmware 2.4" in text
    left = load_proposal(workspace.paths, proposal.id).undecided()
    assert left and all(c.section == "Decisions" for c in left)
    final = reject_proposal(workspace, proposal.id)
    assert final.status == "applied" and "poll live charts" not in workspace.read_memory().text
    assert set(final.decisions.values()) == {"applied", "rejected"}


def test_a_group_is_accepted_whole(workspace):
    # A merge is an update (the kept bullet gains the sources) and a drop: never half of one.
    golden_workspace(workspace)
    snap = workspace.read_memory()
    twin = snap.text.replace("## Projects", "- Drinks tea, not coffee <!-- id:m-d009 src:memory/2026-11-05.md#L2 -->\n\n"
                                            "## Projects")
    workspace.write_memory(twin, snap.hash, reason="test")
    write_log(workspace, "2026-11-09", ["Keycloak realm is lumen"])
    proposal = run_dream(workspace, None, now=NOW).proposal
    drop = next(c for c in proposal.changes if c.kind == "drop")
    selected = proposal.select(change_ids=[drop.id])
    assert {c.kind for c in selected} == {"update", "drop"} and len({c.group for c in selected}) == 1
    outcome = preview_apply(workspace, proposal.id, change_ids=[drop.id])
    assert outcome.text.count("Drinks tea, not coffee") == 1 and "Keycloak realm is lumen" not in outcome.text


def test_reject_all(workspace, proposal):
    rejected = reject_proposal(workspace, proposal.id)
    assert rejected.status == "rejected" and workspace.read_memory().text == GOLDEN
    with pytest.raises(ProposalError):
        apply_proposal(workspace, proposal.id)


def test_reapplying_after_a_crash_between_write_and_record_writes_nothing_more(workspace, proposal):
    apply_proposal(workspace, proposal.id)
    entries = len(workspace.history_entries("MEMORY.md"))
    # Simulate a kill after MEMORY.md was replaced but before the proposal was marked applied.
    stale = load_proposal(workspace.paths, proposal.id)
    stale.status, stale.decisions, stale.applied = "pending", {}, []
    save_proposal(workspace.paths, stale)
    again = apply_proposal(workspace, proposal.id)
    assert not again.wrote and len(again.already) == len(proposal.changes)
    assert workspace.read_memory().text == proposal.new_text
    assert len(workspace.history_entries("MEMORY.md")) == entries
    assert load_proposal(workspace.paths, proposal.id).status == "applied"


def test_unknown_selection_and_damaged_files_are_clear_errors(workspace, proposal):
    from core.errors import FormatError, NotFoundError

    with pytest.raises(NotFoundError, match="no hunk"):
        apply_proposal(workspace, proposal.id, hunk_ids=["h99"])
    with pytest.raises(NotFoundError, match="no section"):
        apply_proposal(workspace, proposal.id, sections=["Nope"])
    with pytest.raises(NotFoundError, match="no proposal"):
        apply_proposal(workspace, "d-nothing")
    (workspace.paths.proposals_dir / "d-broken.json").write_text("{")
    with pytest.raises(FormatError, match="damaged"):
        load_proposal(workspace.paths, "d-broken")
    assert workspace.read_memory().text == GOLDEN


def test_auto_apply_applies_safe_proposals_only(workspace):
    golden_workspace(workspace)
    record_dream_finished(workspace.paths, dt.datetime(2026, 11, 3, 21, tzinfo=dt.timezone.utc).timestamp(),
                          now=dt.datetime(2026, 11, 3, 22, tzinfo=dt.timezone.utc))
    write_log(workspace, "2026-11-09", ["Jonas covers on-call in December"],
              mtime=dt.datetime(2026, 11, 9, 20, tzinfo=dt.timezone.utc).timestamp())
    workspace.settings = workspace.settings.replace("dream", auto_apply_safe=True)
    result = run_dream(workspace, ScriptedLLM(router(lambda m: [])), now=NOW)
    assert result.status == "applied" and "Jonas covers on-call" in workspace.read_memory().text

    write_log(workspace, "2026-11-10", ["Staging disk alerts fire at 80 percent"], mtime=NOW.timestamp() + 100)

    def unsourced(messages):
        if "name what matters" in messages[0]["content"]:
            # While the dream runs, the person rewrites the log: the fact loses its source.
            write_log(workspace, "2026-11-10", [], mtime=NOW.timestamp() + 200)
            return json.dumps({"goals": [], "decisions": [], "patterns": [], "preferences": []})
        return json.dumps({"ops": all_add(messages)})
    held = run_dream(workspace, ScriptedLLM(unsourced), now=NOW + dt.timedelta(days=1))
    assert held.status == "proposed" and held.held
    assert "Staging disk alerts" not in workspace.read_memory().text
    json.dumps(held.stats)   # stats are plain data for the app
