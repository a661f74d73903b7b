"""Prune strategy 3 (relevance, proposed and held), the character budget, and the first-open time gate."""
from __future__ import annotations

import datetime as dt

import pytest
from tests.support.dreamkit import write_log
from tests.support.fakes import ScriptedLLM

from core.config import DreamSettings
from core.dream.schedule import gates
from core.dream.review.apply import apply_proposal
from core.dream.pipeline.consolidator import run_dream
from core.dream.review.proposals import HELD, list_proposals
from core.dream.state import ConsolidationState, load_state
from core.errors import ProposalError
from core.store.memory_md import strip_comments

NOW = dt.datetime(2026, 12, 5, 22, tzinfo=dt.timezone.utc)
OLD = """# MEMORY

## Preferences
- Prefers oat milk in coffee <!-- id:m-oat src:memory/2026-09-01.md#L3 -->
- Grows tomatoes on the balcony every summer <!-- id:m-tom src:memory/2026-09-01.md#L4 pin -->

## Projects
- The billing service stores invoices in PostgreSQL 16 <!-- id:m-pg src:memory/2026-09-01.md#L5 -->
- The billing service exposes a REST API for invoice lookups <!-- id:m-api src:memory/2026-12-04.md#L3 -->
"""


def seed(ws, text=OLD):
    snap = ws.read_memory()
    ws.write_memory(text, snap.hash)


def test_bullets_unrelated_to_recent_work_are_proposed_as_held_drops_never_pinned_never_recent(workspace):
    seed(workspace)
    write_log(workspace, "2026-12-04", ["The billing service exposes a REST API for invoice lookups"])
    write_log(workspace, "2026-12-05", ["Migrating billing invoices from PostgreSQL 16 to PostgreSQL 17",
                                        "The invoice table gets a new index on customer id"])
    result = run_dream(workspace, None, now=NOW, apply=True)
    held = [p for p in list_proposals(workspace.paths) if p.summary.get("kind") == "relevance"]
    assert len(held) == 1
    proposal = held[0]
    assert proposal.status == HELD and "relevance prune" in proposal.hold_reasons[0]
    dropped = {c.bullet_id: c for c in proposal.changes}
    assert set(dropped) == {"m-oat"}                    # not the pinned tomatoes, not the related or recent ones
    assert dropped["m-oat"].op == "relevance" and "relevance threshold 0.60" in dropped["m-oat"].reason
    # The dream's own proposal is not held back by it; MEMORY.md still has the bullet until a person accepts.
    assert result.status == "applied"
    assert "oat milk" in workspace.read_memory().text
    assert any("relevance prune" in note for note in result.notes)
    with pytest.raises(ProposalError, match="held for review"):
        apply_proposal(workspace, proposal.id, reviewed=False)
    # A second dream does not suggest the same bullet again while the first suggestion is open.
    write_log(workspace, "2026-12-05", ["Migrating billing invoices from PostgreSQL 16 to PostgreSQL 17",
                                        "The invoice table gets a new index on customer id",
                                        "Invoice numbers restart every January"])
    run_dream(workspace, None, now=NOW + dt.timedelta(hours=1), apply=True)
    assert len([p for p in list_proposals(workspace.paths) if p.summary.get("kind") == "relevance"]) == 1
    # Accepted by a person: the bullet goes.
    apply_proposal(workspace, proposal.id, reviewed=True)
    assert "oat milk" not in workspace.read_memory().text
    assert "tomatoes" in workspace.read_memory().text


def test_relevance_prune_can_be_turned_off_and_needs_recent_work(workspace):
    seed(workspace)
    # No recent logs or sessions at all: nothing to measure against, nothing suggested.
    result = run_dream(workspace, None, now=NOW)
    assert not [p for p in list_proposals(workspace.paths) if p.summary.get("kind") == "relevance"]
    write_log(workspace, "2026-12-05", ["Migrating billing invoices from PostgreSQL 16 to PostgreSQL 17"])
    workspace.settings = workspace.settings.replace("dream", relevance_threshold=0.0)
    result = run_dream(workspace, None, now=NOW + dt.timedelta(hours=1))
    assert result.status in ("proposed", "nothing")
    assert not [p for p in list_proposals(workspace.paths) if p.summary.get("kind") == "relevance"]


