""""both" lets the learned head make an update of a fact the word rules read as new or as a duplicate
when the rules themselves see a change cue in it (pools.HeadPolicy.cued_updates): two judgments that
read the line differently agree that something changed. Synthetic lines written for this test."""
from __future__ import annotations

import pytest

from core.dream.judgment import pools, relations, signals
from core.dream.judgment.relations import Candidate
from core.dream.judgment.word_relations import has_change_cue

CUED = pools.HeadPolicy(cued_updates=True)
OTHER = Candidate("x", "The car is parked in the back lot", 0.2)


@pytest.mark.parametrize("bullet, fact, rules_say", [
    ("Wants the budget review on Friday afternoon, as a short list",
     "Budget review moves to Wednesday morning — Fridays are for the kids now.", relations.DUPLICATE),
    ("周会在周一上午", "以后周会改到周三下午", relations.NEW),
    ("每周二晚上去游泳", "游泳改到每周四晚上了", relations.NEW),
])
def test_a_cued_new_value_the_rules_missed_becomes_the_heads_update(bullet, fact, rules_say):
    candidates = [Candidate("b", bullet, 0.6), OTHER]
    assert has_change_cue(fact, any_language=True)
    assert relations.relate(fact, candidates).kind == rules_say
    got = relations.relate(fact, candidates, policy=CUED)
    assert (got.kind, got.target) == (relations.UPDATE, "b")
    assert got.reason.startswith("the head overrode the rules")


def test_a_cue_without_a_new_value_of_the_bullets_slot_leaves_the_rules_answer():
    # "now" and "moves" are in status lines too; the change must show as another day, time, date or
    # number of the bullet's own slot, or the head's update is no evidence (real agent logs).
    candidates = [Candidate("b", "Band practice is in the garage on Thursday nights", 0.6), OTHER]
    fact = "Band practice moves to the church hall now, still Thursdays."
    assert has_change_cue(fact)
    assert relations.relate(fact, candidates, policy=CUED) == relations.relate(fact, candidates)


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


@pytest.mark.parametrize("text", ["牙医换成了社区医院的王医生", "以后周会改到周三", "Der Chor probt jetzt dienstags",
                                  "Ya no trabaja los lunes", "Désormais le cours est en ligne", "O Rui agora vive em Faro",
                                  "Il corso è stato spostato al giovedì", "会議は水曜日に変更"])
def test_change_cues_in_other_languages(text):
    assert has_change_cue(text, any_language=True)
    assert not has_change_cue(text)          # the English rules alone do not read them


@pytest.mark.parametrize("text", ["牙医是市口腔医院的刘医生", "Der Chor probt dienstags im Gemeindehaus",
                                  "Trabaja los lunes en la tienda"])
def test_no_change_cue_in_a_plain_statement(text):
    assert not has_change_cue(text, any_language=True)


@pytest.mark.parametrize("bullet, fact, new", [
    ("Nightly sync is healthy (16:02 UTC)", "Skip the nightly sync for now (20:42 UTC)", False),   # when written
    ("Status report (2026-03-05): all green", "Status report (2026-03-06): all green", False),
    ("Weekly review on Friday at 16:00", "Weekly review now on Thursday at 15:00.", True),
    ("豆浆每杯 6 元（3月定的）", "豆浆现在每杯 7 元（4月起）", True),
])
def test_a_value_in_brackets_is_no_new_value_of_the_slot(bullet, fact, new):
    assert relations._new_value(bullet, fact) == new


def test_a_long_run_of_clauses_with_a_new_time_is_not_a_cued_update():
    # an agent's report that happens to hold another time than the bullet is about more than its value
    bullet = "Verification passed: build ok, timer enabled for weekday 1pm"
    fact = ("Dashboard UI update: project reference now offers No reference and Personal; new tasks default "
            "due time to 17:00 while the rest stays; restarted the service; checked logs; all green")
    candidates = [Candidate("b", bullet, 0.5), OTHER]
    assert signals.value_changed(bullet, fact)
    assert relations.relate(fact, candidates, policy=CUED) == relations.relate(fact, candidates)


@pytest.mark.parametrize("durable, overrides", [(0.9, True), (pools.CUED_DURABLE_P - 0.01, False)])
def test_a_cued_update_needs_a_fact_the_kind_head_finds_lasting(monkeypatch, durable, overrides):
    # status lines the rules let through ("✅ Added 4 new …", "Step 3 unblocked: new … validated") carry
    # cues and new numbers too; the kind head (fixed here) finds them unlikely to last
    monkeypatch.setattr(relations, "_durable_probability", lambda _fact: durable)
    candidates = [Candidate("b", "周会在周一上午", 0.6), OTHER]
    got = relations.relate("以后周会改到周三下午", candidates, policy=CUED)
    assert (got.kind == relations.UPDATE) is overrides
    assert relations.relate("以后周会改到周三下午", candidates).kind != relations.UPDATE
