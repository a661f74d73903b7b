"""Claude Code session transcripts (~/.claude/projects/<project>/<session>.jsonl) into session logs.

A transcript has one record per line. The ones that carry the conversation:

    {"type": "user", "uuid": "...", "timestamp": "...", "message": {"role": "user", "content": "text"}}
    {"type": "assistant", "uuid": "...", "message": {"id": "msg_1", "role": "assistant", "content": [
        {"type": "text", "text": "..."}, {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {...}}]}}
    {"type": "user", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "..." | [{"type": "text", ...}],
         "is_error": false}]}}

Claude Code writes one line per content block of a reply, all with the same
`message.id`: every assistant line with one id is merged into one message
(wherever it lands in the file), so its tool calls sit together before their
results, as the OpenAI shape wants. Ids come from what a record is (its uuid,
the reply's message.id, or its content), never from its line: a transcript that
is still being written can be imported again and again, and a reply that grew
meanwhile gets exactly its new blocks (core/importers/common.py); a reply that
ends in tool calls at the very end of the file waits for the next import, so its
parallel calls are stored together, before their results. Sidechain
records in a main transcript (a subagent's turns) are left out and counted. Thinking blocks, meta lines (command caveats), API-error
stand-ins and bookkeeping records (file-history-snapshot, queue-operation,
system, ...) are left out and counted. A `summary` record becomes the session's
title in the session cache. Subagent transcripts (agent-*.jsonl, or
<session>/subagents/agent-*.jsonl) are sessions of their own.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from core.importers.common import ParsedSession, Problem, read_records, reply_message, safe_session_id, stable_id

CONVERSATION = ("user", "assistant")


def session_id_for(path: Path) -> str:
    """cc-<session uuid>; a subagent's transcript under <session>/subagents/ is cc-<session>-<agent>."""
    stem = path.stem
    if path.parent.name == "subagents" and path.parent.parent.name:
        stem = f"{path.parent.parent.name}-{stem}"
    return safe_session_id(f"cc-{stem}")


