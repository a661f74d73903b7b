""""both" lets the learned head call a line the word rules can read a duplicate of a bullet when the line
has no change cue, gives the bullet no new value and is near it under the heads' multilingual sentence
model (pools.HeadPolicy.plain_duplicates): a restatement reworded or in another language, which the
rules, matching words, add a second time. Synthetic lines written for this test; the real head."""
from __future__ import annotations

import pytest

from core.dream.judgment import pools, relations, signals
from core.dream.judgment.relations import Candidate

PLAIN = pools.HeadPolicy(plain_duplicates=True)
OTHER = Candidate("x", "The car is parked in the back lot", 0.2)


@pytest.mark.parametrize("bullet, fact", [
    ("Piano lessons with Mrs. Okafor on Saturday mornings",
     "Las clases de piano son con la Sra. Okafor los sábados por la mañana"),
    ("The accountant is Kanzlei Wimmer, invoices go out on the 1st",
     "Buchhaltung macht die Kanzlei Wimmer, Rechnungen gehen am 1. raus"),
])
def test_a_restatement_in_another_language_is_a_duplicate(bullet, fact):
    candidates = [Candidate("b", bullet, 0.4), OTHER]
    assert relations.relate(fact, candidates).kind == relations.NEW          # the rules alone add it again
    got = relations.relate(fact, candidates, policy=PLAIN)
    assert (got.kind, got.target) == (relations.DUPLICATE, "b")


def test_a_weekday_is_one_value_in_every_language():
    assert signals.values("los sábados")["days"] == signals.values("Saturdays")["days"] == \
        signals.values("周六")["days"] == signals.values("samedi")["days"]
    assert not relations._new_value("Piano on Saturday mornings", "Piano los sábados por la mañana")
    assert relations._new_value("Piano on Saturday mornings", "Piano los domingos por la mañana")


def _head_says_duplicate(monkeypatch, p: float = 0.9):
    def views(_fact, candidates):
        return [pools.Judged({"duplicate": p, "update": 0.0, "refinement": 0.0, "distinct": 1 - p}, 1.0, False)
                for _c in candidates]
    monkeypatch.setattr(relations, "_views", views)


def test_a_bullet_far_in_meaning_is_no_duplicate_whatever_the_head_says(monkeypatch):
    # the head (fixed here) calls a line on a neighbouring subject of one topic the same; under the
    # heads' sentence model the two are far apart, so the rules' answer stands
    _head_says_duplicate(monkeypatch)
    bullet, fact = "Reference manager is Zotero with Better BibTeX", "Bibliography in author-year style, never numbered"
    candidates = [Candidate("b", bullet, 0.4), OTHER]
    from core.dream.judgment import heads
    assert heads.meaning_cosines(fact, [bullet])[0] < pools.PLAIN_DUPLICATE_MEANING
    assert relations.relate(fact, candidates, policy=PLAIN) == relations.relate(fact, candidates)


def test_a_new_value_is_no_plain_duplicate(monkeypatch):
    _head_says_duplicate(monkeypatch)
    candidates = [Candidate("b", "Gym membership €45 a month at Fit Plus", 0.6), OTHER]
    fact = "Gym membership at Fit Plus, €49 a month"
    assert relations.relate(fact, candidates).kind != relations.DUPLICATE
    assert relations.relate(fact, candidates, policy=PLAIN).kind != relations.DUPLICATE


def test_a_line_with_a_change_cue_is_left_to_the_cued_path():
    assert relations._head_may("Band practice is in the church hall now", PLAIN) is None
    assert relations._head_may("Band practice is in the church hall", PLAIN) is not None


def test_a_line_the_rules_cannot_read_keeps_its_own_bar(monkeypatch):
    # mostly-CJK lines go by UNREAD_DUPLICATE_P (0.9), not by this path's 0.5
    _head_says_duplicate(monkeypatch, p=0.7)
    candidates = [Candidate("b", "仓库钥匙在老周那里", 0.6), OTHER]
    fact = "仓库的钥匙老周拿着"
    assert relations.relate(fact, candidates, policy=PLAIN) == relations.relate(fact, candidates)


def test_the_switch(monkeypatch):
    monkeypatch.delenv("REVERIE_DREAM_RELATIONS", raising=False)
    assert pools.HeadPolicy.of_process(True).plain_duplicates == pools.PLAIN_DUPLICATES
    monkeypatch.setenv("REVERIE_DREAM_RELATIONS", "rules")
    assert not pools.HeadPolicy.of_process(True).plain_duplicates
