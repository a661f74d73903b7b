"""Messages rendered as a plain transcript for a model prompt, within a token budget.

Compaction and flush both show the model a span of conversation. A span can be
far larger than the model's window (tool results of 100 kB), so each message is
clipped to a head and a tail, the clip is tightened until the whole fits, and
only then are the oldest messages left out. Deterministic: the same span and
budget give the same text.
"""
from __future__ import annotations

from typing import Callable

from core.harness.messages import Message, tool_names

Counter = Callable[[str], int]


def clip(text: str, limit: int) -> str:
    """`text` cut to about `limit` characters, keeping its head and tail."""
    if len(text) <= limit:
        return text
    if limit < 40:
        return text[:limit]
    half = (limit - 3) // 2
    # A bare ellipsis: a wordy marker ("[200 chars cut]") gets copied into summaries by small models.
    return f"{text[:half]} … {text[-half:]}"


def render_line(msg: Message, names: dict[str, str], limit: int) -> str:
    role = msg.get("role")
    text = msg.get("content") or ""
    if role == "assistant" and msg.get("tool_calls"):
        calls = "; ".join(f"{c['function']['name']}({clip(c['function'].get('arguments') or '', limit // 2)})"
                          for c in msg["tool_calls"])
        head = f"assistant: {clip(text, limit)} " if text.strip() else "assistant "
        return f"{head}[called {calls}]"
    if role == "tool":
        # Tool output is mostly bulk (logs, listings): half the room of what people said.
        name = msg.get("name") or names.get(msg.get("tool_call_id", ""), "tool")
        return f"tool {name} result: {clip(text, limit // 2)}"
    return f"{role}: {clip(text, limit)}"


def render_transcript(messages: list[Message], budget_tokens: int, count: Counter,
                      start_limit: int = 1500, min_limit: int = 120) -> tuple[str, int]:
    """(transcript, number of messages left out at the start) fitting `budget_tokens`."""
    names = tool_names(messages)
    limit = start_limit
    while True:
        lines = [render_line(m, names, limit) for m in messages]
        text = "\n".join(lines)
        if count(text) <= budget_tokens or limit <= min_limit:
            break
        limit = max(min_limit, limit // 2)
    dropped = 0
    if count(text) > budget_tokens:
        # Still too long at the tightest clip: leave out the oldest lines, counting from the end.
        kept, used = [], 0
        for line in reversed(lines):
            cost = count(line) + 1
            if used + cost > budget_tokens:
                break
            kept.append(line)
            used += cost
        dropped = len(lines) - len(kept)
        text = "\n".join(reversed(kept))
    return text, dropped


def chunk_messages(messages: list[Message], budget_tokens: int, count: Counter,
                   limit: int = 600) -> list[list[Message]]:
    """Consecutive groups of messages whose transcript fits `budget_tokens` each (clipped at `limit`).

    Every message lands in some chunk, so a pipeline that walks the chunks sees the whole span;
    a message too big for a chunk on its own gets a chunk of its own (and is clipped harder).
    """
    names = tool_names(messages)
    chunks: list[list[Message]] = []
    current: list[Message] = []
    used = 0
    for msg in messages:
        cost = count(render_line(msg, names, limit)) + 1
        if current and used + cost > budget_tokens:
            chunks.append(current)
            current, used = [], 0
        current.append(msg)
        used += cost
    if current:
        chunks.append(current)
    return chunks