def test_the_prompts_state_the_character_budget_and_new_facts_are_ranked_and_capped(workspace, capsys):
    facts = [f"Service number {i} of the fleet runs on host rack-{i:03d} in the Porto data centre" for i in range(40)]
    write_log(workspace, "2026-12-01", facts[:20])
    write_log(workspace, "2026-12-05", facts[20:])
    workspace.settings = workspace.settings.replace("memory", memory_md_chars_hint=2000)
    workspace.settings = workspace.settings.replace("dream", max_new_facts=15)
    llm = ScriptedLLM(lambda messages: '{"ops": []}')
    result = run_dream(workspace, llm, now=NOW, apply=False)
    told = [m["content"] for call in llm.calls for m in call if m["role"] == "system"]
    assert told and all("MEMORY.md must stay under 2,000 characters" in text for text in told)
    added = [c for c in result.proposal.changes if c.kind == "add"]
    assert len(added) == 15 and not [c for c in result.proposal.changes if c.kind == "drop"]
    assert all(any(f in c.after for f in facts[20:]) for c in added), "the newest day's facts are proposed first"
    left = result.proposal.summary["not_proposed"]
    assert len(left) == 25 and all(item["reason"].startswith("budget:") for item in left)
    assert any(note.startswith("25 more candidates, not proposed: budget") for note in result.notes)
    from core.cli import main

    capsys.readouterr()
    assert main(["proposals", str(workspace.root), "show", result.proposal.id]) == 0
    shown = capsys.readouterr().out
    assert "25 more candidates, not proposed: budget (they stay in the logs and in search):" in shown
    assert "... and 15 more" in shown and facts[0] in shown


def test_the_time_gate_starts_at_the_first_open_and_asking_always_works(workspace):
    state = load_state(workspace.paths)
    opened = dt.datetime.fromisoformat(state.first_open)
    assert state.last_run == "" and abs((dt.datetime.now(dt.timezone.utc) - opened).total_seconds()) < 600
    settings = DreamSettings()
    soon = gates.dream_due(state, opened + dt.timedelta(hours=1), settings)
    assert not soon.due and soon.reason.startswith("first dream in 23.0 h")
    assert soon.next_at == opened + dt.timedelta(hours=24)
    assert gates.dream_due(state, opened + dt.timedelta(hours=1), settings, asked=True).due
    later = gates.dream_due(state, opened + dt.timedelta(hours=24), settings)
    assert later.due and "since the workspace was first opened" in later.reason
    # Opening again does not move the clock.
    from core.workspace import Workspace

    Workspace.open(workspace.root).close()
    assert load_state(workspace.paths).first_open == state.first_open
    # A state with no recorded first open (written before this clock existed) is due at once.
    assert gates.dream_due(ConsolidationState(), opened, settings).due


def test_a_bullet_a_person_kept_is_not_suggested_again(workspace):
    from core.dream.review.apply import reject_proposal

    seed(workspace)
    write_log(workspace, "2026-12-05", ["Migrating billing invoices from PostgreSQL 16 to PostgreSQL 17"])
    run_dream(workspace, None, now=NOW)
    [first] = [p for p in list_proposals(workspace.paths) if p.summary.get("kind") == "relevance"]
    assert "m-oat" in {c.bullet_id for c in first.changes}
    reject_proposal(workspace, first.id)
    write_log(workspace, "2026-12-05", ["Migrating billing invoices from PostgreSQL 16 to PostgreSQL 17",
                                        "Invoice numbers restart every January"])
    run_dream(workspace, None, now=NOW + dt.timedelta(hours=1))
    later = [p for p in list_proposals(workspace.paths) if p.summary.get("kind") == "relevance" and p.id != first.id]
    assert all("m-oat" not in {c.bullet_id for c in p.changes} for p in later)


