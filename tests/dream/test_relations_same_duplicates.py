""""both" lets the learned head call a line that says what did not change ("still", "照常", "continua") a
duplicate of the bullet it restates (pools.HeadPolicy.same_duplicates), unless the line also gives that bullet
a new value or says something changed. Synthetic lines written for this test; the real sentence model."""
from __future__ import annotations

import pytest

from core.dream.judgment import pools, relations
from core.dream.judgment.relations import Candidate
from core.dream.judgment.word_relations import has_sameness_cue
from tests.dream.test_relations_unread import KEYS_MEMORY, KEYS_NOW, KEYS_RESTATED
from tests.support.dreamkit import proposed_additions

SAME = pools.HeadPolicy(same_duplicates=True)
OTHER = Candidate("x", "The car is parked in the back lot", 0.2)


@pytest.mark.parametrize("bullet, fact", [
    ("Uses a 2015 Yamaha upright piano for lessons", "O piano das aulas continua a ser o Yamaha de 2015."),
    ("Allergic to penicillin", "青霉素过敏，这个一直没变。"),
    ("The boiler is serviced every October by Hartley Gas", "Hartley Gas still does the boiler every October."),
    ("周会在周一上午，地点在三楼会议室", "周会照常周一上午开，三楼会议室。"),
])
def test_a_restatement_that_says_it_still_holds_is_a_duplicate(bullet, fact):
    candidates = [Candidate("b", bullet, 0.4), OTHER]
    assert has_sameness_cue(fact, any_language=True)
    assert relations.relate(fact, candidates).kind == relations.NEW          # the rules alone add it again
    got = relations.relate(fact, candidates, policy=SAME)
    assert (got.kind, got.target) == (relations.DUPLICATE, "b")


@pytest.mark.parametrize("bullet, fact", [
    ("Choir rehearsal is on Tuesday evenings", "Choir still rehearses, but on Thursdays from next week"),
    ("周会在周一上午", "周会还是周一，但改到下午了"),
])
def test_a_line_that_also_says_what_changed_is_not_a_duplicate(bullet, fact):
    candidates = [Candidate("b", bullet, 0.5), OTHER]
    assert not has_sameness_cue(fact, any_language=True)      # a change cue outweighs the sameness
    assert relations.relate(fact, candidates, policy=SAME).kind != relations.DUPLICATE


def test_a_new_value_of_the_bullets_slot_is_no_duplicate_even_with_a_sameness_cue():
    candidates = [Candidate("b", "Rent is 950 euros a month", 0.6), OTHER]
    fact = "Rent is still paid by transfer, 990 euros a month."
    assert has_sameness_cue(fact)
    assert relations.relate(fact, candidates, policy=SAME).kind != relations.DUPLICATE


def test_the_switch(monkeypatch):
    monkeypatch.delenv("REVERIE_DREAM_RELATIONS", raising=False)
    assert pools.HeadPolicy.of_process(True).same_duplicates == pools.SAME_DUPLICATES
    monkeypatch.setenv("REVERIE_DREAM_RELATIONS", "rules")
    assert not pools.HeadPolicy.of_process(True).same_duplicates


@pytest.mark.parametrize("on", [True, False])
def test_a_dream_adds_no_second_line_for_a_restatement_that_says_it_still_holds(workspace, monkeypatch, on):
    monkeypatch.delenv("REVERIE_DREAM_RELATIONS", raising=False)
    monkeypatch.setattr(pools, "UNREAD_DUPLICATES", False)    # only the sameness path may find it
    monkeypatch.setattr(pools, "SAME_DUPLICATES", on)
    added = proposed_additions(workspace, KEYS_MEMORY, "2026-12-04", [KEYS_RESTATED], KEYS_NOW)
    assert (added == []) is on, added
