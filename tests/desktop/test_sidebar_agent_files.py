"""The sidebar lists every log the agent wrote (hook-named, nested) and OpenClaw's own files."""
from __future__ import annotations

from core.workspace import Workspace
from desktop.sidebar import ROLE, Sidebar, scan


def _children(item):
    return [item.child(i) for i in range(item.childCount())]


def test_agent_files_and_hook_named_logs_are_listed(qtbot, tmp_path):
    ws = Workspace.create(tmp_path / "ws")
    for name, text in (("USER.md", "# USER\n- Name: Ines\n"), ("SOUL.md", "# SOUL\n"), ("AGENTS.md", "# AGENTS\n"),
                       ("HEARTBEAT.md", "- check mail\n")):
        (ws.root / name).write_text(text, encoding="utf-8")
    for rel in ("memory/2026-02-03-vendor-pitch.md", "memory/2026-02-03-1430.md", "memory/archive/2025-12/2025-12-24.md"):
        path = ws.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("- a line\n", encoding="utf-8")
    sidebar = Sidebar()
    qtbot.addWidget(sidebar)
    sidebar.populate(scan(ws))
    tops = {sidebar.topLevelItem(i).data(0, ROLE + 1): sidebar.topLevelItem(i) for i in range(sidebar.topLevelItemCount())}
    agent = tops["agent"]
    assert agent.text(0) == "Agent files (4)"
    assert [c.data(0, ROLE) for c in _children(agent)] == [
        ("file", "USER.md"), ("file", "SOUL.md"), ("file", "AGENTS.md"), ("file", "HEARTBEAT.md")]
    assert tops["daily"].text(0) == "Daily logs (2)"
    assert tops["archive"].text(0) == "Archive (1)"
    assert [c.data(0, ROLE)[1] for c in _children(tops["archive"])] == ["memory/archive/2025-12/2025-12-24.md"]
