"""signals.value_changed: a line gives another value of a kind its bullet states (numbers of one unit,
times, days, dates). The dream spares a fact the kind head held back only on this evidence
(core/dream/pipeline/stages._spare_updates)."""
from __future__ import annotations

import pytest

from core.dream.judgment import signals


@pytest.mark.parametrize("bullet,line,changed", [
    ("Choir practice is on Tuesdays at 19:30", "Choir practice moved to Thursdays", True),
    ("Choir practice is on Tuesdays at 19:30", "Choir practice starts at 20:00 from next week", True),
    ("周卡 120 元", "周卡涨到 150 元", True),
    ("Le loyer est de 800 €", "Le loyer passe à 850 € en mars", True),
    ("Choir practice is on Tuesdays at 19:30", "Choir practice is on Tuesdays at 19:30, as always", False),
    ("Choir practice is on Tuesdays at 19:30", "A neighbour dropped off biscuits for the choir", False),
    ("The night porter is Emil", "Emil's daughter starts school on 3 March", False),   # no value the bullet states
])
def test_value_changed_needs_another_value_of_a_kind_the_bullet_states(bullet, line, changed):
    assert signals.value_changed(bullet, line) is changed
