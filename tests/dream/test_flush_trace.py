"""`reverie why` follows a bullet to the daily-log lines, the flush that wrote them and the session messages
that flush read: with hand-made records here, and end to end through a real flush (bundled Gemma 3 270M) below."""
from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from core.dream.review.flush_trace import trace_lines
from core.dream.review.provenance import format_provenance, why
from core.store.sessions import append_jsonl
from tests.support.processes import ROOT, python_env
from tests.support.transcripts import SESSION, claude_code_records, write_jsonl


def _flush_record(ws, **fields):
    record = {"ts": "2026-11-30T10:00:00+00:00", "session_id": "s-1", "outcome": "written", "path":
              "memory/2026-11-30.md", "lines": [3, 5], "message_ids": ["m1", "m2", "gone"]}
    append_jsonl(ws.paths.flush_record, [{**record, **fields}])


def test_lines_lead_to_the_flush_and_its_messages_even_after_archiving(workspace):
    append_jsonl(workspace.paths.session_log("s-1"), [
        {"id": "m1", "role": "user", "content": "Our staging port is 5433."},
        {"id": "m2", "role": "assistant", "content": "Noted."},
        {"id": "m3", "role": "user", "content": "unrelated"}])
    _flush_record(workspace)
    _flush_record(workspace, lines=[7, 9], message_ids=["m3"])               # another block of the same log
    _flush_record(workspace, outcome="no_reply", lines=[0, 0])              # wrote nothing: leads nowhere
    [trace] = trace_lines(workspace, "memory/archive/2026-11-30.md", [4])
    assert (trace.session_id, trace.lines, trace.missing) == ("s-1", (3, 5), 1)
    assert trace.messages == (("m1", "user", "Our staging port is 5433."), ("m2", "assistant", "Noted."))
    assert trace_lines(workspace, "memory/2026-11-30.md", [6]) == []
    assert trace_lines(workspace, "memory/2026-12-01.md", [4]) == []
    _flush_record(workspace, session_id="../../etc/passwd", lines=[1, 2])   # a damaged record reads nothing outside
    assert trace_lines(workspace, "memory/2026-11-30.md", [1])[0].messages == ()


@pytest.mark.slow
def test_why_reaches_the_session_message_behind_a_bullet_a_real_flush_wrote(tmp_path):
    env = python_env()

    def cli(*args, stdin=None):
        done = subprocess.run([sys.executable, "-m", "core", *args], cwd=ROOT, env=env, input=stdin,
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    ws = tmp_path / "ws"
    cli("init", str(ws))
    transcript = write_jsonl(tmp_path / "projects" / f"{SESSION}.jsonl", claude_code_records())
    hook = json.dumps({"session_id": SESSION, "transcript_path": str(transcript), "hook_event_name": "SessionEnd"})
    out = cli("hook", "claude-code", str(ws), "--model", "gemma3-270m-it-q4_k_m", stdin=hook)
    assert "flush written" in out, out
    cli("dream", str(ws), "--no-model", "--apply")
    from core.workspace import Workspace

    with Workspace.open(ws) as opened:
        memory = opened.read_memory().text
        ids = re.findall(r"id:(m-[0-9a-f]+)[^>]*src:memory/", memory)
        assert ids, memory
        traced = [p for p in (why(opened, i) for i in ids) if p.flushes]
    assert traced, "no MEMORY.md bullet leads to a flush"
    flush = traced[0].flushes[0]
    assert flush.session_id == f"cc-{SESSION}" and flush.messages
    shown = cli("why", str(ws), traced[0].bullet_id)
    assert f"session cc-{SESSION}" in shown and "cc-u-1 user: Please add a dev config file" in shown
    assert format_provenance(traced[0]) == shown.rstrip("\n")
