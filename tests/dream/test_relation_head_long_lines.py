"""The learned relation head on real-shaped log lines (synthetic, written for this test): a true update
buried in a long line of the day's chatter, a long line about another aspect of the same subject,
the same sentence about another person, and a restatement in another language."""
from __future__ import annotations

import pytest

from core.dream.judgment import pools, relations
from core.dream.judgment.relations import Candidate

KILN = "The kiln is fired to cone 6 on Saturdays"
FEE = "Studio membership is £45 a month"
CLOSED = "The studio is closed on Mondays"


def _candidates(bullet: str) -> list[Candidate]:
    return [Candidate("b", bullet, 0.6), Candidate("x", "The studio is on Mill Lane", 0.3)]


@pytest.mark.parametrize("bullet, fact, kind", [
    (KILN, "Long afternoon at the studio; Petra showed the new glazes, the wheel in the corner is finally "
           "fixed, and from now on the kiln fires to cone 5 on Sundays instead", relations.UPDATE),
    (FEE, "Had a chat with the owner after class; membership goes from £45 to £52 a month in January, "
          "and the locker fee stays", relations.UPDATE),
    (KILN, "Kiln shelves cracked again during the Saturday firing; ordered two new ones from Potclays, "
           "and Petra wants a shelf-wash routine before every load", relations.NEW),
    ("Nadia leads the Monday yoga class at 7:15", "Bruno leads the Wednesday pilates class at 18:00", relations.NEW),
    (CLOSED, "Das Studio hat montags geschlossen.", relations.DUPLICATE),
    (FEE, "工作室会员费每月 45 英镑", relations.DUPLICATE),
])
def test_the_head_on_long_and_cross_language_lines(bullet, fact, kind):
    got = relations.relate(fact, _candidates(bullet), learned=True)
    assert got.kind == kind, got
    assert got.target == ("b" if kind != relations.NEW else "")


def test_both_takes_the_heads_update_buried_in_a_long_line_the_rules_also_find():
    fact = ("Had a chat with the owner after class; membership goes from £45 to £52 a month in January, "
            "and the locker fee stays")
    assert relations.relate(fact, _candidates(FEE), policy=pools.HeadPolicy(everywhere=True)).kind == relations.UPDATE
    # and a long line about another aspect stays new under "both" as well
    other = ("Kiln shelves cracked again during the Saturday firing; ordered two new ones from Potclays, "
             "and Petra wants a shelf-wash routine before every load")
    assert relations.relate(other, _candidates(KILN), policy=pools.HeadPolicy(everywhere=True)).kind == relations.NEW
