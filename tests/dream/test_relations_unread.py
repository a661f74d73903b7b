"""Under "both" with REVERIE_DREAM_RELATIONS=unread, the relation of a line the word rules cannot read
(mostly CJK letters) is the learned head's: the English rules find no change cue there and call every
such line new (core/dream/judgment/relations.py, pools.unread_by_head)."""
from __future__ import annotations

import pytest

from core.dream.judgment import pools, relations
from core.dream.judgment.relations import Candidate

OTHER = Candidate("x", "营业时间是早上八点到晚上十点", 0.3)


@pytest.mark.parametrize("bullet, fact, kind", [
    # a true update buried in a long line of the day's chatter
    ("豆浆每杯卖 6 元", "今天收摊早，隔壁说房租要涨，我们商量了一下，豆浆从 6 元一杯调到 7 元，油条不变",
     relations.UPDATE),
    ("老陈负责周一的质检报表", "老陈调去仓库了，周一的质检报表改由小杨负责", relations.UPDATE),
    # the same fact in another order
    ("店里不收现金，只收微信和支付宝", "店里只收微信和支付宝，不收现金", relations.DUPLICATE),
    # the same sentence about another person; a long line about another aspect of the subject
    ("老陈负责周一的质检报表", "小杨负责周三的库存报表", relations.NEW),
    ("店里的面条用本地磨的高筋面粉", "今天面粉供应商送货晚了两个小时，差点耽误午市，跟他说下次提前一天送", relations.NEW),
])
def test_the_head_decides_the_relation_of_a_chinese_line(bullet, fact, kind):
    candidates = [Candidate("b", bullet, 0.6), OTHER]
    assert relations.relate(fact, candidates).kind == relations.NEW        # the rules read nothing
    got = relations.relate(fact, candidates, unread=True)
    assert got.kind == kind, got
    assert got.target == ("b" if kind != relations.NEW else "")


def test_an_english_line_stays_the_rules():
    fact, candidates = "The Tuesday stand-up now starts at 10:30", [Candidate("b", "Stand-up is at 9:45", 0.6)]
    rules = relations.relate(fact, candidates)
    assert relations.relate(fact, candidates, unread=True) == rules


def test_the_switch(monkeypatch):
    monkeypatch.setenv("REVERIE_DREAM_RELATIONS", "unread")
    assert pools.unread_by_head() and not pools.override_on()
    monkeypatch.setenv("REVERIE_DREAM_RELATIONS", "rules")
    assert not pools.unread_by_head()
    monkeypatch.delenv("REVERIE_DREAM_RELATIONS")
    assert pools.unread_by_head() == pools.UNREAD_BY_HEAD
