"""An explicit to-do marker at the start of a line is one of the few word rules kept (issue 26): the
writer said it is a task. The English rules know only "TODO"; a marker in another language ("À faire :",
"Pendiente:", "Noch offen:", "待办：", "やること：") holds a line back under the default judgment
("both") whatever the head says, and the bench's promotion table decides the same way. Every line
here was written for this test."""
from __future__ import annotations

import numpy as np
import pytest

from core.bench import judgment_kinds
from core.dream.judgment import kinds, word_kinds

MARKED = [
    "TODO: swap the smoke-alarm batteries",
    "- 待办：把发票寄给会计",
    "**待办**：续签车位合同",
    "À faire : rappeler le garage pour les pneus",
    "- Pendiente: llevar el abrigo a la tintorería",
    "Noch offen: Kündigung des alten Stromvertrags",
    "やること：図書館の本を返す",
    "- [ ] renew the fishing licence",
]
NOT_MARKED = [
    "Pendiente de pago desde marzo, según el banco",      # a state, no colon after the word
    "Offen: Mo–Fr 9–17 Uhr, samstags geschlossen",        # opening hours
    "**Editor**: Helix with the default keymap",
    "老李负责每周三的采购",
]


@pytest.mark.parametrize("line", MARKED)
def test_a_marker_in_any_language_is_a_to_do(line):
    assert kinds.marked_todo(line)


@pytest.mark.parametrize("line", NOT_MARKED)
def test_a_label_that_is_not_a_to_do_marker_is_left_alone(line):
    assert not kinds.marked_todo(line)


def test_by_default_a_marked_line_is_held_back_even_where_the_rules_see_nothing():
    french, spanish = MARKED[3], MARKED[4]
    assert word_kinds.classify_fact(french).kind == kinds.DURABLE        # the English rules read nothing
    # veto above 1: the head can never hold a line back, so only the marker does
    judged = kinds.classify_facts_both([french, spanish, MARKED[1], NOT_MARKED[2]], veto_p=1.01)
    assert [k.kind for k in judged] == [kinds.TRANSIENT] * 3 + [kinds.DURABLE], judged
    assert judged[0].reason == "marked as a to-do"
    # said word for word by a MEMORY.md bullet, the person keeps it
    assert kinds.classify_facts_both([french], kept=[french])[0].kind == kinds.DURABLE


def test_a_secret_stays_a_secret_and_the_head_is_asked_only_where_it_decides():
    secret = word_kinds.classify_fact("À faire : mot de passe du routeur = Tq8!vr(22)")
    assert secret.kind == kinds.SECRET and not kinds.needs_head("À faire : …", secret)
    durable = word_kinds.classify_fact(NOT_MARKED[2])
    assert kinds.needs_head(NOT_MARKED[2], durable) and kinds.needs_head(NOT_MARKED[3], durable)
    assert not kinds.needs_head(MARKED[3], durable)
    classes = ("durable", "one-off", "secret", "transient")
    sure_status = np.asarray([0.05, 0.0, 0.0, 0.95])
    assert kinds.judge_both(NOT_MARKED[2], durable, sure_status, classes, 0.9).kind == kinds.TRANSIENT
    assert kinds.judge_both(NOT_MARKED[2], durable, sure_status, classes, 0.99).kind == kinds.DURABLE
    # a CJK line is the head's even below the veto (rules_unread)
    unsure = np.asarray([0.2, 0.0, 0.0, 0.8])
    assert kinds.judge_both(NOT_MARKED[3], durable, unsure, classes, 0.99).kind == kinds.TRANSIENT


def test_the_promotion_table_decides_markers_and_chinese_lines_as_the_dream_does():
    texts = ["Pendiente: devolver el taladro a Jorge", "冰箱这两天有点响，在观察", "The boat is moored at pontoon C"]
    truth = ["transient", "transient", "durable"]
    classes = ("durable", "transient", "one-off", "secret")
    # the head is wrong on the Spanish to-do, right but unsure on the Chinese status line
    probs = np.asarray([[0.9, 0.1, 0, 0], [0.3, 0.7, 0, 0], [0.8, 0.2, 0, 0]])
    fig = judgment_kinds.table(truth, texts, probs, classes)
    assert fig["rules"]["transient_leak"] == 1.0                       # English rules: both promoted
    both = fig["both, veto p>=0.95"]
    assert both["transient_leak"] == 0.0 and both["durable_recall"] == 1.0
