"""Statements from real-shaped markdown logs (synthetic, English and Chinese)."""
from __future__ import annotations

from core.dream.pipeline.extraction import statements

GAME_LOG = """---
title: dev log
tags: [game]
---
# 2026-02-03

## Game design

- **Battle System:**
  - Gold currency
  - Turn order decided by speed, ties broken by level
- Party size is capped at four heroes
  - v2
**Editor**: vim with the tabs plugin

| Server | Role | Port |
|--------|------|------|
| atlas  | build runner | 8022 |
| hermes | staging db | 5433 |

```bash
make deploy --force
rm -rf build/
```

> Quoted from the review bot: constrain palette entries to the 16 base colours

---
- ~~The assets live in /srv/old-assets~~
- ❌ wrong path: /opt/game/assets2
- [10:42] Decided the save files go under ~/.local/share/questgame
1. Numbered lists are read as well
"""

CHINESE_LOG = """# 2026-02-04

## 服务器

**关键洞察**：
- 单Agent = 养搭档
- 多Agent = 组织架构

- **配置**：4核4G 50M带宽
- 部署
  - 用 Docker Compose，不再手动起服务

**称呼**：馆长
"""


def _texts(log: str) -> list[str]:
    return [s.text for s in statements(log.splitlines())]


def test_headers_separators_code_quotes_and_front_matter_are_not_statements():
    texts = _texts(GAME_LOG)
    joined = "\n".join(texts)
    assert "Battle System" not in texts and "Battle System:" not in joined.splitlines()
    assert not any(t.startswith("---") or t in ("Game design", "2026-02-03") for t in texts)
    assert "make deploy" not in joined and "rm -rf" not in joined
    assert "palette" not in joined and "title: dev log" not in joined


def test_a_sub_bullet_carries_its_header_parent_and_a_short_one_its_parent():
    texts = _texts(GAME_LOG)
    assert "Battle System: Gold currency" in texts
    assert "Battle System: Turn order decided by speed, ties broken by level" in texts
    assert "Party size is capped at four heroes: v2" in texts
    assert "Party size is capped at four heroes" in texts


def test_a_bold_label_reads_as_label_value_within_its_heading():
    assert "Game design — Editor: vim with the tabs plugin" in _texts(GAME_LOG)


def test_a_table_row_is_read_with_its_header():
    texts = _texts(GAME_LOG)
    assert "Server: atlas; Role: build runner; Port: 8022" in texts
    assert "Server: hermes; Role: staging db; Port: 5433" in texts
    assert not any("Server: Server" in t or "---" in t for t in texts)


def test_lines_the_log_marks_wrong_are_not_statements_and_stamps_are_dropped():
    texts = _texts(GAME_LOG)
    assert not any("old-assets" in t or "assets2" in t for t in texts)
    assert "Decided the save files go under ~/.local/share/questgame" in texts
    assert "Numbered lists are read as well" in texts


def test_chinese_header_only_lines_are_subjects_not_statements():
    texts = _texts(CHINESE_LOG)
    assert "关键洞察" not in texts and "关键洞察：" not in texts
    assert "关键洞察: 单Agent = 养搭档" in texts
    assert "关键洞察: 多Agent = 组织架构" in texts
    assert "服务器 — 配置: 4核4G 50M带宽" in texts
    assert "部署: 用 Docker Compose，不再手动起服务" in texts
    assert "服务器 — 称呼: 馆长" in texts


def test_line_numbers_point_at_the_log_and_a_wrapped_bullet_is_one_statement():
    log = "# 2026-02-05\n\n- The staging cluster runs in\n  Frankfurt since the move\n- Backups at 02:00\n"
    found = statements(log.splitlines())
    assert [(s.text, s.first, s.last) for s in found] == [
        ("The staging cluster runs in Frankfurt since the move", 3, 4), ("Backups at 02:00", 5, 5)]


def test_reading_from_a_later_line_skips_what_was_read():
    log = "# 2026-02-05\n- first fact here\n- second fact here\n"
    assert [s.text for s in statements(log.splitlines(), start=2)] == ["second fact here"]