def _text_of(content: Any) -> str:
    """A tool result's or a user turn's content as text (images and documents named, not embedded)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        content = [content]
    parts = []
    for block in content if isinstance(content, list) else [content]:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict):
            kind = block.get("type")
            if kind == "text":
                parts.append(str(block.get("text", "")))
            elif kind in ("image", "document"):
                parts.append(f"[{kind} omitted]")
            elif "text" in block:
                parts.append(str(block["text"]))
            else:
                parts.append(json.dumps(block, ensure_ascii=False))
    return "\n\n".join(p for p in parts if p)


class _Builder:
    def __init__(self, parsed: ParsedSession):
        self.parsed = parsed
        self.names: dict[str, str] = {}                  # tool_use id -> tool name, for the results
        self.replies: dict[str, dict[str, Any]] = {}     # message.id -> the reply's merged message
        self.seen_content: dict[str, int] = {}           # content key -> times seen (records without a uuid)

    def _emit(self, message: dict[str, Any]) -> None:
        self.parsed.messages.append(message)

    def _content_id(self, prefix: str, record: dict[str, Any], message: dict[str, Any]) -> str:
        """An id from what a record says (and how often the same thing was said before), never its line."""
        if record.get("uuid"):
            return str(record["uuid"])
        key = stable_id(prefix, message.get("content"), record.get("timestamp"))
        self.seen_content[key] = self.seen_content.get(key, 0) + 1
        return key if self.seen_content[key] == 1 else f"{key}-{self.seen_content[key]}"

    def assistant(self, line: int, record: dict[str, Any], message: dict[str, Any]) -> None:
        if record.get("isApiErrorMessage") or message.get("model") == "<synthetic>":
            self.parsed.skip("api-error stand-in")
            return
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not isinstance(blocks, list):
            self.parsed.problems.append(Problem(self.parsed.source, line, "assistant message without content"))
            return
        reply_id = str(message.get("id") or self._content_id("a", record, message))
        merged = self.replies.get(reply_id)
        parts = [] if merged is None else merged["_parts"]
        for block in blocks:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text" and str(block.get("text", "")).strip():
                parts.append(("text", str(block["text"])))
            elif kind == "tool_use":
                call_id = str(block.get("id") or stable_id("call", reply_id, block.get("name"), block.get("input")))
                if any(k == "call" and v["id"] == call_id for k, v in parts):
                    continue                 # the same block written twice
                name = str(block.get("name") or "tool")
                self.names[call_id] = name
                parts.append(("call", {"id": call_id, "type": "function", "function": {
                    "name": name, "arguments": json.dumps(block.get("input") or {}, ensure_ascii=False)}}))
            elif kind in ("thinking", "redacted_thinking"):
                self.parsed.skip("thinking block")
        if merged is not None:
            merged.update(reply_message(merged["_reply"], parts, 0))     # a later block of the same reply
            merged["_last"] = line
            return
        if not parts:
            return
        out: dict[str, Any] = {"role": "assistant", "_line": line, "_last": line, "_reply": f"cc-{reply_id}",
                               "_parts": parts}
        if record.get("timestamp"):
            out["ts"] = str(record["timestamp"])
        out.update(reply_message(out["_reply"], parts, 0))
        self.replies[reply_id] = out
        self._emit(out)

    def hold_open_reply(self, last_line: int) -> None:
        """A reply that ends in tool calls with nothing after it is still being written (its results, maybe
        more calls, are on their way): it waits for the next import, so its calls are stored together."""
        for reply in self.replies.values():
            if reply["_last"] >= last_line and reply["_parts"][-1][0] == "call":
                self.parsed.messages.remove(reply)
                self.parsed.skip("reply waiting for its tool results")

    def user(self, line: int, record: dict[str, Any], message: dict[str, Any]) -> None:
        if record.get("isMeta"):
            self.parsed.skip("meta line")
            return
        uid = self._content_id("u", record, message)
        stamp = {"ts": str(record["timestamp"])} if record.get("timestamp") else {}
        content = message.get("content")
        blocks = content if isinstance(content, list) else [content]
        texts = []
        for index, block in enumerate(blocks):
            if isinstance(block, dict) and block.get("type") == "tool_result":
                call_id = str(block.get("tool_use_id") or "")
                text = _text_of(block.get("content"))
                if block.get("is_error"):
                    text = f"[tool error] {text}"
                result = {"role": "tool", "tool_call_id": call_id, "content": text,
                          "id": f"cc-{uid}-r{index}", "_line": line, **stamp}
                if call_id in self.names:
                    result["name"] = self.names[call_id]
                self._emit(result)
            else:
                text = _text_of(block)
                if text.strip():
                    texts.append(text)
        if texts:
            out = {"role": "user", "content": "\n\n".join(texts), "id": f"cc-{uid}", "_line": line, **stamp}
            if record.get("isCompactSummary"):
                out["kind"] = "summary"      # derived text standing for the compacted turns
            self._emit(out)


def parse_transcript(path: Path, session_id: str | None = None) -> ParsedSession:
    parsed = ParsedSession(session_id=session_id or session_id_for(path), source=str(path))
    builder = _Builder(parsed)
    subagent = path.stem.startswith("agent-")       # a subagent's own transcript is all sidechain
    last = 0                                         # the last line of the conversation so far
    for line, record in read_records(path, parsed):
        kind = record.get("type")
        if record.get("isSidechain") is True and not subagent and kind in CONVERSATION:
            parsed.skip("sidechain record")         # a subagent's turn inside the main transcript: not the user's
            continue
        if kind == "summary":
            if isinstance(record.get("summary"), str) and record["summary"].strip():
                parsed.title = record["summary"].strip()
            continue
        if kind not in CONVERSATION:
            if isinstance(kind, str):
                parsed.skip(f"{kind} record")
            else:
                parsed.problems.append(Problem(parsed.source, line, "not a Claude Code record (no 'type')"))
            continue
        message = record.get("message")
        if not isinstance(message, dict) or "content" not in message:
            parsed.problems.append(Problem(parsed.source, line, f"{kind} record without a message"))
            continue
        last = line
        if kind == "assistant":
            builder.assistant(line, record, message)
        else:
            builder.user(line, record, message)
    builder.hold_open_reply(last)
    return parsed
