"""Generic OpenAI-style chat logs (JSONL) into session logs.

Two layouts, and a file may mix them:
- one message per line: {"role": "user", "content": "..."}, assistant lines with
  "tool_calls", tool lines with "tool_call_id": one session per file;
- one conversation per line: {"messages": [...]} (the fine-tuning format): each
  line is a session of its own, `<file id>-L<line>`.

What other tools write is normalised: "developer" is a system message; content
given as parts ([{"type": "text", "text": ...}], input_text/output_text) becomes
text; tool-call arguments given as an object become a JSON string; the legacy
assistant "function_call" and "function" role become a tool call and its result.
A line that is still not a valid message is reported with its number and skipped.

Ids come from content, never from line numbers: a message's id is a hash of what it says
(and how many identical messages came before it), a conversation line's session is named
by a hash of its opening (its messages up to the first user message), so a conversation line that
grows as it is rewritten stays one session. Removing or editing lines at the top of the source and
importing it again adds nothing twice.
"""
from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from core.importers.common import ParsedSession, Problem, read_records, safe_session_id, stable_id

ROLE_ALIASES = {"developer": "system", "human": "user", "ai": "assistant", "bot": "assistant"}
TEXT_PARTS = ("text", "input_text", "output_text")


def _content(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = []
        for part in value:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and part.get("type") in TEXT_PARTS:
                parts.append(str(part.get("text", "")))
            elif isinstance(part, dict) and part.get("type"):
                parts.append(f"[{part['type']} omitted]")
        return "\n\n".join(p for p in parts if p)
    return json.dumps(value, ensure_ascii=False)


def _timestamp(record: dict[str, Any]) -> str | None:
    for key in ("ts", "timestamp", "created_at", "time"):
        value = record.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
            seconds = value / 1000 if value > 1e11 else value    # milliseconds or seconds since the epoch
            return dt.datetime.fromtimestamp(seconds, dt.timezone.utc).isoformat()
    return None


class _Normaliser:
    """One session's messages; remembers the legacy function call a "function" result answers."""

    def __init__(self, parsed: ParsedSession):
        self.parsed = parsed
        self.last_function_call: dict[str, str] = {}   # function name -> call id
        self.seen: dict[str, int] = {}                 # content id -> times seen so far

    def _occurrence(self, key: str) -> str:
        """`key`, made unique for the second, third... message that says exactly the same."""
        self.seen[key] = self.seen.get(key, 0) + 1
        return key if self.seen[key] == 1 else f"{key}-{self.seen[key]}"

    def add(self, record: Any, line: int, index: int = 0) -> None:
        if not isinstance(record, dict):
            self.parsed.problems.append(Problem(self.parsed.source, line, "a message must be a JSON object"))
            return
        role = ROLE_ALIASES.get(str(record.get("role", "")).lower(), record.get("role"))
        message: dict[str, Any] = {"role": role, "content": _content(record.get("content")), "_line": line}
        if role == "assistant":
            calls = []
            raw_calls = record.get("tool_calls") or []
            if record.get("function_call"):
                raw_calls = list(raw_calls) + [{"type": "function", "function": record["function_call"]}]
            for k, call in enumerate(raw_calls if isinstance(raw_calls, list) else []):
                if not isinstance(call, dict):
                    continue
                fn = call.get("function") if isinstance(call.get("function"), dict) else {}
                args = fn.get("arguments", "")
                call_id = str(call.get("id") or self._occurrence(stable_id("call", self.parsed.session_id, fn, k)))
                name = str(fn.get("name") or "")
                calls.append({"id": call_id, "type": "function", "function": {
                    "name": name, "arguments": args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)}})
                self.last_function_call[name] = call_id
            if calls:
                message["tool_calls"] = calls
            if message["content"] is None:
                message["content"] = ""
        elif role in ("tool", "function"):
            message["role"] = "tool"
            name = record.get("name")
            call_id = record.get("tool_call_id") or (self.last_function_call.get(str(name)) if role == "function" else None)
            if call_id is not None:
                message["tool_call_id"] = str(call_id)
            if isinstance(name, str) and name:
                message["name"] = name
        elif isinstance(record.get("name"), str) and record["name"]:
            message["name"] = record["name"]
        if message["content"] is None:
            message["content"] = ""
        stamp = _timestamp(record)
        if stamp:
            message["ts"] = stamp
        message["id"] = self._occurrence(stable_id("j", self.parsed.session_id,
                                                   {k: v for k, v in message.items() if k != "_line"}))
        self.parsed.messages.append(message)


def _opening(messages: list[Any]) -> list[Any]:
    """What names a conversation: its messages up to its first user message. A conversation rewritten in
    place as it grows keeps its opening, so it stays one session (its new messages are appended)."""
    for index, message in enumerate(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            return messages[:index + 1]
    return messages[:1]


def file_session_id(path: Path) -> str:
    return safe_session_id(path.stem.removesuffix(".log"), "import")


def parse_chat_log(path: Path, session_id: str | None = None) -> list[ParsedSession]:
    """The file's own session (message lines) first, then one per conversation line."""
    base = session_id or file_session_id(path)
    main = ParsedSession(session_id=base, source=str(path))
    normaliser = _Normaliser(main)
    conversations: list[ParsedSession] = []
    for line, record in read_records(path, main):
        if isinstance(record.get("messages"), list) and "role" not in record:
            digest = stable_id("c", _opening(record["messages"])).split("-", 1)[1][:12]
            conv = ParsedSession(session_id=safe_session_id(f"{base}-c{digest}"), source=f"{path}#L{line}")
            conv_norm = _Normaliser(conv)
            for index, message in enumerate(record["messages"]):
                conv_norm.add(message, line, index)
            conversations.append(conv)
        elif "role" in record:
            normaliser.add(record, line)
        else:
            main.problems.append(Problem(main.source, line, "neither a chat message (no 'role') "
                                                            "nor a conversation (no 'messages')"))
    sessions = ([main] if main.messages or not conversations else []) + conversations
    if main.problems and main not in sessions:
        sessions[0].problems.extend(main.problems)   # report them even when the file held only conversations
    return sessions
