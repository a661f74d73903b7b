"""The topic words of a log's file name (outline.py) and where they go (lines.py: context, not embedded text)."""
from __future__ import annotations

from core.index.lines import IndexOptions, file_rows
from core.index.outline import file_topic


def test_file_topic_reads_hook_names_and_notes():
    assert file_topic("memory/2026-03-14-mail-access.md") == "mail access"
    assert file_topic("memory/2026-04-24-openclaw_deep-read.md") == "openclaw deep read"
    assert file_topic("memory/people/maya.md") == "maya"
    assert file_topic("memory/topics/ECS-PROXY-CONFIG-20260627.md") == "ECS PROXY CONFIG"


def test_plain_dated_logs_and_top_level_files_have_no_topic():
    for rel in ("memory/2026-03-09.md", "memory/2026-02-19-1206.md", "memory/archive/2026-02/2026-02-03.md",
                "MEMORY.md", "TOOLS.md"):
        assert file_topic(rel) == "", rel


def test_the_topic_is_in_the_context_not_in_the_embedded_text():
    text = "# Session\n\n- Authentication: failing with an application password error\n"
    with_topic, _ = file_rows("memory/2026-03-14-mail-access.md", text)
    without, _ = file_rows("memory/2026-03-14-mail-access.md", text, IndexOptions(file_topic=False))
    row, plain = with_topic[-1], without[-1]
    assert "mail access" in row.context and "gmail" not in plain.context
    assert row.etext == plain.etext and "gmail" not in row.etext     # cached vectors stay valid
