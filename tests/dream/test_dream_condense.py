"""Over budget, a dream proposes a separate, always-held condense proposal (merges, a stale section
to memory/archive/MEMORY-<year>.md) and never cuts what the person curated; a held proposal is
applied only on purpose (`reverie proposals WS apply ID --force`)."""
from __future__ import annotations

import datetime as dt

from tests.support.dreamkit import write_log

from core.cli import main
from core.dream.pipeline.condense import newest_date, section_spans
from core.dream.pipeline.consolidator import run_dream
from core.dream.review.apply import apply_proposal
from core.dream.review.proposals import HELD, list_proposals

NOW = dt.datetime(2026, 12, 5, 22, tzinfo=dt.timezone.utc)
OLD = """# Memory

## Trip to Lisbon (2025-03-02)

Notes from the offsite; kept for reference.

- Hotel was near Cais do Sodré
- Dinner booked for 2025-03-03 at 20:00

## Current work

- Orchard deploys from main on Tuesdays
- Orchard deploys from main on Tuesdays
- Maya owns the planner since 2026-11-20
"""


def condense_of(ws):
    return next(p for p in list_proposals(ws.paths) if p.summary.get("kind") == "condense")


def test_over_budget_a_held_condense_proposal_moves_the_stale_section_and_merges_repeats(workspace):
    workspace.paths.memory_md.write_text(OLD, encoding="utf-8")
    workspace.settings = workspace.settings.replace("memory", memory_md_chars_hint=200)
    write_log(workspace, "2026-12-04", ["Jonas covers on-call for Orchard on weekends"])
    result = run_dream(workspace, None, now=NOW, apply=False)
    main_changes = result.proposal.changes
    assert not [c for c in main_changes if c.kind == "drop"], "the budget never cuts the person's lines"
    condense = condense_of(workspace)
    assert condense.status == HELD and "condense" in condense.hold_reasons[0]
    archived = [c for c in condense.changes if c.op == "archive"]
    assert {c.before for c in archived} >= {"## Trip to Lisbon (2025-03-02)", "- Hotel was near Cais do Sodré"}
    assert all("2025-03-03" in c.reason and "memory/archive/MEMORY-2025.md" in c.reason for c in archived)
    merge = [c for c in condense.changes if c.op == "condense-merge"]
    assert len(merge) == 1 and "says the same as line" in merge[0].reason

    apply_proposal(workspace, condense.id, reviewed=True, now=NOW)
    after = workspace.read_memory().text
    archive = (workspace.root / "memory/archive/MEMORY-2025.md").read_text(encoding="utf-8")
    assert "Trip to Lisbon" not in after and after.count("Orchard deploys from main on Tuesdays") == 1
    assert archive == ("## Trip to Lisbon (2025-03-02)\n\nNotes from the offsite; kept for reference.\n\n"
                       "- Hotel was near Cais do Sodré\n- Dinner booked for 2025-03-03 at 20:00\n")
    assert "## Current work" in after and "Maya owns the planner" in after
    # The main proposal still applies on top (its changes are line-level).
    apply_proposal(workspace, result.proposal.id, reviewed=True, now=NOW)
    assert "Jonas covers on-call" in workspace.read_memory().text


def test_a_recent_or_undated_section_is_never_called_stale():
    lines = OLD.split("\n")
    spans = {s.title: s for s in section_spans(lines)}
    assert spans["Trip to Lisbon (2025-03-02)"].newest == "2025-03-03"
    assert spans["Current work"].newest == "2026-11-20"
    assert newest_date("no dates here") == "" and newest_date("在2025年3月4日上线") == "2025-03-04"


def test_a_held_proposal_is_refused_without_force_and_says_why(workspace, capsys):
    from core.tokens import count_tokens

    workspace.paths.memory_md.write_text("## Notes\n- Maya owns the planner\n", encoding="utf-8")
    write_log(workspace, "2026-12-04", ["Jonas covers on-call for Orchard on weekends"])
    budget = count_tokens("## Notes\n- Maya owns the planner\n") + 1     # this dream takes it over
    workspace.settings = workspace.settings.replace("memory", memory_md_tokens=budget)
    result = run_dream(workspace, None, now=NOW, apply=False)
    assert result.held
    root = str(workspace.root)
    before = workspace.read_memory().text
    capsys.readouterr()
    assert main(["proposals", root, "apply", result.proposal.id]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "is held for review" in err and "--force" in err and f"over its {budget}-token budget" in err
    assert workspace.read_memory().text == before
    assert main(["proposals", root, "apply", result.proposal.id, "--force"]) == 0
    assert "Jonas covers on-call" in workspace.read_memory().text
