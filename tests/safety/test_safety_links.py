"""Nothing is read or written outside the workspace, whatever symbolic links are planted inside it.

Every CLI command that works without a model runs under an audit hook (tests/support/audited_cli.py)
on workspaces whose daily log, progress.md, session log, checkpoint and hand-off are links out, or
whose checkpoints/, handoffs/, sessions/, memory/archive/, large_tool_results/ or memory/ folders are.
Each command may fail (with one line, exit 2) or work on the rest of the workspace; none may touch
the `outside` folder: no open, listing, rename or folder made there, no byte or mtime changed.
"""
from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
from pathlib import Path

import pytest

from core.errors import PathEscapeError
from core.workspace import Workspace
from tests.support.hostile import (SECRET, hostile_workspace, make_outside, outside_state, plant_file_links,
                                   plant_folder_links, plant_memory_folder_link, touched_outside)
from tests.support.processes import ROOT, python_env
from tests.support.transcripts import chat_log_lines, claude_code_records, write_jsonl


def _commands(ws: Path, tmp_path: Path) -> list[list[str]]:
    transcript = write_jsonl(tmp_path / "src" / "4f35e220-c435-4cf7-b9b9-f40426042847.jsonl", claude_code_records())
    chat = write_jsonl(tmp_path / "src" / "run.jsonl", chat_log_lines())
    today = dt.date.today().isoformat()
    w = str(ws)
    return [["log", w, "the", "deploy", "key", "is", "rotated"], ["read", w, f"memory/{today}.md"],
            ["read", w, "progress.md"], ["read", w, "memory/2026-01-02.md"], ["read", w, "MEMORY.md"],
            ["history", w, "--all"], ["undo", w], ["restore", w, "20260101"],
            ["index", w, "--no-embed"], ["search", w, "4b1d", "--mode", "keyword"],
            ["search", w, "deploy", "--mode", "keyword", "--json"],
            ["import", "claude-code", str(transcript), w], ["import", "jsonl", str(chat), w],
            ["secrets", w], ["flushes", w], ["proposals", w, "list"], ["why", w, "m-none"], ["log", w, "second", "fact"]]


def _run_all(ws: Path, tmp_path: Path, outside: Path) -> list[tuple[list[str], subprocess.CompletedProcess]]:
    audit = tmp_path / "audit.log"
    before = outside_state(outside)
    runs = []
    for command in _commands(ws, tmp_path):
        done = subprocess.run([sys.executable, "-m", "tests.support.audited_cli", str(audit), *command],
                              capture_output=True, text=True, cwd=ROOT, env=python_env(), timeout=300)
        assert done.returncode in (0, 1, 2), (command, done.stderr)
        assert "Traceback" not in done.stderr, (command, done.stderr)
        if done.returncode == 2:
            assert len(done.stderr.strip().splitlines()) == 1, (command, done.stderr)   # one clear line
        assert SECRET not in done.stdout + done.stderr, command
        runs.append((command, done))
    assert touched_outside(audit, outside) == []
    assert outside_state(outside) == before
    return runs


def _hostile_runs(tmp_path: Path, plant):
    ws, outside = hostile_workspace(tmp_path, plant)
    return ws, _run_all(ws, tmp_path, outside)


def _by_name(runs, name: str, *args: str):
    return [done for command, done in runs if command[0] == name and all(a in command for a in args)]


def test_file_links_out_are_refused_by_every_command(tmp_path):
    ws, runs = _hostile_runs(tmp_path, plant_file_links)
    [log] = _by_name(runs, "log", "deploy")
    assert log.returncode == 2 and "outside the workspace" in log.stderr
    [read_progress] = _by_name(runs, "read", "progress.md")
    assert read_progress.returncode == 2
    [index] = _by_name(runs, "index")
    assert index.returncode == 0 and "progress.md is a symbolic link" in index.stderr


