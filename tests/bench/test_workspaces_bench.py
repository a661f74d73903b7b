"""`reverie bench workspaces DIR`: dreams a copy of every workspace, applies, scores kept / added / junk / secrets."""
from __future__ import annotations

import datetime as dt
import json
import re

from core.bench._workspaces_score import junk_reason, score_workspace
from core.bench.workspaces import copy_workspace
from core.cli import main
from core.dream.review.operations import Change

MEMORY_EN = "# Memory\n\n## Lessons\n\n1. Run the migration on a copy first\n2. Staging restarts at 04:00 UTC\n"
MEMORY_ZH = "## 账号\n\n| 服务 | 账号 |\n|---|---|\n| 邮件 | ops@example.org |\n\n## 经验\n\n- 升级前先备份数据库\n"


def make(root, name, memory, logs):
    ws = root / name
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text(memory, encoding="utf-8")
    for rel, text in logs.items():
        path = ws / "memory" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def test_the_bench_dreams_applies_and_prints_one_line_per_workspace_and_a_summary(tmp_path, capsys):
    make(tmp_path / "wss", "en", MEMORY_EN, {
        "2026-11-02-standup.md": "# Standup\n\n- Jonas covers on-call for Orchard on weekends\n---\n**Status:**\n",
        "2026-11-03.md": "# 2026-11-03\n\n- The billing service moved to the Frankfurt region\n"})
    make(tmp_path / "wss", "zh", MEMORY_ZH, {"2026/2026-11-04.md": "# 日志\n\n- 馆长决定每周一发布周报，附上数据来源\n"})
    out = tmp_path / "figures.json"
    assert main(["bench", "workspaces", str(tmp_path / "wss"), "--no-model", "--out", str(out)]) == 0
    lines = capsys.readouterr().out.strip().split("\n")
    assert [line.split()[1] for line in lines[:2]] == ["name=en", "name=zh"]
    assert re.fullmatch(r"workspace name=en logs=2 seconds=[\d.]+ kept=1\.000 replaced=0 added=2 junk=0 secrets=0 .*",
                        lines[0])
    assert re.fullmatch(r"workspaces n=2 kept=1\.000 replaced=0 added=3 junk=0 junk_share=0\.000 secrets=0",
                        lines[-1])
    figures = json.loads(out.read_text(encoding="utf-8"))
    assert figures["summary"] == lines[-1] and figures["workspaces"][1]["logs"] == 1
    assert figures["workspaces"][0]["replaced_lines"] == []       # each replace would be listed: old, new, reason


def test_dated_files_get_their_date_as_mtime(tmp_path):
    make(tmp_path, "src", MEMORY_EN, {"2026-11-02-standup.md": "- x\n", "notes.md": "- y\n"})
    newest = copy_workspace(tmp_path / "src", tmp_path / "copy")
    assert newest == dt.date(2026, 11, 2)
    stamp = (tmp_path / "copy/memory/2026-11-02-standup.md").stat().st_mtime
    assert dt.datetime.fromtimestamp(stamp, dt.timezone.utc) == dt.datetime(2026, 11, 2, 12, tzinfo=dt.timezone.utc)


def test_kept_counts_lines_still_there_or_replaced_by_a_line_citing_them_and_junk_is_named():
    original = "## A\n\n- one fact here\n- a second fact\n- third fact gone\n"
    update = Change(id="c1", kind="update", op="replace", section="A", bullet_id="m-1",
                    before="- a second fact", after="- a second fact, changed <!-- id:m-1 -->",
                    reason="updated from memory/2026-11-03.md: a new value")
    adds = [Change(id=f"c{n}", kind="add", op="add", section="A", bullet_id=f"m-{n}", after=f"- {text} <!-- id:m-{n} -->")
            for n, text in enumerate(["**Battle System:**", "---", "| a | b |", "ok", "**关键洞察**：", "api_key = sk-proj-"
                                      "4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c", "Maya prefers tea"], start=2)]
    result = "## A\n\n- one fact here\n- a second fact, changed <!-- id:m-1 -->\n" + "\n".join(c.after for c in adds)
    score = score_workspace(original, result, [update] + adds)
    assert (score.original_lines, score.kept_lines) == (4, 3) and round(score.kept, 2) == 0.75
    assert score.replaced == 1                        # kept, but as the replace made it: said apart
    assert score.replaced_lines == [{"old": "- a second fact", "new": "- a second fact, changed <!-- id:m-1 -->",
                                     "reason": "updated from memory/2026-11-03.md: a new value"}]
    assert score.added == 7 and len(score.junk) == 5 and len(score.secrets) == 1
    assert [junk_reason(c.after) for c in adds[:5]] == ["header-only", "separator", "table row",
                                                         "under four letters", "header-only"]
    assert junk_reason("- Maya prefers tea") == "" and junk_reason("- 周五在家办公") == ""
