"""A long log line is judged by the clause that shares the bullet's subject, and the same sentence about
another person or thing is told apart by shape (core/dream/judgment/pair_focus.py)."""
from __future__ import annotations

import pytest

from core.dream.judgment import pair_focus, pools, relations
from core.dream.judgment.relations import Candidate
from core.dream.judgment.signals import unstamped


@pytest.mark.parametrize("bullet, line", [
    ("Nadia leads the Monday yoga class at 7:15", "- Bruno leads the Wednesday pilates class at 18:00."),
    ("Grandpa Tom takes his eye drops after lunch", "- Granny Vi takes her eye drops before bed."),
    ("老陈负责周一的质检报表", "- 小杨负责周三的库存报表"),
    ("阿芳每周二晚上练瑜伽", "- 小敏每周四早上练普拉提"),
])
def test_the_same_sentence_about_another_subject_is_told_apart(bullet, line):
    assert pair_focus.another_subject(bullet, line)


@pytest.mark.parametrize("bullet, line", [
    # the same subject with a new value, a restatement, another language, a long line on the subject
    ("Nadia leads the Monday yoga class at 7:15", "- Nadia's Monday yoga class starts at 7:30 from next week."),
    ("Nadia leads the Monday yoga class at 7:15", "- Monday 7:15 yoga is still Nadia's class, as ever."),
    ("Nadia leads the Monday yoga class at 7:15", "- Nadia leitet montags um 7:15 die Yogastunde."),
    ("老陈负责周一的质检报表", "- 09:20 开会的时候又确认了一遍，周一的质检报表还是老陈来做，他顺便提了下打印机缺墨"),
    ("Allergic to shellfish", "- Schalentier-Allergie, im Restaurant immer sagen."),
])
def test_a_new_value_a_restatement_or_a_translation_is_not_another_subject(bullet, line):
    assert not pair_focus.another_subject(bullet, line)


def test_the_clause_that_shares_the_bullets_subject_is_the_one_judged():
    bullet = "The kiln is fired to cone 6 on Saturdays"
    line = ("- 16:40 Long afternoon at the studio; Petra showed the new glazes, the wheel in the corner "
            "is finally fixed, and the kiln now fires to cone 5 on Sundays instead")
    clause, share = pair_focus.focus(bullet, line)
    assert "kiln" in clause and "cone 5" in clause and share > 0.3
    assert len(pair_focus.clauses(line)) >= 3
    signals = pair_focus.focus_signals(bullet, line)
    assert len(signals) == pair_focus.FOCUS_SIGNALS
    # the clause carries the bullet's slot with another number
    assert signals[5] == 1.0


def test_a_chinese_update_buried_in_a_long_line_keeps_the_old_and_brings_the_new_value():
    bullet = "豆浆每杯卖 6 元"
    line = "- 18:10 今天收摊早，隔壁卖煎饼的说下个月房租要涨，我们商量了一下，豆浆从 6 元一杯调到 7 元，油条不变"
    clause, _share = pair_focus.focus(bullet, line)
    assert "豆浆" in clause
    signals = pair_focus.focus_signals(bullet, line)
    assert signals[8] == 1.0 and signals[9] == 1.0          # old and new value, in the line and in the clause


def test_a_long_line_about_another_aspect_brings_no_new_value_of_the_slot():
    bullet = "The kiln is fired to cone 6 on Saturdays"
    line = ("- 16:40 Kiln shelves cracked again during the Saturday firing; ordered two new ones from "
            "Potclays, and Petra wants a shelf-wash routine before every load")
    signals = pair_focus.focus_signals(bullet, line)
    assert signals[8] == 0.0 and signals[9] == 0.0 and signals[10] == 0.0


def test_a_log_lines_own_clock_stamp_is_no_value():
    assert unstamped("- 14:32 Went through the palette with Noor") == "Went through the palette with Noor"
    assert unstamped("- [09:12] reminder") == "reminder"
    assert unstamped("9:30") == "9:30"          # a time alone is the fact, not a stamp
    bullet, line = "Design crit is on Wednesdays at 14:00", "- 14:32 Design crit ran long; Noor brought pastries"
    assert pair_focus.focus_signals(bullet, line)[6] == 0.0     # no "other time" from the stamp


def test_the_heads_duplicate_or_update_of_another_subjects_line_does_not_override_the_rules():
    fact = "Bruno leads the Wednesday pilates class at 18:00"
    candidates = [Candidate("b1", "Nadia leads the Monday yoga class at 7:15", 0.9),
                  Candidate("b2", "The studio opens at 6:30 on weekdays", 0.4)]
    for kind in (relations.DUPLICATE, relations.UPDATE):
        assert relations._sibling_pick(fact, pools.Choice(0, kind, kind, 0.9, 0.9), candidates)
    assert not relations._sibling_pick(fact, pools.Choice(1, relations.UPDATE, "update", 0.9, 0.9), candidates)
