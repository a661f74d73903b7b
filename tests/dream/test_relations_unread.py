"""Under "both" with REVERIE_DREAM_RELATIONS=unread, the relation of a line the word rules cannot read
(mostly CJK letters) is the learned head's: the English rules find no change cue there and call every
such line new (core/dream/judgment/relations.py, pools.unread_by_head)."""
from __future__ import annotations

import pytest

import datetime as dt

from tests.support.dreamkit import proposed_additions

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
    got = relations.relate(fact, candidates, policy=pools.HeadPolicy(unread=True))
    assert got.kind == kind, got
    assert got.target == ("b" if kind != relations.NEW else "")


def test_an_english_line_stays_the_rules():
    fact, candidates = "The Tuesday stand-up now starts at 10:30", [Candidate("b", "Stand-up is at 9:45", 0.6)]
    rules = relations.relate(fact, candidates)
    assert relations.relate(fact, candidates, policy=pools.HeadPolicy(unread=True)) == rules


def test_the_switch(monkeypatch):
    monkeypatch.setenv("REVERIE_DREAM_RELATIONS", "unread")
    assert pools.unread_by_head() and not pools.override_on()
    monkeypatch.setenv("REVERIE_DREAM_RELATIONS", "rules")
    assert not pools.unread_by_head()
    monkeypatch.delenv("REVERIE_DREAM_RELATIONS")
    assert pools.unread_by_head() == pools.UNREAD_BY_HEAD


@pytest.mark.parametrize("bullet, fact, kind", [
    # the default: only a sure "duplicate" of such a line stands (pools.UNREAD_DUPLICATE_P) ...
    ("店里不收现金，只收微信和支付宝", "店里只收微信和支付宝，不收现金", relations.DUPLICATE),
    ("外卖只上美团", "外卖还是只在美团上", relations.DUPLICATE),
    # ... never the head's update, which would rewrite the bullet
    ("豆浆每杯卖 6 元", "今天收摊早，隔壁说房租要涨，我们商量了一下，豆浆从 6 元一杯调到 7 元，油条不变", relations.NEW),
    ("老陈负责周一的质检报表", "老陈调去仓库了，周一的质检报表改由小杨负责", relations.NEW),
    ("老陈负责周一的质检报表", "小杨负责周三的库存报表", relations.NEW),
])
def test_by_default_only_the_heads_sure_duplicate_of_a_chinese_line_stands(bullet, fact, kind):
    candidates = [Candidate("b", bullet, 0.6), OTHER]
    got = relations.relate(fact, candidates, policy=pools.HeadPolicy(unread_duplicates=True))
    assert got.kind == kind, got
    if kind == relations.DUPLICATE:
        assert got.target == "b" and got.probability >= pools.UNREAD_DUPLICATE_P


def test_an_english_line_is_not_read_by_the_head_for_duplicates_either():
    fact, candidates = "Cash is not taken, only cards", [Candidate("b", "Only cards, no cash", 0.8)]
    assert relations.relate(fact, candidates, policy=pools.HeadPolicy(unread_duplicates=True)) == relations.relate(fact, candidates)


def test_with_the_override_on_a_chinese_line_keeps_the_overrides_directions():
    bullet, fact = "豆浆每杯卖 6 元", "今天收摊早，隔壁说房租要涨，我们商量了一下，豆浆从 6 元一杯调到 7 元，油条不变"
    candidates = [Candidate("b", bullet, 0.6), OTHER]
    assert (relations.relate(fact, candidates, policy=pools.HeadPolicy(everywhere=True, unread_duplicates=True))
            == relations.relate(fact, candidates, policy=pools.HeadPolicy(everywhere=True)))


def test_the_duplicate_switch(monkeypatch):
    monkeypatch.delenv("REVERIE_DREAM_RELATIONS", raising=False)
    assert pools.HeadPolicy.of_process(True).unread_duplicates == pools.UNREAD_DUPLICATES
    monkeypatch.setenv("REVERIE_DREAM_RELATIONS", "rules")
    assert not pools.HeadPolicy.of_process(True).unread_duplicates


# A shop's memory and a Chinese restatement of one of its bullets (also used by the sameness test).
KEYS_MEMORY = "# Memory\n\n## 店里\n- 仓库钥匙在老周那里\n- 营业时间是早上八点到晚上十点\n"
KEYS_RESTATED = "钥匙还是老周拿着，仓库的"
HOURS_RESTATED = "店里早上八点开，晚上十点关"      # no sameness cue: only the unread path can find it
KEYS_NOW = dt.datetime(2026, 12, 5, 22, tzinfo=dt.timezone.utc)


@pytest.mark.parametrize("on", [True, False])
def test_a_dream_adds_no_second_line_for_a_chinese_restatement(workspace, monkeypatch, on):
    monkeypatch.delenv("REVERIE_DREAM_RELATIONS", raising=False)
    monkeypatch.setattr(pools, "UNREAD_DUPLICATES", on)
    monkeypatch.setattr(pools, "SAME_DUPLICATES", False)      # "还是" is a sameness cue: that path is its own test
    added = proposed_additions(workspace, KEYS_MEMORY, "2026-12-04", [HOURS_RESTATED], KEYS_NOW)
    assert (added == []) is on, added
