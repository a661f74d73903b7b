"""Chat messages in the OpenAI shape, serialisable to JSONL.

    {"role": "assistant", "content": "", "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\": \"a.txt\"}"}}]}
    {"role": "tool", "tool_call_id": "call_1", "name": "read_file", "content": "..."}

Messages are plain dicts so they go to any client unchanged. The harness adds a
few private keys of its own (`id`: a stable message id, so offloading happens
exactly once per message; `kind`: "summary" for compaction summaries;
`evicted`: where an evicted payload went). `for_model()` strips them again.
"""
from __future__ import annotations

import json
import uuid
from typing import Any, Callable, Iterable

from core.errors import FormatError

Message = dict[str, Any]
ROLES = ("system", "user", "assistant", "tool")
MODEL_KEYS = ("role", "content", "tool_calls", "tool_call_id", "name")
PRIVATE_KEYS = ("id", "kind", "evicted", "summary_data", "ts")


def new_id(prefix: str = "m") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:16]}"


def _stamp(msg: Message) -> Message:
    msg.setdefault("id", new_id())
    return msg


def system(text: str) -> Message:
    return _stamp({"role": "system", "content": text})


def user(text: str) -> Message:
    return _stamp({"role": "user", "content": text})


def tool_call(name: str, arguments: dict[str, Any] | str, call_id: str | None = None) -> dict[str, Any]:
    args = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return {"id": call_id or new_id("call"), "type": "function", "function": {"name": name, "arguments": args}}


def assistant(text: str = "", tool_calls: list[dict[str, Any]] | None = None) -> Message:
    msg: Message = {"role": "assistant", "content": text}
    if tool_calls:
        msg["tool_calls"] = tool_calls
    return _stamp(msg)


def tool_result(call_id: str, content: str, name: str = "") -> Message:
    msg: Message = {"role": "tool", "tool_call_id": call_id, "content": content}
    if name:
        msg["name"] = name
    return _stamp(msg)


def ensure_ids(messages: Iterable[Message]) -> list[Message]:
    """The same messages, each with an `id` (messages from outside may have none)."""
    return [_stamp(m) for m in messages]


# ----- shape checks ---------------------------------------------------------------------------
def validate_message(msg: Any) -> list[str]:
    if not isinstance(msg, dict):
        return ["a message must be a JSON object"]
    problems = []
    role = msg.get("role")
    if role not in ROLES:
        problems.append(f"unknown role {role!r} (expected one of {', '.join(ROLES)})")
    content = msg.get("content")
    if content is not None and not isinstance(content, str):
        problems.append("content must be text")
    if role == "tool" and not isinstance(msg.get("tool_call_id"), str):
        problems.append("a tool message needs a tool_call_id")
    for call in msg.get("tool_calls") or []:
        fn = call.get("function") if isinstance(call, dict) else None
        if not isinstance(call, dict) or not isinstance(call.get("id"), str) or not isinstance(fn, dict) \
                or not isinstance(fn.get("name"), str) or not isinstance(fn.get("arguments", ""), str):
            problems.append("each tool call needs an id, a function name and arguments as a JSON string")
    if msg.get("tool_calls") and role != "assistant":
        problems.append("only assistant messages carry tool_calls")
    return problems


def call_ids(msg: Message) -> list[str]:
    return [c["id"] for c in msg.get("tool_calls") or []]


def orphan_results(messages: list[Message]) -> list[int]:
    """Indexes of tool results not preceded, within their block, by the assistant message that called them."""
    orphans, open_ids = [], set()
    for i, msg in enumerate(messages):
        role = msg.get("role")
        if role == "assistant":
            open_ids = set(call_ids(msg))
        elif role == "tool":
            if msg.get("tool_call_id") not in open_ids:
                orphans.append(i)
        else:
            open_ids = set()
    return orphans


def is_summary(msg: Message) -> bool:
    return msg.get("kind") == "summary"


def unit_starts(messages: list[Message]) -> list[int]:
    """Indexes where a cut may go: never between an assistant's tool calls and their results."""
    return [i for i, msg in enumerate(messages) if msg.get("role") != "tool"]


def tool_names(messages: Iterable[Message]) -> dict[str, str]:
    """call id -> tool name, from the assistant messages."""
    names = {}
    for msg in messages:
        for call in msg.get("tool_calls") or []:
            names[call["id"]] = call["function"]["name"]
    return names


def parse_arguments(call: dict[str, Any]) -> dict[str, Any]:
    """A tool call's arguments as a dict ({} when they are not a JSON object, e.g. truncated)."""
    try:
        value = json.loads(call["function"].get("arguments") or "{}")
    except (ValueError, TypeError):
        return {}
    return value if isinstance(value, dict) else {}


# ----- text and tokens ----------------------------------------------------------------------
def message_text(msg: Message) -> str:
    """Everything of a message that takes room in a prompt."""
    parts = [msg.get("content") or ""]
    for call in msg.get("tool_calls") or []:
        parts.append(f"{call['function']['name']}({call['function'].get('arguments') or ''})")
    return "\n".join(p for p in parts if p)


TokenCounter = Callable[[str], int]
_OVERHEAD = 4  # role markers and separators of a chat template, per message


def message_tokens(msg: Message, count: TokenCounter) -> int:
    return count(message_text(msg)) + _OVERHEAD


def total_tokens(messages: Iterable[Message], count: TokenCounter) -> int:
    return sum(message_tokens(m, count) for m in messages)


def for_model(messages: Iterable[Message]) -> list[Message]:
    """The messages with only the keys a chat API knows."""
    return [{k: m[k] for k in MODEL_KEYS if k in m} for m in messages]


def as_plain_chat(messages: Iterable[Message]) -> list[Message]:
    """System/user/assistant text only, for chat templates that know no tool role.

    Small local models' templates (ChatML, Gemma) have no tool messages, and some insist on
    alternating turns: tool calls become text in the assistant turn, tool results become a
    user turn, and consecutive turns of one role are joined.
    """
    out: list[Message] = []
    for i, msg in enumerate(messages):
        role = msg.get("role")
        text = msg.get("content") or ""
        if role == "assistant" and msg.get("tool_calls"):
            calls = "\n".join(f"[tool call {c['function']['name']} {c['function'].get('arguments') or '{}'}]"
                              for c in msg["tool_calls"])
            text = f"{text}\n{calls}".strip()
        elif role == "tool":
            role = "user"
            text = f"[tool result {msg.get('name') or ''} {msg.get('tool_call_id')}]\n{text}".replace("  ", " ")
        elif role == "system" and i > 0:
            role = "user"
        if out and out[-1]["role"] == role and not (role == "system"):
            out[-1]["content"] += "\n\n" + text
        else:
            out.append({"role": role, "content": text})
    return out


# ----- JSONL ----------------------------------------------------------------------------------
def to_jsonl(messages: Iterable[Message]) -> str:
    return "".join(json.dumps(m, ensure_ascii=False, separators=(",", ":")) + "\n" for m in messages)


def from_jsonl(text: str, *, source: str = "messages") -> list[Message]:
    """Messages from JSONL text; a line that is not a valid message is an error naming its line."""
    messages = []
    for number, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        try:
            msg = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise FormatError(f"{source} line {number}: not valid JSON ({exc.msg})") from exc
        problems = validate_message(msg)
        if problems:
            raise FormatError(f"{source} line {number}: " + "; ".join(problems))
        messages.append(msg)
    return messages
