"""Claude Code transcripts into session logs: roles, tool calls and results kept, bad lines reported."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from core.dream.state import load_state
from core.harness.messages import orphan_results, validate_message
from core.importers import import_claude_code
from core.importers.claude_code import parse_transcript
from tests.support.transcripts import SESSION, claude_code_records, subagent_records, write_jsonl

ROOT = Path(__file__).resolve().parents[2]


def _transcript(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "projects" / "-Users-maya-code-orchard" / f"{SESSION}.jsonl", claude_code_records())


def test_the_conversation_is_kept_in_openai_shape(tmp_path):
    parsed = parse_transcript(_transcript(tmp_path))
    messages = [{k: v for k, v in m.items() if k != "_line"} for m in parsed.messages]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool", "assistant", "tool", "user", "assistant"]
    assert all(validate_message(m) == [] for m in messages)
    assert orphan_results(messages) == []
    first_reply = messages[1]
    assert first_reply["content"] == "I'll look at the existing settings first."   # the thinking block is gone
    assert [c["function"]["name"] for c in first_reply["tool_calls"]] == ["Read", "Bash"]
    assert json.loads(first_reply["tool_calls"][0]["function"]["arguments"]) == {"file_path": "orchard/settings.py"}
    assert messages[2] == {"role": "tool", "tool_call_id": "toolu_01", "content": "DATABASE_URL = env('DATABASE_URL')",
                           "id": "cc-u-6-r0", "ts": "2026-05-26T07:27:45.000Z", "name": "Read"}
    assert messages[3]["content"] == "[tool error] ls: config/: No such file or directory"
    assert messages[5]["name"] == "Write" and messages[5]["tool_call_id"] == "toolu_03"
    assert messages[6]["content"] == "Thanks. Also: I prefer TOML over YAML for every config.\n\n[image omitted]"
    assert messages[0]["content"].startswith("Please add a dev config file") and messages[0]["id"] == "cc-u-1"
    assert parsed.title == "Add a dev config for the Orchard database"
    assert parsed.skipped == {"file-history-snapshot record": 1, "meta line": 1, "thinking block": 1,
                              "queue-operation record": 1, "system record": 1, "api-error stand-in": 1}
    assert [(p.line, p.message.split(" (")[0]) for p in parsed.problems] == [
        (12, "not valid JSON"), (16, "expected a JSON object, found list"), (17, "user record without a message")]


def test_import_writes_the_session_log_once_and_appends_only_what_is_new(workspace, tmp_path):
    source = _transcript(tmp_path)
    [result] = import_claude_code(workspace, source)
    assert result.session_id == f"cc-{SESSION}" and result.path == f"sessions/cc-{SESSION}.log.jsonl"
    assert (result.messages, result.written, result.created) == (8, 8, True)
    stored = workspace.read_session(result.session_id)
    assert stored.problems == [] and len(stored.objects) == 8
    assert not any("_line" in m for m in stored.objects)
    assert load_state(workspace.paths).sessions_since == 1
    cache = workspace.session_cache.read().objects
    assert cache[-1]["session_id"] == result.session_id and cache[-1]["summary"].startswith("Add a dev config")

    [again] = import_claude_code(workspace, source)
    assert (again.messages, again.written, again.created) == (8, 0, False)
    # Claude Code keeps appending to a live transcript: only the new turn is imported
    with open(source, "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"type": "user", "uuid": "u-12", "timestamp": "2026-05-26T07:29:00Z",
                                 "message": {"role": "user", "content": "Commit it on a branch, never on main."}}) + "\n")
    [grown] = import_claude_code(workspace, source)
    assert grown.written == 1 and len(workspace.read_session(result.session_id).objects) == 9
    assert load_state(workspace.paths).sessions_since == 1     # the same session, not a new one


def test_a_project_folder_imports_each_session_and_subagent(workspace, tmp_path):
    source = _transcript(tmp_path)
    write_jsonl(source.parent / SESSION / "subagents" / "agent-a748733.jsonl", subagent_records())
    results = import_claude_code(workspace, source.parent)
    assert sorted(r.session_id for r in results) == [f"cc-{SESSION}", f"cc-{SESSION}-agent-a748733"]
    sub = workspace.read_session(f"cc-{SESSION}-agent-a748733").objects
    assert [m["role"] for m in sub] == ["user", "assistant", "tool", "assistant"]
    assert sub[2]["name"] == "Grep"


def test_the_cli_reports_bad_lines_and_suggests_the_flush(workspace, tmp_path):
    source = _transcript(tmp_path)
    done = subprocess.run([sys.executable, "-m", "core", "import", "claude-code", str(source), str(workspace.root)],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"cc-{SESSION}: 8 message(s) imported -> sessions/cc-{SESSION}.log.jsonl" in done.stdout
    assert "3 malformed line(s) skipped" in done.stdout
    assert f"next: reverie flush {workspace.root} --session cc-{SESSION}" in done.stdout
    assert f"skipped {source}:12: not valid JSON" in done.stderr
    assert f"{source}:17: user record without a message" in done.stderr


def test_nothing_importable_is_a_one_line_error(workspace, tmp_path):
    junk = write_jsonl(tmp_path / "junk.jsonl", ["{broken", {"type": "file-history-snapshot"}])
    done = subprocess.run([sys.executable, "-m", "core", "import", "claude-code", str(junk), str(workspace.root)],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1].startswith("reverie: error: no messages found in")
    missing = subprocess.run([sys.executable, "-m", "core", "import", "claude-code", str(tmp_path / "nope.jsonl"),
                              str(workspace.root)], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert missing.returncode == 2 and "does not exist" in missing.stderr
    assert list(workspace.paths.sessions_dir.glob("*.log.jsonl")) == []


def test_an_unsafe_session_id_is_refused(workspace, tmp_path):
    import pytest

    from core.errors import PathEscapeError

    with pytest.raises(PathEscapeError):
        import_claude_code(workspace, _transcript(tmp_path), session_id="../../escape")
    assert not (tmp_path / "escape.log.jsonl").exists()


def test_a_reply_that_grows_between_imports_gets_only_its_new_blocks(workspace, tmp_path):
    """Claude Code writes a reply block by block under one message.id; an import can land between two."""
    def reply_line(uuid: str, text: str) -> dict:
        return {"type": "assistant", "uuid": uuid, "timestamp": "2026-05-26T08:00:01Z",
                "message": {"id": "msg_grow", "role": "assistant", "content": [{"type": "text", "text": text}]}}

    source = write_jsonl(tmp_path / "live.jsonl", [
        {"type": "user", "uuid": "g-1", "timestamp": "2026-05-26T08:00:00Z",
         "message": {"role": "user", "content": "Which port does the staging proxy use?"}},
        reply_line("g-2", "Staging's proxy listens on 8443.")])
    [first] = import_claude_code(workspace, source)
    assert first.written == 2
    with open(source, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(reply_line("g-3", "Production uses 443 behind the load balancer.")) + "\n")
    [grown] = import_claude_code(workspace, source)
    assert grown.written == 1
    stored = workspace.read_session(first.session_id).objects
    assert [m["content"] for m in stored if m["role"] == "assistant"] == [
        "Staging's proxy listens on 8443.", "Production uses 443 behind the load balancer."]
    [again] = import_claude_code(workspace, source)
    assert again.written == 0
