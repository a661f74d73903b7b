"""Candidate pools (core/dream/judgment/pools.py): the corpus' pools, the pairs they train, picking
one bullet among several (or none) from the head's view, and "both" (the word rules unless the head
is sure of another answer)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from core.dream.judgment import dataset, pools
from core.dream.judgment.pools import CONFLICT, DUPLICATE, NEW, UPDATE, Judged
from core.dream.judgment.relations import Candidate, relate
from core.dream.judgment.wording import Rarity


def test_the_corpus_has_pools_in_many_domains_and_languages():
    found = pools.load_pools()
    assert len(found) >= 100
    assert len({p.domain for p in found}) >= 15
    assert len({p.lang for p in found}) >= 6
    assert all(len(p.bullets) >= 3 for p in found)
    assert sum(p.match is None for p in found) >= 20          # pools where the fact touches no bullet
    assert sum(p.match is not None and p.match > 0 for p in found) >= 40   # the match is not the first bullet


def test_pool_pairs_give_the_match_its_label_and_the_neighbours_distinct():
    pool = pools.Pool("x-Q1", "x", "Pump 2 now runs at 55 l/min", ("Pump 1 feeds the loop", "Pump 2 runs at 40 l/min"),
                      frozenset(), 1, "update", "en")
    pairs = pools.pool_pairs([pool])
    assert [(p.bullet, p.relation) for p in pairs] == [("Pump 1 feeds the loop", "distinct"),
                                                         ("Pump 2 runs at 40 l/min", "update")]


def _write(tmp_path, record):
    (tmp_path / "pools").mkdir(exist_ok=True)
    (tmp_path / "pools" / "x.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")


@pytest.mark.parametrize("match,relation", [(None, "update"), (0, "distinct"), (5, "update"), (0, "sameish")])
def test_a_pool_whose_label_and_match_disagree_is_refused(tmp_path, match, relation):
    _write(tmp_path, {"id": "x-Q1", "bullets": ["a", "b"], "match": match, "relation": relation, "line": "c"})
    with pytest.raises(dataset.CorpusError):
        pools.load_pools(tmp_path)


def test_a_good_pool_file_loads(tmp_path):
    _write(tmp_path, {"id": "x-Q1", "bullets": ["a", "b"], "pinned": [1], "match": 1, "relation": "conflict",
                      "line": "c", "lang": "de"})
    (pool,) = pools.load_pools(tmp_path)
    assert pool.pinned == frozenset({1}) and pool.match == 1 and pool.lang == "de" and pool.domain == "x"


FREE = ("duplicate", "update", "refinement", "distinct")


def _free(duplicate=0.0, update=0.0, refinement=0.0, related=1.0):
    return Judged({"duplicate": duplicate, "update": update, "refinement": refinement,
                   "distinct": 1.0 - duplicate - update - refinement}, related, False)


def test_choose_picks_the_candidate_most_surely_related_not_the_first():
    judged = [_free(update=0.6), _free(update=0.9), _free(duplicate=0.7, related=0.6)]
    choice = pools.choose(judged)
    assert (choice.index, choice.kind, choice.label) == (1, UPDATE, "update")
    assert choice.sure == pytest.approx(0.9)


def test_choose_finds_the_fact_new_when_every_bullet_is_another_fact():
    judged = [_free(update=0.2), _free(duplicate=0.1), _free(related=0.2)]    # the last: the gate turned it away
    choice = pools.choose(judged)
    assert choice.index is None and choice.kind == NEW
    # how sure it is that nothing matched: the least sure of the candidates (the first, 1 - 0.2)
    assert choice.sure == pytest.approx(0.8)


def test_agreeing_with_a_pin_counts_only_when_the_fact_restates_it():
    agree = {"conflict": 0.05, "agreement": 0.9, "distinct": 0.05}
    assert pools.choose([Judged(agree, 1.0, True, restates=False)]).kind == NEW
    assert pools.choose([Judged(agree, 1.0, True, restates=True)]).kind == DUPLICATE


def test_judged_row_renormalises_and_applies_the_gate():
    classes = ("agreement", "conflict", "distinct", "duplicate", "refinement", "update")
    row = np.asarray([0.1, 0.1, 0.2, 0.1, 0.1, 0.4])
    view = pools.judged_row(classes, row, 0.9, pinned=False)
    assert set(view.mass) == set(FREE) and sum(view.mass.values()) == pytest.approx(1.0)
    assert view.mass["update"] == pytest.approx(0.4 / 0.8)
    turned_away = pools.judged_row(classes, row, 0.3, pinned=False)
    assert turned_away.mass["distinct"] == 1.0
    pin = pools.judged_row(classes, row, 0.9, pinned=True)
    assert set(pin.mass) == {"conflict", "agreement", "distinct"}


def test_both_keeps_the_rules_unless_the_head_is_sure():
    judged = [_free(update=0.7), _free(update=0.05)]
    # the rules say bullet 1 is updated; the head prefers bullet 0 at 0.7: under 0.8, the rules stand
    choice, overrode = pools.combine(UPDATE, 1, judged, threshold=0.8)
    assert (choice.kind, choice.index, overrode) == (UPDATE, 1, False)
    choice, overrode = pools.combine(UPDATE, 1, judged, threshold=0.6)
    assert (choice.kind, choice.index, overrode) == (UPDATE, 0, True)


def test_both_turns_a_rule_update_into_new_when_the_head_is_sure_the_bullet_is_another_fact():
    # "Line 3 ..." against "Line 1 ...": the rules read one subject with a new value
    judged = [_free(update=0.05, related=0.9)]
    choice, overrode = pools.combine(UPDATE, 0, judged, threshold=0.8)
    assert choice.kind == NEW and overrode
    unsure = [_free(update=0.4)]
    assert pools.combine(UPDATE, 0, unsure, threshold=0.8) == (pools.Choice(0, UPDATE), False)


def test_both_lets_the_head_find_a_conflict_the_rules_missed():
    pin = Judged({"conflict": 0.92, "agreement": 0.05, "distinct": 0.03}, 0.95, True)
    choice, overrode = pools.combine(NEW, None, [_free(), pin], threshold=0.8)
    assert (choice.kind, choice.index, overrode) == (CONFLICT, 1, True)


def test_both_agrees_without_overriding_when_both_say_the_same():
    choice, overrode = pools.combine(DUPLICATE, 0, [_free(duplicate=0.9)], threshold=0.8)
    assert (choice.kind, choice.index, overrode) == (DUPLICATE, 0, False)


def test_the_gate_alone_never_overrides_a_rule_update():
    # "Only one hive left" against "keeps two hives": the gate turns the bullet away, the relation head
    # itself reads an update; the rules' update stands
    classes = ("agreement", "conflict", "distinct", "duplicate", "refinement", "update")
    gated = pools.judged_row(classes, np.asarray([0.0, 0.0, 0.15, 0.05, 0.0, 0.8]), 0.01, pinned=False)
    assert gated.mass["distinct"] == 1.0 and pools.choose([gated]).kind == NEW
    assert pools.combine(UPDATE, 0, [gated], threshold=0.7) == (pools.Choice(0, UPDATE), False)


# The shipped heads on pools written for this test (not in the corpus).
def _pool(bullets):
    return [Candidate(f"b{i}", b, 0.8 - 0.05 * i) for i, b in enumerate(bullets)]


def _not_in_corpus(*texts):
    known = {p.line for p in pools.load_pools()} | {b for p in pools.load_pools() for b in p.bullets}
    known |= {p.line for p in dataset.load_pairs()} | {p.bullet for p in dataset.load_pairs()}
    assert not set(texts) & known


def test_the_head_picks_the_bullet_of_the_changed_slot_among_neighbours():
    bullets = ["Greenhouse 1 grows the peppers", "Greenhouse 2 opens its vents at 27 °C", "Greenhouse 2 grows lettuce"]
    fact = "Greenhouse 2 now opens its vents at 24 °C"
    _not_in_corpus(fact, *bullets)
    relation = relate(fact, _pool(bullets), learned=True)
    assert (relation.kind, relation.target) == (UPDATE, "b1")


def test_a_numbered_neighbour_is_a_new_fact_for_the_head():
    bullets = ["Kiln 1 fires the stoneware at 1240 °C", "Kiln 2 fires the earthenware at 1080 °C",
               "Kiln 1 is loaded on Mondays"]
    fact = "Kiln 3 fires the raku pieces at 950 °C"
    _not_in_corpus(fact, *bullets)
    assert relate(fact, _pool(bullets), learned=True).kind == NEW


def test_both_takes_the_heads_update_where_the_rules_see_nothing():
    bullets = ["裁缝店在东街 5 号", "裁缝店的师傅姓胡", "裁缝店改衣服一般要三天"]
    fact = "裁缝店搬到了西街 18 号"
    _not_in_corpus(fact, *bullets)
    candidates = _pool(bullets)
    rarity = Rarity(bullets + [fact])
    assert relate(fact, candidates, rarity).kind == NEW                     # the word rules alone
    relation = relate(fact, candidates, rarity, policy=pools.HeadPolicy(everywhere=True))
    assert (relation.kind, relation.target) == (UPDATE, "b0") and "overrode" in relation.reason


def test_the_override_is_off_in_the_dream_unless_asked(monkeypatch):
    monkeypatch.delenv("REVERIE_DREAM_RELATIONS", raising=False)
    assert pools.override_on() is pools.RELATIONS_IN_BOTH
    monkeypatch.setenv("REVERIE_DREAM_RELATIONS", "both")
    assert pools.override_on()
    monkeypatch.setenv("REVERIE_DREAM_RELATIONS", "rules")
    assert not pools.override_on()
