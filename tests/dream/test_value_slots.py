"""What counts as a new value of a bullet's slot, in the shapes people write values in: a currency
sign before the number, a CJK unit with no space after it, a number whose unit the sentence leaves
out, and another name in a named slot. The dream's cued updates read these (relations._new_value).
Synthetic lines written for this test."""
from __future__ import annotations

import pytest

from core.dream.judgment import persons_lines, pools, relations, signals
from core.dream.judgment.relations import Candidate


@pytest.mark.parametrize("text, units", [
    ("Gym membership €45 a month", {"€": {"45"}}),
    ("Parking $ 1,200 per year", {"$": {"1.200"}}),
    ("Taxi 35 € to the airport", {"€": {"35"}}),
    ("豆花 8元一碗，凉面 12元", {"元": {"8", "12"}}),   # one CJK unit, not "元一碗" and "元"
])
def test_units_of_a_number(text, units):
    assert signals.values(text)["units"] == units


@pytest.mark.parametrize("bullet, fact, changed", [
    ("Gym membership €45 a month", "Gym membership goes up to €49 from March", True),
    ("Gym membership €45 a month", "Paid the gym membership, €45 as usual", False),
    ("会员费每月 128 元", "会员费从下个月起涨到 158", True),           # the fact leaves the unit out
    ("豆花 8元一碗，凉面 12元", "豆花涨到10元了", True),
    ("Yoga class at 19:00, €12", "Yoga is at the new studio from now on", False),
    ("Dentist: Dr. Amsel in Mitte", "New dentist is Dr. Okafor in Kreuzberg", True),
])
def test_a_new_value_of_the_slot(bullet, fact, changed):
    assert relations._new_value(bullet, fact) == changed


@pytest.mark.parametrize("bullet, fact, renamed", [
    ("Accountant: Berger & Söhne in Graz", "Switched accountant: Kanzlei Wimmer does the books from January", True),
    ("Head gardener Tomas Reyes mows on Mondays", "Ines Varga is head gardener now and mows on Mondays", True),
    # the same named thing on both sides: no rename
    ("Lena asked for the Figma mockups by Friday", "Lena approved: rename the Figma files now", False),
    # names that differ on lines about different things: no shared slot
    ("Phase 7B: wired the export job", "Skip Grafana for now", False),
])
def test_another_name_in_the_slot(bullet, fact, renamed):
    assert persons_lines.slot_renamed(bullet, fact) == renamed


def test_a_range_of_times_does_not_hide_the_cjk_words_after_it():
    words = persons_lines.content_words("开放时间 08:00-12:00、14:00-18:00，每周三闭馆")
    assert {"闭馆", "周三"} <= words


def test_a_cued_override_lands_only_on_a_bullet_whose_slot_it_changes(monkeypatch):
    # The head (fixed here) is surer of a bullet whose slot the fact does not change; the policy sets
    # that one aside and takes the head's update of the bullet whose value the fact replaces.
    fact = "Moved the web hosting to Hetzner, same domain"
    other = Candidate("o", "Hetzner sent the invoice for the storage box", 0.7)
    right = Candidate("r", "Web hosting: DigitalOcean droplet in Frankfurt", 0.6)
    sure = {"o": 0.97, "r": 0.9}

    def views(_fact, candidates):
        return [pools.Judged({"update": sure[c.key], "duplicate": 0.0, "refinement": 0.0,
                              "distinct": 1 - sure[c.key]}, 1.0, False) for c in candidates]

    monkeypatch.setattr(relations, "_views", views)
    assert relations._new_value(right.text, fact) and not relations._new_value(other.text, fact)
    assert relations.relate(fact, [other, right]).target == "o"      # the rules alone: the other bullet
    got = relations.relate(fact, [other, right], policy=pools.HeadPolicy(cued_updates=True))
    assert (got.kind, got.target) == (relations.UPDATE, "r")
    assert pools.choose(views(fact, [other, right])).index == 0      # unfiltered, the head takes "o"


def test_set_aside_makes_a_candidate_another_fact():
    view = pools.Judged({"update": 0.9, "duplicate": 0.05, "distinct": 0.05, "refinement": 0.0}, 0.95, False)
    chosen = pools.choose([pools.set_aside(view)])
    assert chosen.index is None and chosen.kind == relations.NEW
