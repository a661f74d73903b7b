"""Under the default judgment ("both") the kind of a line whose letters are mostly CJK is the learned
head's alone: the word rules are English phrases and find nothing in it, so their "durable" there is a
default, not a judgment (core/dream/judgment/signals.rules_unread)."""
from __future__ import annotations

import datetime as dt

from tests.support.dreamkit import write_log

from core.dream.judgment import kinds, signals, word_kinds
from core.dream.pipeline.consolidator import run_dream

NOW = dt.datetime(2026, 12, 5, 22, tzinfo=dt.timezone.utc)

# Status lines without a to-do marker: the rules call them durable, the head transient below the veto.
STATUS_ZH = ["新来的服务员还在熟悉点单系统", "冰柜的温度最近不太稳定"]
DURABLE_ZH = "店里的面条都用本地磨的高筋面粉"


def test_which_lines_the_rules_cannot_read():
    assert signals.rules_unread("老王负责每周一早上进货")
    assert signals.rules_unread("- [09:12] 数据库用 Postgres，不再用 MySQL 了")   # mixed: 8 of 21 letters CJK
    assert not signals.rules_unread("Leo's EpiPen is in the red bag")
    assert not signals.rules_unread("Deploys go through `make ship` (见 wiki)")   # mostly Latin letters


def test_a_chinese_status_line_is_held_back_by_the_head_even_below_the_veto():
    for line in STATUS_ZH:
        assert word_kinds.classify_fact(line).kind == kinds.DURABLE          # the rules see nothing
    # veto_p above 1: the veto can never fire, so only the unread path can hold a line back
    judged = kinds.classify_facts_both(STATUS_ZH + [DURABLE_ZH], veto_p=1.01)
    assert [k.kind for k in judged] == [kinds.TRANSIENT, kinds.TRANSIENT, kinds.DURABLE], judged
    # an English line is still the rules' (no veto possible at 1.01)
    assert kinds.classify_facts_both(["Still waiting on the vendor's reply"], veto_p=1.01)[0].kind == \
        word_kinds.classify_fact("Still waiting on the vendor's reply").kind


def test_a_line_that_restates_a_bullet_is_never_held_back():
    line = STATUS_ZH[0]
    assert kinds.classify_facts_both([line], kept=[line])[0].kind == kinds.DURABLE


MEMORY = """# Memory

## 店里
- 营业时间是早上八点到晚上十点
- 老王负责每周一早上进货
- 店里不收现金，只收微信和支付宝
"""


def test_a_default_dream_holds_back_a_chinese_status_line_and_adds_a_chinese_fact(workspace):
    workspace.paths.memory_md.write_bytes(MEMORY.encode("utf-8"))
    write_log(workspace, "2026-12-04", [STATUS_ZH[0], DURABLE_ZH])
    proposal = run_dream(workspace, None, now=NOW, apply=False).proposal
    added = " ".join(c.after for c in proposal.changes if c.kind == "add")
    assert DURABLE_ZH in added and STATUS_ZH[0] not in added, proposal.changes