def test_status_lines_are_left_out_but_an_inventory_in_one_log_is_kept(tmp_path):
    from core.dream.pipeline.material import gather
    from core.dream.state import ConsolidationState
    from core.store.paths import WorkspacePaths

    memory = tmp_path / "memory"
    memory.mkdir()
    for day in range(1, 4):
        beats = "\n".join(f"- [{h:02d}:{m:02d}] 心跳检查：系统稳定，队列 {h % 3}" for h in range(0, 24, 6) for m in (0, 30))
        (memory / f"2026-03-0{day}.md").write_text(f"# 2026-03-0{day}\n\n{beats}\n- Heartbeat run {day}17 ok, queue {day}\n",
                                                encoding="utf-8")
    (memory / "2026-03-04-devices.md").write_text(
        "# 2026-03-04\n\n- Device 17 sends local time\n- Device 18 sends local time\n- Device 19 sends local time\n",
        encoding="utf-8")
    material = gather(WorkspacePaths(tmp_path), ConsolidationState())
    texts = [f.text for f in material.facts]
    assert not any("心跳" in t or "Heartbeat" in t for t in texts)
    assert {"Device 17 sends local time", "Device 18 sends local time", "Device 19 sends local time"} <= set(texts)
    assert material.status_lines == 3 * 8 + 3


def test_a_pasted_review_is_left_out_and_user_md_is_context_not_news(tmp_path):
    from core.dream.pipeline.material import gather
    from core.dream.state import ConsolidationState
    from core.store.paths import WorkspacePaths

    (tmp_path / "USER.md").write_text("# USER\n\n- **Name**: Ines\n- Prefers answers in Portuguese\n", encoding="utf-8")
    memory = tmp_path / "memory"
    memory.mkdir()
    review = "\n".join(f"- 🟠 Major: finding number {n} about the palette code" for n in range(7))
    (memory / "2026-03-05.md").write_text(
        f"# 2026-03-05\n\n{review}\n- Prefers answers in Portuguese\n- The build server is atlas\n", encoding="utf-8")
    material = gather(WorkspacePaths(tmp_path), ConsolidationState())
    assert [f.text for f in material.facts] == ["The build server is atlas"]
    assert material.known == 1 and "Ines" in material.context
    assert (tmp_path / "USER.md").read_text(encoding="utf-8").startswith("# USER")


def test_lines_labelled_wrong_or_replaced_in_any_language_are_not_statements():
    log = """# 2026-02-06
- 错误路径：/opt/app/conf2
- 正确路径：/opt/app/conf
- **Wrong path**: /srv/data-old
- Old bucket name is media-2023 (outdated)
- Veraltet: Server läuft auf Port 8080
- The v1 API is deprecated since March
"""
    assert _texts(log) == ["正确路径：/opt/app/conf", "The v1 API is deprecated since March"]


def test_a_line_ending_with_a_colon_announces_what_follows_and_is_no_statement():
    log = ["# 2026-02-06", "",
           "- **白屏根因**: 缓存文件损坏，修复步骤如下：",
           "  1. 清空 ~/.cache/app 目录",
           "",
           "Perfect! The migration ran clean, and the cache was rebuilt after it. Now commit them all:",
           "```", "git commit -am migrate", "```", "",
           "- The cache lives in ~/.cache/app and is safe to delete"]
    texts = [s.text for s in statements(log)]
    assert not any(t.rstrip().endswith((":", "：")) for t in texts), texts
    assert "The cache lives in ~/.cache/app and is safe to delete" in texts
    assert any("清空 ~/.cache/app 目录" in t for t in texts)


def test_a_row_of_cells_without_a_table_header_is_no_statement():
    log = ["# 2026-02-07", "",
           "**会话归档**",
           "*追加时间：2026-02-07 21:46 | 助手 v4.0 | 最终归档 | 14 项*",
           "",
           "- The release script is `make dist | tee dist.log` and takes ten minutes",
           "- Deploys go to hermes | staging first"]
    texts = [s.text for s in statements(log)]
    assert not any("追加时间" in t for t in texts), texts
    assert "The release script is `make dist | tee dist.log` and takes ten minutes" in texts
    assert "Deploys go to hermes | staging first" in texts
