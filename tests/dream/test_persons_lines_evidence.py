"""A dream replaces a line the person wrote only on strong evidence that the fact is a new value of
that line's slot (core/dream/judgment/persons_lines.py); a long chatty log line that shares the
line's subject is added beside it, and the person's line stays byte for byte."""
from __future__ import annotations

import datetime as dt
import json

from tests.support.dreamkit import write_log

from core.dream.judgment import dataset, persons_lines, pools
from core.dream.pipeline.consolidator import run_dream

NOW = dt.datetime(2026, 12, 5, 22, tzinfo=dt.timezone.utc)

STAGING = "Staging database lives on db-stg-02.internal, port 5433"
DISK = "磁盘空间: 58%使用率"
CHATTY_ZH = "巡检记录— 磁盘空间: 已用61%，不再告警；顺手清理了日志目录；下午把备份脚本改成每2小时跑一次；周会纪要发给了小王"
CHATTY_EN = ("Spent the morning on the staging database at db-stg-05.internal, port 5433: rotated the logs; "
             "reran the migrations; paged Omar about the disk; wrote the incident note")


def test_a_new_value_of_the_lines_slot_may_replace_it_in_english_and_chinese():
    assert persons_lines.why_not_replace("Staging DB moved to db-stg-05.internal, same port.", STAGING) == ""
    assert persons_lines.why_not_replace("系统自检— 磁盘空间: 已用61%", DISK) == ""
    assert persons_lines.why_not_replace("备份时间改为每天凌晨3点", "备份时间：每天凌晨2点") == ""
    # a name of the line that the fact says is gone is evidence even when few words are shared
    assert persons_lines.why_not_replace(
        "We dropped PagerDuty for Grafana OnCall when the contract ran out; schedules were copied over.",
        "Primary on-call one week in four, paged through PagerDuty") == ""


def test_a_chatty_line_or_another_label_is_no_evidence():
    assert "clauses" in persons_lines.why_not_replace(CHATTY_ZH, DISK)
    assert "clauses" in persons_lines.why_not_replace(CHATTY_EN, STAGING)
    assert "label" in persons_lines.why_not_replace("备份统计— 平均大小: 2600字节", "文件大小: 1633字节")
    assert "too little" in persons_lines.why_not_replace(
        "Checked that Priya now shows in the send log with message id 7f3a2b91cc04de1a",
        "Newsletter sends need strict daily caps; never raise the batch limit for a test run")


def _corpus_updates() -> list[tuple[str, str]]:
    found = []
    for path in sorted((dataset.CORPUS / "pairs").glob("*.jsonl")):
        for raw in path.read_text(encoding="utf-8").splitlines():
            if raw.strip():
                r = json.loads(raw)
                if r["relation"] == "update" and not r.get("pinned"):
                    found.append((r["bullet"], r["line"]))
    found += [(p.bullets[p.match], p.line) for p in pools.load_pools()
              if p.relation == "update" and p.match not in p.pinned]
    return found


def test_the_shipped_thresholds_are_the_corpus_percentiles_and_let_most_corpus_updates_through():
    updates = _corpus_updates()
    passed = sum(not persons_lines.why_not_replace(line, bullet) for bullet, line in updates) / len(updates)
    assert passed >= 0.80, passed
    cover, longer, clauses = persons_lines.corpus_thresholds(updates)
    assert abs(cover - persons_lines.COVER) < 0.05 and abs(longer - persons_lines.LONGER) < 1.5
    assert abs(clauses - persons_lines.CLAUSES) <= 1


MEMORY = f"""# Memory

## Infrastructure
- {STAGING}
- {DISK}
- Dave prefers short replies
"""


def _dream(workspace, lines):
    workspace.paths.memory_md.write_bytes(MEMORY.encode("utf-8"))
    write_log(workspace, "2026-12-04", lines)
    return run_dream(workspace, None, now=NOW, apply=False).proposal


def test_a_dream_replaces_the_persons_line_with_its_new_value(workspace):
    proposal = _dream(workspace, ["Staging DB moved to db-stg-05.internal, same port.", "系统自检— 磁盘空间: 已用61%"])
    replaced = {c.before.lstrip("- ") for c in proposal.changes if c.kind == "update"}
    assert replaced == {STAGING, DISK}, proposal.changes


