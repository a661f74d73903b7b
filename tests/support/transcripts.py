"""Transcripts we write ourselves, in the formats the importers read.

The Claude Code one follows what Claude Code 2.x writes to ~/.claude/projects/<project>/<uuid>.jsonl:
one record per line, one line per content block of a reply (same message.id), tool results in
user records, and bookkeeping records in between.
"""
from __future__ import annotations

import json
from pathlib import Path

SESSION = "4f35e220-c435-4cf7-b9b9-f40426042847"
BASE = {"isSidechain": False, "userType": "external", "cwd": "/Users/maya/code/orchard", "sessionId": SESSION,
        "version": "2.0.61", "gitBranch": "main"}


def _rec(kind: str, uuid: str, parent: str | None, ts: str, message: dict, **extra) -> dict:
    return {"parentUuid": parent, **BASE, "type": kind, "message": message, "uuid": uuid,
            "timestamp": f"2026-05-26T07:{ts}Z", **extra}


def claude_code_records() -> list[dict]:
    reply1 = {"id": "msg_01A", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5"}
    reply2 = {"id": "msg_01B", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5"}
    return [
        {"type": "summary", "summary": "Add a dev config for the Orchard database", "leafUuid": "u-9"},
        {"type": "file-history-snapshot", "messageId": "u-1", "snapshot": {"trackedFileBackups": {}}},
        _rec("user", "u-0", None, "27:39.000", {"role": "user", "content": "<local-command-caveat>Caveat: ...</local-command-caveat>"},
             isMeta=True),
        _rec("user", "u-1", "u-0", "27:40.079", {"role": "user", "content":
             "Please add a dev config file; the database runs on port 5433 because 5432 is taken."}),
        _rec("assistant", "u-2", "u-1", "27:43.100", {**reply1, "content": [
             {"type": "thinking", "thinking": "Look at the repo first.", "signature": "sig"}]}),
        _rec("assistant", "u-3", "u-2", "27:43.500", {**reply1, "content": [
             {"type": "text", "text": "I'll look at the existing settings first."}]}),
        _rec("assistant", "u-4", "u-3", "27:44.000", {**reply1, "content": [
             {"type": "tool_use", "id": "toolu_01", "name": "Read", "input": {"file_path": "orchard/settings.py"}}]}),
        _rec("assistant", "u-5", "u-4", "27:44.200", {**reply1, "content": [
             {"type": "tool_use", "id": "toolu_02", "name": "Bash", "input": {"command": "ls config/"}}]}),
        {"type": "queue-operation", "operation": "enqueue", "sessionId": SESSION, "timestamp": "2026-05-26T07:27:44Z"},
        _rec("user", "u-6", "u-5", "27:45.000", {"role": "user", "content": [
             {"type": "tool_result", "tool_use_id": "toolu_01", "content": "DATABASE_URL = env('DATABASE_URL')"}]},
             toolUseResult={"type": "text", "file": {"filePath": "orchard/settings.py"}}),
        _rec("user", "u-7", "u-6", "27:45.300", {"role": "user", "content": [
             {"type": "tool_result", "tool_use_id": "toolu_02", "is_error": True,
              "content": [{"type": "text", "text": "ls: config/: No such file or directory"}]}]}),
        "{this line was cut off by a crash",
        _rec("assistant", "u-8", "u-7", "27:50.000", {**reply2, "content": [
             {"type": "text", "text": "There is no config/ folder yet; I'll create config/dev.toml."},
             {"type": "tool_use", "id": "toolu_03", "name": "Write",
              "input": {"file_path": "config/dev.toml", "content": "[db]\nport = 5433\n"}}]}),
        _rec("user", "u-9", "u-8", "27:51.000", {"role": "user", "content": [
             {"type": "tool_result", "tool_use_id": "toolu_03", "content": "File created successfully"},
             {"type": "text", "text": "Thanks. Also: I prefer TOML over YAML for every config."},
             {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}]}),
        {"type": "system", "subtype": "local_command", "content": "/cost", "timestamp": "2026-05-26T07:28:00Z"},
        ["not", "an", "object"],
        {"type": "user", "uuid": "u-broken", "timestamp": "2026-05-26T07:28:01Z"},
        _rec("assistant", "u-10", "u-9", "28:05.000", {"id": "msg_err", "role": "assistant", "model": "<synthetic>",
             "content": [{"type": "text", "text": "API Error: Request timed out"}]}, isApiErrorMessage=True),
        _rec("assistant", "u-11", "u-9", "28:10.000", {"id": "msg_01C", "role": "assistant", "model": "claude-sonnet-4-5",
             "content": [{"type": "text", "text": "Noted: TOML for configs. config/dev.toml sets the port to 5433."}]}),
    ]


def write_jsonl(path: Path, records: list) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in records]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def subagent_records() -> list[dict]:
    base = {**BASE, "isSidechain": True, "agentId": "a748733"}
    return [
        {**base, "type": "user", "uuid": "s-1", "parentUuid": None, "timestamp": "2026-05-26T07:30:00Z",
         "message": {"role": "user", "content": "Find every place that reads DATABASE_URL."}},
        {**base, "type": "assistant", "uuid": "s-2", "parentUuid": "s-1", "timestamp": "2026-05-26T07:30:02Z",
         "message": {"id": "msg_S1", "role": "assistant", "content": [
             {"type": "tool_use", "id": "toolu_S1", "name": "Grep", "input": {"pattern": "DATABASE_URL"}}]}},
        {**base, "type": "user", "uuid": "s-3", "parentUuid": "s-2", "timestamp": "2026-05-26T07:30:03Z",
         "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_S1",
                                                  "content": "orchard/settings.py:3"}]}},
        {**base, "type": "assistant", "uuid": "s-4", "parentUuid": "s-3", "timestamp": "2026-05-26T07:30:05Z",
         "message": {"id": "msg_S2", "role": "assistant", "content": [
             {"type": "text", "text": "Only orchard/settings.py line 3 reads DATABASE_URL."}]}},
    ]


def chat_log_lines() -> list:
    """A generic OpenAI-style log: message lines, a conversation line, and some that are wrong."""
    return [
        {"role": "developer", "content": "You are a helpful assistant."},
        {"role": "user", "content": [{"type": "text", "text": "What is the staging host?"}], "timestamp": 1780000000},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "memory_search", "arguments": {"query": "staging"}}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "memory/2026-05-02.md:3 staging.orchard.internal"},
        {"role": "assistant", "content": "The staging host is staging.orchard.internal.", "evicted": "../../etc/passwd"},
        {"role": "assistant", "content": None, "function_call": {"name": "get_time", "arguments": "{}"}},
        {"role": "function", "name": "get_time", "content": "09:30"},
        {"role": "wizard", "content": "unknown role"},
        {"role": "tool", "content": "a result without its call id"},
        "not json at all",
        {"note": "neither a message nor a conversation"},
        {"messages": [{"role": "user", "content": "Remind me: which port does the dev DB use?"},
                      {"role": "assistant", "content": "5433, because 5432 is taken."}]},
    ]
