"""Numbered siblings ("valve 3" / "valve 4", "Service 21" / "Service 22", "3号阀门" / "4号阀门") are told
apart by shape alone, and the learned head's "the same thing" is no evidence between them: under
"both", the word rules decide there (core/dream/judgment/relations.py)."""
from __future__ import annotations

import pytest

from core.dream.judgment import pools, relations
from core.dream.judgment.relations import Candidate
from core.dream.judgment.signals import numbered_siblings


@pytest.mark.parametrize("a, b", [
    ("Irrigation valve 3 is in the north field", "Irrigation valve 4 is in the north field"),
    ("Service 21 of the fleet runs on host rack-021 in Porto", "Service 22 of the fleet runs on host rack-022 in Porto"),
    ("agent memory line 0", "agent memory line 1"),
    ("3号阀门在北边的菜地", "4号阀门在北边的菜地"),
    ("Pump 1 feeds the cooling loop", "Pump 2 runs at 40 l/min"),
    ("La ligne 1 contient la version", "La ligne 2 contient la date d'export"),
    ("Teich 1 hat die Goldfische", "Teich 3 hat die Molche"),
])
def test_lines_about_different_members_of_a_numbered_set_are_siblings(a, b):
    assert numbered_siblings(a, b) and numbered_siblings(b, a)


@pytest.mark.parametrize("a, b", [
    ("Staging restarts at 04:00 UTC", "Staging restarts at 05:00 UTC"),          # a time is a value
    ("Kubernetes 1.29 in prod", "Kubernetes 1.31 in prod"),                    # a version is a value
    ("Disk alerts page at 90%", "Disk alerts page at 85%"),                    # a percentage is a value
    ("Print exports use 300dpi", "Print exports use 600dpi"),                  # a number with its unit
    ("Staging database lives on db-stg-02.internal, port 5433", "Staging DB moved to db-stg-05.internal (same port)."),
    ("Irrigation valve 3 is in the north field", "Irrigation valve 3 is in the north field"),
])
def test_a_new_value_or_the_same_line_is_no_sibling(a, b):
    assert not numbered_siblings(a, b)


def test_the_heads_duplicate_or_update_of_a_numbered_sibling_does_not_override_the_rules():
    fact = "Irrigation valve 4 is in the north field"
    candidates = [Candidate("b1", "Irrigation valve 3 is in the north field", 0.97),
                  Candidate("b2", "The irrigation controller is in the garage", 0.4)]
    for kind in (relations.DUPLICATE, relations.UPDATE):
        assert relations._sibling_pick(fact, pools.Choice(0, kind, kind, 0.9, 0.9), candidates)
    assert not relations._sibling_pick(fact, pools.Choice(1, relations.DUPLICATE, "duplicate", 0.9, 0.9), candidates)
    assert not relations._sibling_pick(fact, pools.Choice(None, relations.NEW), candidates)
    # under "both" with the override asked for, the rules' answer stands
    rules = relations.relate(fact, candidates)
    both = relations.relate(fact, candidates, policy=pools.HeadPolicy(everywhere=True))
    assert (both.kind, both.target, both.reason) == (rules.kind, rules.target, rules.reason)
