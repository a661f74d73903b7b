"""`reverie bench retention` at a small size, with the real SmolLM2, so it never rots."""
from __future__ import annotations

import re

import pytest

from core.bench.retention import build_conversation
from core.cli import main
from core.harness.messages import orphan_results

LAST_LINE = re.compile(r"^retention model=(\S+) daily=(\d\.\d\d) offload=(\d\.\d\d) summary=(\d\.\d\d) "
                       r"memory=(\d\.\d\d) ratio=(\d+\.\d)$")


def test_the_planted_conversation_has_every_fact_once_and_well_formed_tool_pairs():
    messages, facts = build_conversation(300, 50, big_results=3)
    assert len(messages) == 300 and len(facts) == 50
    assert not orphan_results(messages)
    text = "\n".join(m.get("content") or "" for m in messages)
    for fact in facts:
        assert text.count(fact.value) == 1 and fact.sentence in text
    assert len({f.value for f in facts}) == 50
    assert sum(f.where == "big_tool" for f in facts) == 3
    big = [m for m in messages if len(m.get("content") or "") >= 100_000]
    assert len(big) == 3
    for fact in (f for f in facts if f.where == "big_tool"):
        holder = next(m for m in big if fact.value in m["content"])
        assert holder["content"].index(fact.value) > 2_000       # beyond the eviction preview


@pytest.mark.slow
def test_retention_bench_small_run(tmp_path, capsys):
    # No 100 kB results here: every fact sits in an ordinary message line, which search must find.
    code = main(["bench", "retention", "--messages", "64", "--facts", "8", "--big", "0",
                 "--workspace", str(tmp_path / "ws")])
    out = capsys.readouterr().out.strip().splitlines()
    assert code == 0
    match = LAST_LINE.match(out[-1])
    assert match, out[-1]
    assert match.group(1) == "smollm2-135m-instruct-q4_1"
    assert match.group(3) == "1.00"                               # the offloaded log holds every fact
    assert any("raw-log-has-all=True" in line for line in out)
    assert float(match.group(6)) > 1.0
    assert (tmp_path / "ws" / "sessions" / "bench-retention.log.jsonl").exists()
    assert float(match.group(5)) >= 0.5                           # the dream read the session log


def test_retention_bench_without_a_model_dreams_the_session_log_into_memory(tmp_path, capsys):
    code = main(["bench", "retention", "--no-model", "--messages", "64", "--facts", "8", "--big", "1",
                 "--workspace", str(tmp_path / "ws")])
    out = capsys.readouterr().out.strip().splitlines()
    assert code == 0
    match = LAST_LINE.match(out[-1])
    assert match, out[-1]
    assert match.group(1) == "none" and match.group(2) == "0.00"        # no model: no flush into the daily logs
    assert float(match.group(5)) >= 0.5
    memory = (tmp_path / "ws" / "MEMORY.md").read_text()
    assert "src:session:bench-retention#" in memory                     # sourced to the messages
