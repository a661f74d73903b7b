"""Secrets in a workspace: logged lines are redacted at the door, existing files are found and redacted."""
from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
from pathlib import Path

from core.store.sessions import append_jsonl
from tests.support.processes import python_env

ROOT = Path(__file__).resolve().parents[2]
DAY = dt.date(2026, 11, 30)
PASSWORD = "Heron-Glide-3307"
TOKEN = "ghp_Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0UvWxYz"
HANDOFF = {"original_target": "t", "why_this_agent": "w", "completed_work": [], "known_constraints": [],
           "failed_attempts": [], "success_criteria": "c", "termination_condition": "d"}


def run(*args):
    return subprocess.run([sys.executable, "-m", "core", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=300, env=python_env())


def plant_secrets(ws):
    """Secrets where people paste them: a log, MEMORY.md, a session, a checkpoint, a hand-off."""
    log = ws.paths.daily_log(DAY)
    log.write_text(f"# {DAY}\n\n- [09:00] Maya prefers tea\n- [09:05] the staging DB password is {PASSWORD}\n",
                   encoding="utf-8")
    memory = ws.read_memory()
    ws.write_memory(memory.text + f"\n- CI token {TOKEN}\n", memory.hash, reason="test")
    append_jsonl(ws.paths.session_log("s1"), [
        {"role": "user", "content": "hi"},
        {"role": "user", "content": f"my password is \"{PASSWORD}\" for the wiki"}])
    ws.save_checkpoint({"timestamp": "2026-11-30T09:00:00+00:00", "session_id": "s1",
                        "checkpoint_id": "cp-20261130T090000000000Z", "target": f"deploy with {TOKEN}",
                        "completed_steps": [], "pending_steps": ["ship"], "artifacts": {},
                        "context_summary": "", "last_action": "", "error_state": None})
    ws.create_handoff({**HANDOFF, "from_agent": "a", "to_agent": "b",
                       "current_state": f"login: admin / {PASSWORD}"})


def test_append_daily_redacts_and_says_how_many(workspace):
    changes = workspace.append_daily(f"the staging DB password is {PASSWORD}\nand the token {TOKEN}", day=DAY)
    assert changes.info["redacted"] == 2
    text = workspace.paths.daily_log(DAY).read_text(encoding="utf-8")
    assert PASSWORD not in text and TOKEN not in text
    assert "- the staging DB password is [redacted password]" in text
    assert changes.info["text"].endswith("- and the token [redacted github token]")
    assert workspace.append_daily("Maya prefers tea", day=DAY).info["redacted"] == 0


def test_find_and_redact_secrets_in_every_kind_of_file(workspace):
    plant_secrets(workspace)
    findings = workspace.find_secrets()
    where = {(f.path, f.kind) for f in findings}
    assert ("memory/2026-11-30.md", "password") in where
    assert ("MEMORY.md", "github token") in where
    assert ("sessions/s1.log.jsonl", "password") in where
    assert any(p.startswith("checkpoints/s1/") for p, _k in where)
    assert any(p.startswith("handoffs/") for p, _k in where)
    log_finding = next(f for f in findings if f.path == "memory/2026-11-30.md")
    assert log_finding.line == 4
    assert next(f for f in findings if f.path == "sessions/s1.log.jsonl").line == 2
    assert all(PASSWORD not in repr(f) and TOKEN not in repr(f) for f in findings)

    changes = workspace.redact_secrets()
    assert changes.info["redacted"] == len(findings) and changes.info["skipped"] == {}
    assert set(changes.paths) == {f.path for f in findings}
    assert workspace.find_secrets() == []
    for rel in changes.paths:
        text = (workspace.root / rel).read_text(encoding="utf-8")
        assert PASSWORD not in text and TOKEN not in text and "[redacted " in text
        if rel.endswith(".json"):
            json.loads(text)
        if rel.endswith(".jsonl"):
            assert [json.loads(line)["content"] for line in text.splitlines()] == [
                "hi", 'my password is "[redacted password]" for the wiki']
    assert "- [09:00] Maya prefers tea" in workspace.paths.daily_log(DAY).read_text(encoding="utf-8")
    # like any edit, it is in the history; its snapshots were redacted too, so an undo never brings it back
    assert workspace.history_entries("MEMORY.md")[0].reason == "redact secrets"
    assert changes.info["snapshots"] >= len(changes.paths)
    workspace.undo("MEMORY.md")
    assert TOKEN not in workspace.read_memory().text


def test_find_secrets_sees_a_file_change_and_can_look_at_one_file(workspace):
    rel = f"memory/{DAY}.md"
    workspace.append_daily("Maya prefers tea", day=DAY)
    assert workspace.find_secrets([rel]) == []
    with open(workspace.root / rel, "a", encoding="utf-8") as handle:   # an agent's `>>`, outside Reverie
        handle.write(f"- pasted: the password is {PASSWORD}\n")
    assert [(f.path, f.line, f.kind) for f in workspace.find_secrets([rel])] == [(rel, 4, "password")]
    assert workspace.redact_secrets([rel]).info["redacted"] == 1
    assert workspace.find_secrets([rel]) == []


def test_cli_log_says_what_it_redacted(tmp_path):
    ws = tmp_path / "ws"
    assert run("init", str(ws)).returncode == 0
    out = run("log", str(ws), "the", "wiki", "password", "is", PASSWORD)
    assert out.returncode == 0 and out.stdout.strip().endswith(":3 (1 secret redacted)"), out.stdout
    assert PASSWORD not in out.stdout
    assert PASSWORD not in next((ws / "memory").glob("*.md")).read_text(encoding="utf-8")


def test_cli_secrets_lists_without_values_and_redacts(workspace):
    plant_secrets(workspace)
    root = str(workspace.root)
    listed = run("secrets", root)
    assert listed.returncode == 1, listed.stderr
    assert "memory/2026-11-30.md:4 password" in listed.stdout.splitlines()
    assert "MEMORY.md" in listed.stdout and "sessions/s1.log.jsonl:2 password" in listed.stdout
    assert PASSWORD not in listed.stdout + listed.stderr and TOKEN not in listed.stdout + listed.stderr
    fixed = run("secrets", root, "--redact")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "redacted 5 secret(s) in 5 file(s)" in fixed.stdout
    assert PASSWORD not in fixed.stdout + fixed.stderr
    clean = run("secrets", root)
    assert clean.returncode == 0 and clean.stdout.strip() == "no secrets found"


def test_a_scan_in_a_child_process_finds_the_same_and_is_cached(workspace, monkeypatch):
    from core import jobproc
    from core.workspace import Workspace

    plant_secrets(workspace)
    expected = Workspace.open(workspace.root).find_secrets()          # in this process, another instance
    started = []
    real = jobproc.run_in_child
    monkeypatch.setattr(jobproc, "run_in_child", lambda *a, **k: started.append(a[0]) or real(*a, **k))
    assert workspace.find_secrets(in_child=True) == expected and started == ["core.store.secret_files:scan_job"]
    assert workspace.find_secrets(in_child=True) == expected and len(started) == 1     # nothing changed: no child
    append_jsonl(workspace.paths.sessions_dir / "s1.log.jsonl", {"role": "user", "content": "nothing secret"})
    assert workspace.find_secrets(in_child=True) == expected and len(started) == 2     # only the changed file