def test_a_dream_adds_a_chatty_line_beside_the_persons_line_and_leaves_it_alone(workspace):
    proposal = _dream(workspace, [CHATTY_ZH, CHATTY_EN])
    assert not [c for c in proposal.changes if c.kind == "update"], proposal.changes
    added = [c.after for c in proposal.changes if c.kind == "add"]
    assert any("巡检记录" in line or "磁盘空间" in line for line in added), added


def test_a_second_replace_of_the_persons_line_in_one_dream_needs_the_same_evidence():
    from core.dream.judgment.relations import NEW, UPDATE, Candidate, Relation
    from core.dream.pipeline import judge
    from core.dream.pipeline.material import Fact
    from core.dream.pipeline.working import WorkingMemory

    memory = WorkingMemory(MEMORY)
    line = next(e for e in memory.live() if e.text == STAGING)
    memory.update(line, text="Staging DB is on db-stg-05.internal, port 5433", add_sources=("memory/2026-12-04.md#L1",),
                  op="replace", reason="a new value")
    pool = [(Candidate(line.key, line.text, 0.8), line)]
    chatty = judge._spare_persons_line(Fact(CHATTY_EN, ("memory/2026-12-04.md#L2",)),
                                       Relation(UPDATE, line.key, "same subject", 0.8), pool)
    assert chatty.kind == NEW and "clauses" in chatty.reason
    again = judge._spare_persons_line(Fact("Staging DB moved to db-stg-07.internal, same port.", ("x#L3",)),
                                      Relation(UPDATE, line.key, "same subject", 0.8), pool)
    assert again.kind == UPDATE


def test_what_would_be_written_must_still_say_the_fact():
    """The replace writes the fact restated as what is true now (restate.py). A change cue inside a
    quotation can leave almost nothing ("Config check"): that does not take the person's line's place;
    a restatement that drops only the old value does."""
    from core.dream.judgment import restate
    from core.dream.judgment.relations import NEW, UPDATE, Candidate, Relation
    from core.dream.pipeline import judge
    from core.dream.pipeline.material import Fact
    from core.dream.pipeline.working import WorkingMemory

    quoted = 'Config check: reads 20KB of each page and searches for "expired", "closed", "no longer open" etc.'
    person = "Use exact reads for the config sections."
    assert persons_lines.why_not_replace(quoted, person) == ""          # the fact alone would pass
    assert restate.current_statement(quoted, person) == "Config check"
    assert "keeps" in persons_lines.why_not_written("Config check", quoted)

    switched = "Replaced Northgate Print with Lumen Press for proofs; Northgate's colours drifted on two jobs in a row."
    memory = WorkingMemory(f"# Memory\n\n## Notes\n- {person}\n- Print proofs come from Northgate Print in Leeds\n")
    entries = {e.text: e for e in memory.live()}
    for fact, line, expected in ((quoted, person, NEW), (switched, "Print proofs come from Northgate Print in Leeds", UPDATE)):
        entry = entries[line]
        relation = judge._spare_persons_line(Fact(fact, ("memory/2026-12-04.md#L1",)),
                                             Relation(UPDATE, entry.key, "the fact says X is no longer so", 0.8),
                                             [(Candidate(entry.key, entry.text, 0.8), entry)])
        assert relation.kind == expected, relation


def test_a_trusted_model_is_held_to_the_same_evidence_for_the_persons_line():
    """A model `reverie models check` measured better may pick any bullet to update, but not a line
    the person wrote without the evidence the rules need, restated text included."""
    from core.dream.judgment.relations import NEW, Candidate, Relation
    from core.dream.pipeline import judge
    from core.dream.pipeline.material import Fact
    from core.dream.pipeline.working import WorkingMemory

    quoted = 'Config check: reads 20KB of each page and searches for "expired", "closed", "no longer open" etc.'
    memory = WorkingMemory("# Memory\n\n## Notes\n- Use exact reads for the config sections.\n")
    entry = next(iter(memory.live()))
    pool = [(Candidate(entry.key, entry.text, 0.8), entry)]
    fact = Fact(quoted, ("memory/2026-12-04.md#L1",))
    loose = judge.allowed(fact, Relation(NEW), pool, None, trusted=True)
    assert ("update", entry.key) not in loose and ("duplicate", entry.key) in loose, loose
    fine = judge.allowed(Fact("Use exact reads for the config and cache sections.", ("x#L2",)), Relation(NEW), pool,
                         None, trusted=True)
    assert ("update", entry.key) in fine, fine