def test_folder_links_out_are_refused_by_every_command(tmp_path):
    ws, runs = _hostile_runs(tmp_path, plant_folder_links)
    [log] = _by_name(runs, "log", "deploy")
    assert log.returncode == 0          # memory/ itself is real: the log works
    [imported] = _by_name(runs, "import", "claude-code")
    assert imported.returncode == 2 and "outside the workspace" in imported.stderr
    [index] = _by_name(runs, "index")
    for name in ("checkpoints/", "handoffs/", "sessions/", "memory/archive/", "large_tool_results/"):
        assert f"{name} is a symbolic link" in index.stderr, name


def test_a_memory_folder_link_out_is_reported_not_silently_skipped(tmp_path):
    ws, runs = _hostile_runs(tmp_path, plant_memory_folder_link)
    [log] = _by_name(runs, "log", "deploy")
    assert log.returncode == 2 and "outside the workspace" in log.stderr   # never write-only memory
    [index] = _by_name(runs, "index")
    assert "memory/ is a symbolic link" in index.stderr
    with Workspace.open(ws) as opened:
        assert any(line.startswith("memory/ is a symbolic link") for line in opened.outside_links())


def test_links_that_stay_inside_still_work(workspace):
    """The rule is about where a path really is: a link to another file of the workspace is fine."""
    root = workspace.root
    (root / "notes").mkdir()
    (root / "notes" / "log.md").write_text("# notes\n", encoding="utf-8")
    today = dt.date.today().isoformat()
    (root / "memory" / f"{today}.md").symlink_to(root / "notes" / "log.md")
    changes = workspace.append_daily("kept through an inside link")
    assert changes.info["lines"] == (2, 2)
    assert (root / "notes" / "log.md").read_text(encoding="utf-8").endswith("- kept through an inside link\n")
    assert workspace.outside_links() == []


def test_every_write_api_refuses_a_planted_link(tmp_path):
    ws = Workspace.create(tmp_path / "ws")
    outside = make_outside(tmp_path)
    plant_file_links(ws.root, outside)
    before = outside_state(outside)
    with pytest.raises(PathEscapeError):
        ws.append_daily("a fact")
    with pytest.raises(PathEscapeError):
        ws.write_document("progress.md", "# Progress\n", "")
    with pytest.raises(PathEscapeError):
        ws.read("memory/2026-01-02.md")
    checkpoint = json.loads((outside / "cp.json").read_text())
    ws.save_checkpoint({**checkpoint, "checkpoint_id": "cp-inside", "target": "inside"})   # a real file beside it
    assert ws.latest_checkpoint("mcp")["checkpoint_id"] == "cp-inside"
    assert [p.name for p in ws.checkpoint_files("mcp")] == ["cp-inside.json"]   # the link is not listed
    assert all(SECRET not in json.dumps(p) for p in ws.handoffs())
    assert [s.id for s in ws.sessions()] == []
    assert outside_state(outside) == before


def test_a_too_long_path_is_one_clear_error(workspace):
    with pytest.raises(PathEscapeError, match="too long"):
        workspace.read("a" * 5000)
    with pytest.raises(PathEscapeError, match="too long"):
        workspace.read("memory/" + "b" * 300 + ".md")


@pytest.mark.slow
def test_a_dream_and_the_maintenance_tick_stay_inside(tmp_path):
    """The commands that read every log (and load the embedding model): slow, so not in the default run."""
    for plant in (plant_file_links, plant_folder_links, plant_memory_folder_link):
        case = tmp_path / plant.__name__
        ws, outside = hostile_workspace(case, plant)
        audit = case / "audit.log"
        before = outside_state(outside)
        for command in (["dream", str(ws), "--no-model", "--apply"], ["maintain", str(ws), "--no-model"]):
            done = subprocess.run([sys.executable, "-m", "tests.support.audited_cli", str(audit), *command],
                                  capture_output=True, text=True, cwd=ROOT, env=python_env(), timeout=600)
            assert "Traceback" not in done.stderr and done.returncode in (0, 2), (command, done.stderr)
            assert SECRET not in done.stdout + done.stderr
        assert touched_outside(audit, outside) == [] and outside_state(outside) == before, plant.__name__
