"""A first dream over thousands of candidate lines: only the best ranked may become bullets while
relating (the rest are listed, not proposed), and updates past the cap still count."""
from __future__ import annotations

import datetime as dt

from tests.support.dreamkit import golden_workspace, write_log

from core.dream.pipeline import budget
from core.dream.pipeline.consolidator import run_dream

NOW = dt.datetime(2026, 11, 20, 9, tzinfo=dt.timezone.utc)
PLACES = ["Aveiro", "Braga", "Coimbra", "Evora", "Faro", "Guarda", "Leiria", "Lagos", "Tavira", "Viseu",
          "Sintra", "Cascais", "Setubal", "Tomar", "Obidos", "Nazare", "Peniche", "Ericeira", "Amarante",
          "Chaves", "Elvas", "Beja", "Sines", "Mafra", "Ourem"]


def test_new_facts_past_the_working_cap_are_listed_and_an_update_still_lands(workspace, monkeypatch):
    golden_workspace(workspace)
    workspace.settings = workspace.settings.replace("dream", max_new_facts=2)
    monkeypatch.setattr(budget, "WORKING_FACTOR", 5)          # at most 10 new bullets while relating
    facts = [f"The {place} office keeps its spare keys with {name}"
             for place, name in zip(PLACES, ["Rui", "Ana", "Joao", "Ines", "Tiago"] * 5)]
    write_log(workspace, "2026-11-18", facts[:12])
    write_log(workspace, "2026-11-19", facts[12:] + ["Drinks coffee now, not tea"],
              mtime=NOW.timestamp() - 3600)
    result = run_dream(workspace, None, now=NOW)
    summary = result.proposal.summary
    adds = [c for c in result.proposal.changes if c.kind == "add"]
    assert len(adds) == 2
    # 10 may enter the working memory (2 proposed, 8 dropped by the limit), the rest are listed at once;
    # a few of the look-alike lines relate to each other instead of being new
    assert len(facts) - 2 - 5 <= len(summary["not_proposed"]) <= len(facts) - 2
    assert all("budget" in item["reason"] for item in summary["not_proposed"])
    replaced = [c for c in result.proposal.changes if c.op == "replace"]
    assert any("Drinks tea" in c.before and "coffee" in c.after for c in replaced), result.proposal.changes


def test_the_cap_prefers_facts_said_on_more_days_then_the_newest():
    from types import SimpleNamespace

    from core.config import Settings
    from core.dream.pipeline.material import Fact

    ctx = SimpleNamespace(settings=Settings().replace("dream", max_new_facts=1), kind_scores={})
    old = Fact("The Braga office has a 3D printer", ("memory/2026-10-01.md#L3",), day="2026-10-01")
    new = Fact("The Faro office has a laser cutter", ("memory/2026-11-01.md#L3",), day="2026-11-01")
    twice = Fact("The Tomar office has a kiln", ("memory/2026-09-01.md#L3", "memory/2026-09-02.md#L4"),
                 day="2026-09-02")
    original = budget.WORKING_FACTOR
    try:
        budget.WORKING_FACTOR = 2
        assert budget.addable(ctx, [old, new, twice]) == {id(twice), id(new)}
    finally:
        budget.WORKING_FACTOR = original


def test_facts_over_the_per_dream_limit_are_carried_to_the_next_dreams(workspace):
    from core.dream.review.apply import apply_proposal
    from core.dream.state import load_state

    golden_workspace(workspace)
    workspace.settings = workspace.settings.replace("dream", max_new_facts=2)
    facts = ["The Lisbon flat has a gas boiler serviced by Termogas",
             "Marta's bicycle is a green Brompton with a dynamo",
             "The wedding photos are backed up on the blue Samsung T7 drive",
             "Our accountant Helena files the quarterly VAT return",
             "The garden hose is the 30 m one from Hozelock"]     # five durable facts (kinds are not tested here)
    write_log(workspace, "2026-11-19", facts, mtime=NOW.timestamp() - 3600)
    proposed = []
    for night in range(4):
        now = NOW + dt.timedelta(days=night)
        result = run_dream(workspace, None, now=now)
        adds = [c.after for c in result.proposal.changes if c.kind == "add"] if result.proposal else []
        proposed.append(adds)
        if result.proposal is not None:
            apply_proposal(workspace, result.proposal.id, reviewed=True, now=now)
        if night == 0:
            carried = load_state(workspace.paths).carried
            assert len(carried) == 3 and all(item["sources"][0].startswith("memory/2026-11-19.md#L")
                                             for item in carried)
    assert [len(adds) for adds in proposed] == [2, 2, 1, 0]
    text = workspace.paths.memory_md.read_text(encoding="utf-8")
    for fact in facts:
        assert text.count(fact) == 1, fact
    assert load_state(workspace.paths).carried == []
