"""Generic OpenAI-style chat logs into session logs; then a flush extracts facts from them."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from core.harness.messages import orphan_results, validate_message
from core.importers import import_chat_log
from core.importers.openai_jsonl import parse_chat_log
from tests.support.transcripts import chat_log_lines, claude_code_records, write_jsonl

ROOT = Path(__file__).resolve().parents[2]


def test_messages_are_normalised_and_bad_lines_reported(tmp_path):
    source = write_jsonl(tmp_path / "agent run.jsonl", chat_log_lines())
    main, conversation = parse_chat_log(source)
    # a conversation line is a session named by its content (a hash), never by its line number
    assert main.session_id == "agent-run" and re.fullmatch(r"agent-run-c[0-9a-f]{12}", conversation.session_id)
    good = [m for m in main.messages if not validate_message({k: v for k, v in m.items() if k != "_line"})]
    assert [m["role"] for m in good] == ["system", "user", "assistant", "tool", "assistant", "assistant", "tool"]
    assert good[1]["content"] == "What is the staging host?" and good[1]["ts"].startswith("2026-05-28T")
    assert json.loads(good[2]["tool_calls"][0]["function"]["arguments"]) == {"query": "staging"}
    legacy_call, legacy_result = good[5], good[6]
    assert legacy_result["tool_call_id"] == legacy_call["tool_calls"][0]["id"] and legacy_result["name"] == "get_time"
    assert orphan_results(good) == []
    assert [(p.line, p.message.split(" (")[0]) for p in main.problems] == [
        (10, "not valid JSON"), (11, "neither a chat message")]
    assert [m["role"] for m in conversation.messages] == ["user", "assistant"]


def test_import_stores_valid_messages_drops_private_keys_and_is_idempotent(workspace, tmp_path):
    source = write_jsonl(tmp_path / "run.jsonl", chat_log_lines())
    results = import_chat_log(workspace, source)
    assert [(r.session_id[:5], r.written) for r in results] == [("run", 7), ("run-c", 2)]
    problems = [str(p) for p in results[0].problems]
    assert any(":8: unknown role 'wizard'" in p for p in problems)
    assert any(":9: a tool message needs a tool_call_id" in p for p in problems)
    stored = workspace.read_session("run").objects
    assert all(set(m) <= {"role", "content", "tool_calls", "tool_call_id", "name", "id", "ts"} for m in stored)
    assert "evicted" not in json.dumps(stored)       # a smuggled private key never reaches the log
    assert [r.written for r in import_chat_log(workspace, source)] == [0, 0]


def test_the_cli_imports_a_generic_log(workspace, tmp_path):
    source = write_jsonl(tmp_path / "run.jsonl", chat_log_lines())
    done = subprocess.run([sys.executable, "-m", "core", "import", "jsonl", str(source), str(workspace.root),
                           "--session-id", "support-chat"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "support-chat: 7 message(s) imported -> sessions/support-chat.log.jsonl" in done.stdout
    assert re.search(r"support-chat-c[0-9a-f]{12}: 2 message\(s\) imported", done.stdout)
    assert "imported 9 message(s) into 2 session(s)" in done.stdout
    assert ":10: not valid JSON" in done.stderr


def test_flush_extracts_facts_from_an_imported_claude_code_session(workspace, tmp_path):
    from core.harness.flush import MemoryFlushManager
    from core.importers import import_claude_code
    from tests.support.fakes import ScriptedLLM
    from tests.support.transcripts import SESSION

    source = write_jsonl(tmp_path / f"{SESSION}.jsonl", claude_code_records())
    [result] = import_claude_code(workspace, source)
    messages = workspace.read_session(result.session_id).objects
    llm = ScriptedLLM(["- The dev database runs on port 5433 because 5432 is taken\n"
                       "- Maya prefers TOML over YAML for every config"])
    flushed = MemoryFlushManager(workspace, llm).flush(messages, session_id=result.session_id)
    assert flushed.outcome == "written", flushed
    log = (workspace.root / flushed.path).read_text(encoding="utf-8")
    assert "port 5433" in log and "TOML over YAML" in log
    # the transcript reached the model as a conversation, tool calls and results included
    prompt = json.dumps(llm.calls[-1], ensure_ascii=False)
    assert "config/dev.toml" in prompt and "5432 is taken" in prompt
