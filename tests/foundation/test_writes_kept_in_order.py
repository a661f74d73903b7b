"""The person's writes are safe: a save that raced an append keeps the log's order, and Redact reaches
the history snapshots too."""
from __future__ import annotations

import datetime as dt

from core.store.documents import with_append

DAY = dt.date(2026, 11, 30)
PASSWORD = "Heron-Glide-3307"


def test_a_line_appended_meanwhile_lands_before_the_persons_new_line(workspace):
    workspace.append_daily("09:00 first line", day=DAY)
    rel = workspace.relative(workspace.paths.daily_log(DAY))
    base = workspace.read(rel)
    mine = base.text + "- 10:30 the person's unsaved line\n"
    workspace.append_daily("10:00 a shell appended this meanwhile", day=DAY)      # the race
    changes = workspace.write_document(rel, mine, base.hash, base_text=base.text)
    lines = workspace.read(rel).text.splitlines()
    shell = next(i for i, line in enumerate(lines) if "a shell appended this" in line)
    person = next(i for i, line in enumerate(lines) if "the person's unsaved line" in line)
    assert shell < person and lines[-1].endswith("the person's unsaved line")
    assert "a shell appended this" in changes.info["merged_append"]
    assert workspace.read(rel).text.startswith(base.text)      # the part both had is unchanged: no rewrite


def test_memory_md_keeps_the_same_order_and_an_edit_in_the_middle_keeps_its_place(workspace):
    memory = workspace.read_memory()
    mine = memory.text.replace("## Preferences", "## Preferences\n- Likes rooibos", 1) + "- my new last line\n"
    assert "Likes rooibos" in mine
    from core.store.atomic import append_durable

    append_durable(workspace.paths.memory_md, "- appended by the agent\n")
    workspace.write_memory(mine, memory.hash, base_text=memory.text)
    text = workspace.read_memory().text
    assert text.index("Likes rooibos") < text.index("appended by the agent") < text.index("my new last line")


def test_with_append():
    assert with_append("a\nb\n", "a\nb\nmine\n", "theirs\n") == "a\nb\ntheirs\nmine\n"
    assert with_append("a\nb\n", "a\nB\n", "theirs\n") == "a\nB\ntheirs\n"          # nothing added at the end
    assert with_append("a\nb\n", "A\nb\nmine\n", "t1\nt2\n") == "A\nb\nt1\nt2\nmine\n"
    assert with_append("", "# 2026-11-30\n- mine\n", "- theirs\n") == "- theirs\n# 2026-11-30\n- mine\n"
    assert with_append("a\n", "a", "t\n") == "a\nt\n"


def test_redact_also_redacts_the_history_snapshots(workspace):
    memory = workspace.read_memory()
    workspace.write_memory(memory.text + f"- The staging DB password is {PASSWORD}\n", memory.hash)
    memory = workspace.read_memory()
    workspace.write_memory(memory.text + "- Another fact\n", memory.hash)      # a snapshot holding the secret
    snaps = list((workspace.paths.history_dir).rglob("*.snap"))
    assert any(PASSWORD.encode() in p.read_bytes() for p in snaps)
    changes = workspace.redact_secrets(["MEMORY.md"])
    assert changes.info["redacted"] == 1 and changes.info["snapshots"] >= 2
    assert PASSWORD not in workspace.read_memory().text
    for snap in workspace.paths.history_dir.rglob("*.snap"):
        assert PASSWORD.encode() not in snap.read_bytes(), snap
    # the history still lists every change, and an undo brings back the text around it, never the value
    assert len(workspace.history_entries("MEMORY.md")) >= 3
    workspace.undo("MEMORY.md")
    assert PASSWORD not in workspace.read_memory().text and "redacted" in workspace.read_memory().text
