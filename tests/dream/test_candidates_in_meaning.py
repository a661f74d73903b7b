"""A Chinese fact is compared with its own bullet even when the dream's English embedder ranks every
Chinese line alike: the candidates also come from the learned heads' multilingual sentence model
(judge._closest_in_meaning). Synthetic text written for this test; the real sentence model."""
from __future__ import annotations

from core.dream.pipeline import judge
from core.dream.pipeline.material import Fact
from core.dream.pipeline.working import WorkingMemory
from core.dream.judgment import relations

# Eleven bullets about other things first, so that a ranking that cannot tell Chinese lines apart
# (every pair scores the same) fills its ten places before it reaches the dentist line.
OTHERS = ["周二晚上去游泳，一次一个小时", "女儿在实验小学读三年级", "家里的宽带是电信的，每月一百二",
          "每周六上午去菜市场买菜", "车停在小区地下二层", "婆婆住在杭州，每个月去看一次",
          "儿子对芒果过敏", "物业费每年一月交", "家里的猫叫年糕，每天喂两次", "周末一般去公园跑步",
          "早上七点叫孩子起床"]
DENTIST = "牙医是市口腔医院的刘医生，每半年洗一次牙"


def _memory() -> WorkingMemory:
    lines = "\n".join(f"- {text}" for text in OTHERS + [DENTIST])
    return WorkingMemory(f"# MEMORY\n\n## 家里\n{lines}\n")


def _flat(_a: str, _b: str) -> float:
    return 0.9       # an embedder that sees all short Chinese lines as one sentence


def test_a_chinese_facts_own_bullet_is_a_candidate_when_the_first_ranking_is_noise():
    fact = Fact("牙医换成了社区医院的王医生", ("memory/2026-11-02.md#L3",), "2026-11-02")
    pool = judge.candidates(fact, _memory(), _flat)
    texts = [c.text for c, _entry in pool]
    assert DENTIST in texts
    assert len(texts) == judge.CANDIDATES + 1      # the first ranking's ten, and one more from meaning
    # the candidate added from meaning keeps the dream's own score, which the word rules read
    assert next(c for c, _e in pool if c.text == DENTIST).cosine == 0.9


def test_the_head_then_reads_the_new_value_of_that_bullet():
    fact = Fact("牙医换成了社区医院的王医生", ("memory/2026-11-02.md#L3",), "2026-11-02")
    pool = judge.candidates(fact, _memory(), _flat)
    got = relations.relate(fact.text, [c for c, _e in pool], learned=True)
    assert got.kind == relations.UPDATE
    assert next(c.text for c, _e in pool if c.key == got.target) == DENTIST


def test_no_extra_candidates_when_there_are_no_bullets():
    fact = Fact("牙医换成了社区医院的王医生", ("memory/2026-11-02.md#L3",), "2026-11-02")
    assert judge.candidates(fact, WorkingMemory("# MEMORY\n"), _flat) == []
