"""polarity.py: a rule's polarity in the corpus' languages, and its crossing with the line's."""
from __future__ import annotations

import numpy as np
import pytest

from core.dream.judgment import features, polarity

PROHIBITION, PERMISSION, OBLIGATION = (np.asarray(v, dtype=np.float32) for v in ([1, 0, 0], [0, 1, 0], [0, 0, 1]))


@pytest.mark.parametrize("text", [
    "Never run the backup job during office hours",
    "No screens for the kids after 7pm",
    "- 禁止在周五下午发版",
    "机房不许带饮料",
    "Keine Entwürfe per Messenger verschicken",
    "Jamais de maquette sans filigrane",
    "Nunca cerrar un trato sin contrato",
    "ベランダで洗濯物を夜干ししない",
])
def test_prohibitions(text):
    assert polarity.polarity(text)[0] == 1.0


@pytest.mark.parametrize("text", [
    "Dependabot PRs may be merged without review",
    "Typo fixes straight to the docs branch are fine",
    "周末可以睡到九点",
    "Gäste dürfen im Garten rauchen",
])
def test_permissions(text):
    assert polarity.polarity(text)[1] == 1.0


@pytest.mark.parametrize("text", [
    "You can't push straight to main",
    "Guests may not smoke indoors",
    "可能明天要加班",
    "可是他一直没回消息",
])
def test_a_denied_or_unrelated_modal_is_no_permission(text):
    assert polarity.polarity(text)[1] == 0.0


@pytest.mark.parametrize("text", [
    "Always reply to a client within one working day",
    "代码合并前必须有两个人 review",
    "Der Wagen muss abends in die Garage",
    "Il faut valider chaque devis",
])
def test_obligations(text):
    assert polarity.polarity(text)[2] == 1.0


def test_a_plain_statement_has_no_polarity():
    assert not polarity.polarity("Moved the logo onto the dark band").any()
    assert not polarity.polarity("茶叶盒这次先打了三个样").any()


def test_the_rule_is_crossed_with_whether_the_line_is_negated():
    rule = "Never force-push a release branch"
    obeyed = polarity.pair_polarity(rule, "Didn't force-push, opened a fix-up commit instead")
    broken = polarity.pair_polarity(rule, "Force-pushed release/3.1 to fix the message")
    assert len(obeyed) == len(broken) == polarity.POLARITY_SIGNALS
    crossings = slice(6, None)
    # prohibition x negated line / prohibition x plain line
    assert obeyed[crossings][3] == 1.0 and obeyed[crossings][4] == 0.0
    assert broken[crossings][3] == 0.0 and broken[crossings][4] == 1.0


def test_the_pair_features_carry_polarity_only_for_a_pinned_bullet():
    bullet, line = "禁止在周五下午发版", "周五下午四点发出去吧，就这一次"
    free, pinned = features.pair_features([bullet, bullet], [line, line], None, None, [False, True])
    tail = slice(len(free) - polarity.POLARITY_SIGNALS, None)
    assert not free[tail].any()
    assert np.array_equal(pinned[tail], polarity.pair_polarity(bullet, line))
    assert np.array_equal(free[:tail.start][1:], pinned[:tail.start][1:])
