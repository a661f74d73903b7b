"""MEMORY.md mirrored into Claude Code's memory file: one block at the top, Claude Code's own notes kept,
never past the 200 lines / 25 KB Claude Code loads, and a meter that says what fit."""
from __future__ import annotations

import subprocess
import sys

from core.connect import apply
from core.connect.mirror import BYTE_LIMIT, END, LINE_LIMIT, encode_project, memory_target, plan_mirror
from tests.support.processes import ROOT, python_env

CLAUDE_OWN = "# Project notes\n\n- Run the tests with `make check` before pushing.\n"


def test_the_mirror_sits_on_top_keeps_claudes_notes_and_replaces_itself(workspace, tmp_path):
    project, home = tmp_path / "code" / "my.app", tmp_path / "home"
    target = memory_target(project, home)
    assert target.path == home / ".claude" / "projects" / encode_project(project) / "memory" / "MEMORY.md"
    assert encode_project(project).endswith("-code-my-app")
    target.path.parent.mkdir(parents=True)
    target.path.write_text(CLAUDE_OWN, encoding="utf-8")
    workspace.write_memory("# MEMORY\n\n## Preferences\n- Prefers TOML <!-- id:m-1a2b src:memory/2026-11-30.md#L3 -->\n",
                           workspace.read_memory().hash)
    planned, meter = plan_mirror(workspace, target)
    assert meter.kept_lines == meter.total_lines == 4 and "all 4 lines of MEMORY.md fit" in meter.describe()
    apply(planned)
    text = target.path.read_text(encoding="utf-8")
    assert text.startswith("<!-- reverie:begin") and text.endswith(END + "\n" + CLAUDE_OWN)
    assert "- Prefers TOML\n" in text and "id:m-1a2b" not in text            # provenance comments stripped
    workspace.write_memory("# MEMORY\n\n## Preferences\n- Prefers YAML\n", workspace.read_memory().hash)
    again, _ = plan_mirror(workspace, target)
    apply(again)
    text = target.path.read_text(encoding="utf-8")
    assert text.count("reverie:begin") == 1 and "Prefers YAML" in text and "Prefers TOML" not in text
    assert text.endswith(CLAUDE_OWN)


def test_a_large_memory_is_cut_to_what_claude_code_loads_and_the_meter_says_so(workspace, tmp_path):
    bullets = "\n".join(f"- fact number {i} " + "x" * 150 for i in range(400))
    workspace.write_memory("# MEMORY\n\n## Learnings\n" + bullets + "\n", workspace.read_memory().hash)
    target = memory_target(tmp_path / "p", tmp_path / "home")
    planned, meter = plan_mirror(workspace, target)
    data = planned.new_text.encode("utf-8")
    assert len(planned.new_text.splitlines()) <= LINE_LIMIT and len(data) <= BYTE_LIMIT
    assert 0 < meter.kept_lines < meter.total_lines and "left out" in meter.describe()
    assert planned.new_text.rstrip("\n").endswith(END)


def test_connect_mirror_memory_prints_the_meter(tmp_path):
    from core.workspace import Workspace

    ws = Workspace.create(tmp_path / "ws").root
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    done = subprocess.run([sys.executable, "-m", "core", "connect", "claude-code", str(ws), "--project", str(project),
                           "--mirror-memory"], cwd=ROOT, env=python_env(HOME=str(home)), capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "MEMORY.md mirror: all " in done.stdout and f"/{LINE_LIMIT} lines" in done.stdout
    assert memory_target(project, home).path.is_file() and (project / ".mcp.json").is_file()
    wrong = subprocess.run([sys.executable, "-m", "core", "connect", "cursor", str(ws), "--mirror-memory"], cwd=ROOT,
                           env=python_env(HOME=str(home)), capture_output=True, text=True, timeout=120)
    assert wrong.returncode == 2 and "for claude-code" in wrong.stderr
