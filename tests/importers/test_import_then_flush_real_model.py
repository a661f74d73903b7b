"""An imported Claude Code session, flushed by the real bundled model, as a person runs it: two commands."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from core.harness.flush import OUTCOMES
from tests.support.transcripts import SESSION, claude_code_records, write_jsonl

ROOT = Path(__file__).resolve().parents[2]
MODEL = "smollm2-135m-instruct-q4_1"


def _reverie(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "core", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=600)


@pytest.mark.slow     # 15-80 s on 2 shared cores: the model worker starts and the model reads the session
def test_import_then_flush_with_the_real_small_model(workspace, tmp_path):
    source = write_jsonl(tmp_path / f"{SESSION}.jsonl", claude_code_records())
    imported = _reverie("import", "claude-code", str(source), str(workspace.root))
    assert imported.returncode == 0, imported.stderr
    session = f"cc-{SESSION}"
    flushed = _reverie("flush", str(workspace.root), "--session", session, "--model", MODEL)
    assert flushed.returncode == 0, flushed.stdout + flushed.stderr
    outcome = flushed.stdout.split()[1].rstrip(":")
    assert flushed.stdout.startswith("flush ") and outcome in OUTCOMES and outcome != "failed", flushed.stdout
    records = [json.loads(line) for line in workspace.paths.flush_record.read_text(encoding="utf-8").splitlines()]
    assert records[-1]["session_id"] == session and records[-1]["outcome"] == outcome
    assert records[-1]["messages"] == 8            # every imported message reached the flush
    if outcome == "written":                       # whatever the small model wrote is grounded in the transcript
        assert records[-1]["path"].startswith("memory/")
