"""The values the word rules read in a line (wording.values_of): an ISO date is one value, not three
numbers, and what stands in brackets is when the line was written, not a value it states. And which
lines they read as written in another language (wording.foreign)."""
from __future__ import annotations

import pytest

from core.dream.judgment import relations, word_relations, wording
from core.dream.judgment.relations import Candidate
from core.dream.judgment.wording import Rarity, unbracketed, values_of


def test_an_iso_date_is_one_value_not_three_numbers():
    got = values_of("Deployed the cache fix on 2026-04-16")
    assert got["date"] == {"2026-04-16"}
    assert got["number"] == frozenset()


def test_what_stands_in_brackets_states_no_value():
    got = values_of("Nightly sync is healthy (checked 16:02 UTC, 2026-03-05)")
    assert got["time"] == got["date"] == got["number"] == frozenset()
    assert unbracketed("豆浆每杯 6 元（3月定的）").strip() == "豆浆每杯 6 元"


def test_a_log_stamp_in_brackets_is_no_new_value_of_the_bullet():
    bullet = "Nightly sync is healthy (checked 16:02 UTC)"
    fact = "Nightly sync healthy again (checked 20:42 UTC)"
    candidates = [Candidate("b", bullet, 0.8), Candidate("x", "The car is parked in the back lot", 0.1)]
    got = word_relations.relate(fact, candidates, Rarity([bullet, fact, "The car is parked in the back lot"]))
    assert got.kind != "update", got


def test_a_new_date_of_the_same_slot_is_still_read():
    got_old, got_new = values_of("The exam is on 2027-05-03"), values_of("The exam moved to 2027-05-10")
    assert got_old["date"] != got_new["date"]


@pytest.mark.parametrize("text, other", [
    ("Nóminas con Gestoría Ribas, se pagan el 27", True),
    ("Noël à Porto chez son frère Rui, comme chaque année", True),
    ("Las urgencias fuera de horario van al hospital", True),
    ("Call the plumber about the leak before Friday", False),
    ("Figures: matplotlib, PDF out", False),
])
def test_a_short_line_in_another_language_is_read_as_foreign(text, other):
    # a short line has few function words: "con" / "se" / "chez" / "à" count among them
    assert wording.foreign(text) is other


def test_the_rules_read_a_short_restatement_in_another_language_as_the_same_names_and_numbers():
    bullet, fact = "Payroll by Gestoría Ribas, paid on the 27th", "Nóminas con Gestoría Ribas, se pagan el 27"
    got = relations.relate(fact, [Candidate("b", bullet, 0.35)])
    assert (got.kind, got.target) == (relations.DUPLICATE, "b")