YOUNG_AND_MANY = """# MEMORY

## Notes
- Prefers oat milk in coffee <!-- id:m-young src:memory/2026-11-20.md#L3 -->
- Keeps a sourdough starter called Bubbles <!-- id:m-a src:memory/2026-08-01.md#L3 -->
- Plays the cello on Sunday mornings <!-- id:m-b src:memory/2026-08-01.md#L4 -->
- Volunteers at the animal shelter twice a month <!-- id:m-c src:memory/2026-08-01.md#L5 -->
- Collects vintage fountain pens <!-- id:m-d src:memory/2026-08-01.md#L6 -->
- Learned to sail on Lake Geneva as a child <!-- id:m-e src:memory/2026-08-01.md#L7 -->
- Reads a chapter of a mystery novel every night <!-- id:m-f src:memory/2026-08-01.md#L8 -->
- Grows basil and mint on the kitchen windowsill <!-- id:m-g src:memory/2026-08-01.md#L9 -->
"""


def test_relevance_prune_leaves_young_bullets_and_suggests_only_a_few_of_the_least_related(workspace):
    seed(workspace, YOUNG_AND_MANY)
    write_log(workspace, "2026-12-05", ["Migrating billing invoices from PostgreSQL 16 to PostgreSQL 17",
                                        "The invoice table gets a new index on customer id"])
    run_dream(workspace, None, now=NOW)
    [proposal] = [p for p in list_proposals(workspace.paths) if p.summary.get("kind") == "relevance"]
    suggested = proposal.summary["suggestions"]
    ids = [s["bullet_id"] for s in suggested]
    assert "m-young" not in ids                  # two weeks old and unrelated: not stale yet
    assert len(ids) == DreamSettings().relevance_max_suggestions == 5
    assert set(ids) < {"m-a", "m-b", "m-c", "m-d", "m-e", "m-f", "m-g"}
    scores = [s["score"] for s in suggested]
    assert scores == sorted(scores)              # the least related first
    # The next dream suggests the rest, not the same ones again.
    write_log(workspace, "2026-12-05", ["Migrating billing invoices from PostgreSQL 16 to PostgreSQL 17",
                                        "The invoice table gets a new index on customer id",
                                        "Invoice numbers restart every January"])
    run_dream(workspace, None, now=NOW + dt.timedelta(hours=1))
    later = [p for p in list_proposals(workspace.paths) if p.summary.get("kind") == "relevance" and p.id != proposal.id]
    assert len(later) == 1
    assert {s["bullet_id"] for s in later[0].summary["suggestions"]} == {"m-a", "m-b", "m-c", "m-d", "m-e", "m-f",
                                                                         "m-g"} - set(ids)


def test_candidates_said_on_more_days_rank_before_one_days_boilerplate():
    from types import SimpleNamespace

    from core.dream.pipeline.budget import candidate_rank
    from core.dream.pipeline.working import WorkingMemory

    memory = WorkingMemory("## Notes\n- Maya owns the planner\n")
    pasted = memory.add("Notes", "user: Conversation info (untrusted metadata):",
                        tuple(f"memory/2026-02-19-{hhmm}.md#L11" for hhmm in ("0327", "0349", "1146", "1151")))
    repeated = memory.add("Notes", "Deploys go out from main on Tuesdays",
                          ("memory/2026-02-17.md#L3", "memory/2026/2026-02-18-standup.md#L9"))
    recent = memory.add("Notes", "Jonas covers on-call on weekends", ("memory/2026-02-20.md#L2",))
    ctx = SimpleNamespace(kind_scores={}, memory=memory)
    ranked = sorted([pasted, recent, repeated], key=lambda e: candidate_rank(ctx, e))
    assert ranked == [repeated, recent, pasted]
    assert pasted.day == "2026-02-19" and repeated.day == "2026-02-18"
