""""both" lets the learned head make an update of a fact the word rules read as new or as a duplicate
when the rules themselves see a change cue in it (pools.HeadPolicy.cued_updates): two judgments that
read the line differently agree that something changed. Synthetic lines written for this test."""
from __future__ import annotations

import pytest

from core.dream.judgment import pools, relations
from core.dream.judgment.relations import Candidate
from core.dream.judgment.word_relations import has_change_cue

CUED = pools.HeadPolicy(cued_updates=True)
OTHER = Candidate("x", "The car is parked in the back lot", 0.2)


@pytest.mark.parametrize("bullet, fact, rules_say", [
    ("Drives a 2009 Ford Transit to the markets", "Sold the Transit; the market van is a 2021 Renault Kangoo now.",
     relations.NEW),
    ("Band practice is in the garage on Thursday nights", "Band practice moves to the church hall now, still Thursdays.",
     relations.DUPLICATE),
    ("Piano lessons with Mrs. Hale on Wednesdays", "From now on piano lessons are with Mr. Osei.", relations.DUPLICATE),
])
def test_a_cued_change_the_rules_missed_becomes_the_heads_update(bullet, fact, rules_say):
    candidates = [Candidate("b", bullet, 0.6), OTHER]
    assert has_change_cue(fact)
    assert relations.relate(fact, candidates).kind == rules_say
    got = relations.relate(fact, candidates, policy=CUED)
    assert (got.kind, got.target) == (relations.UPDATE, "b")
    assert got.reason.startswith("the head overrode the rules")


def test_without_a_change_cue_the_rules_stand():
    candidates = [Candidate("b", "The dog eats dry kibble twice a day", 0.6), OTHER]
    fact = "The dog eats dry kibble twice a day, as always."
    assert not has_change_cue(fact)
    assert relations.relate(fact, candidates, policy=CUED) == relations.relate(fact, candidates)


def test_the_switch(monkeypatch):
    monkeypatch.delenv("REVERIE_DREAM_RELATIONS", raising=False)
    assert pools.HeadPolicy.of_process(True).cued_updates == pools.CUED_UPDATES
    assert pools.HeadPolicy.of_process(False) == pools.RULES_ONLY
    monkeypatch.setenv("REVERIE_DREAM_RELATIONS", "rules")
    assert pools.HeadPolicy.of_process(True) == pools.RULES_ONLY
