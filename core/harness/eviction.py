"""Tool-result eviction: big payloads leave the context, and a file keeps every byte.

Tier 1 (at once): a tool result over `threshold_tokens` (8,000, counted with the
loaded model's own tokenizer; cl100k_base without one) is written to
`large_tool_results/<session>/<call_id>.txt` and replaced by a placeholder with
its head, its tail and the path, so the agent can read the rest with
read_file. Reading tools are exempt: evicting what read_file returned would
only make the agent read it again.

Tier 2 (delayed): when the context passes `delayed_fraction` of the usable
window, the oldest bulky tool results and tool-call arguments are replaced by
short references to files holding them, until the context is under the line.
"""
from __future__ import annotations

import hashlib
import json
import re

from core.config import EvictionSettings
from core.errors import PathEscapeError
from core.harness.messages import Message, message_tokens, tool_names, total_tokens
from core.store.evicted import read_evicted, write_evicted
from core.store.paths import WorkspacePaths
from core.tokens import count_tokens

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")
REFERENCE_PREVIEW = 200
MAX_TOKENS_PER_CHAR = 4      # no tokenizer spends more than 4 tokens on one character (a byte each)
COUNTED_KEPT = 256


def read_payload(paths: WorkspacePaths, rel_path: str) -> str:
    """The text of an evicted payload (confined to `large_tool_results/`, core/store/evicted.py)."""
    return read_evicted(paths, rel_path)


def safe_call_id(call_id: str) -> str:
    """A tool call id usable as a file name (ids from outside may hold any character)."""
    cleaned = _UNSAFE.sub("_", call_id or "call").strip("._-")[:80] or "call"
    if cleaned != call_id or ".." in cleaned:
        cleaned = f"{cleaned.replace('..', '_')}-{hashlib.sha1((call_id or '').encode()).hexdigest()[:8]}"
    return cleaned


def placeholder(content: str, rel_path: str, preview: int) -> str:
    return (f"[tool result evicted: {len(content)} characters; the full text is in {rel_path} "
            f"(read it with read_file)]\n--- first {preview} characters ---\n{content[:preview]}\n"
            f"--- last {preview} characters ---\n{content[-preview:]}")


def reference(content: str, rel_path: str) -> str:
    return (f"[tool result moved to {rel_path}: {len(content)} characters; read it with read_file]\n"
            f"{content[:REFERENCE_PREVIEW]}")


class ToolResultEvictor:
    def __init__(self, paths: WorkspacePaths, session_id: str, settings: EvictionSettings | None = None,
                 count=count_tokens):
        self.paths = paths
        self.session_id = session_id
        self.settings = settings or EvictionSettings()
        self.count = count                    # the model's tokenizer when one is loaded (counter_for)
        self._counted: dict[str, int] = {}    # the policy asks about the same results at every step

    def _store(self, call_id: str, content: str, suffix: str = "") -> str:
        return write_evicted(self.paths, self.session_id, safe_call_id(call_id) + suffix, content)

    # ----- tier 1 ---------------------------------------------------------------------------
    def should_evict(self, tool_name: str, content: str) -> bool:
        if tool_name in self.settings.exempt_tools or not content:
            return False
        if self.settings.threshold_chars and len(content) > self.settings.threshold_chars:
            return True
        limit = self.settings.threshold_tokens
        if not limit or len(content) * MAX_TOKENS_PER_CHAR <= limit:
            return False                      # too short to be over, whatever the tokenizer
        return self.tokens(content) > limit

    def tokens(self, content: str) -> int:
        if content not in self._counted:
            if len(self._counted) >= COUNTED_KEPT:
                self._counted.clear()
            self._counted[content] = self.count(content)
        return self._counted[content]

    def evict(self, msg: Message, tool_name: str = "") -> Message:
        """The tool message, evicted when it is over the threshold (else unchanged)."""
        name = tool_name or msg.get("name") or ""
        content = msg.get("content") or ""
        if msg.get("role") != "tool" or msg.get("evicted") or not self.should_evict(name, content):
            return msg
        rel = self._store(msg["tool_call_id"], content)
        return {**msg, "content": placeholder(content, rel, self.settings.preview_chars), "evicted": rel}

    def evict_all(self, messages: list[Message]) -> tuple[list[Message], int]:
        names = tool_names(messages)
        out, n = [], 0
        for msg in messages:
            new = self.evict(msg, names.get(msg.get("tool_call_id", ""), "")) if msg.get("role") == "tool" else msg
            n += new is not msg
            out.append(new)
        return out, n

    # ----- tier 2 ---------------------------------------------------------------------------
    def delayed(self, messages: list[Message], *, usable_tokens: int, count, protect_last: int = 2,
                target_fraction: float | None = None) -> tuple[list[Message], int]:
        """Move the oldest bulky payloads to files until the context is under the line."""
        fraction = self.settings.delayed_fraction if target_fraction is None else target_fraction
        target = int(usable_tokens * fraction)
        total = total_tokens(messages, count)
        if total <= target:
            return messages, 0
        out = list(messages)
        moved = 0
        for i in range(max(0, len(out) - protect_last)):
            if total <= target:
                break
            msg = out[i]
            new = self._reference(msg)
            if new is msg:
                continue
            total += message_tokens(new, count) - message_tokens(msg, count)
            out[i] = new
            moved += 1
        return out, moved

    def _reference(self, msg: Message) -> Message:
        bulky = self.settings.delayed_min_chars
        if msg.get("role") == "tool":
            content = msg.get("content") or ""
            if len(content) < bulky or msg.get("kind") == "reference":
                return msg
            full, rel = content, msg.get("evicted")
            if rel:  # a tier-1 placeholder: its file already holds the full text; point there
                try:
                    full = read_payload(self.paths, rel)
                except (OSError, UnicodeDecodeError, PathEscapeError):
                    full = content
            else:
                rel = self._store(msg["tool_call_id"], content)
            return {**msg, "content": reference(full, rel), "evicted": rel, "kind": "reference"}
        if msg.get("role") == "assistant" and msg.get("tool_calls"):
            calls, changed = [], False
            for call in msg["tool_calls"]:
                args = call["function"].get("arguments") or ""
                if len(args) >= bulky and not args.startswith('{"_moved_to"'):
                    rel = self._store(call["id"], args, ".args")
                    call = {**call, "function": {**call["function"],
                                                 "arguments": json.dumps({"_moved_to": rel, "_chars": len(args)})}}
                    changed = True
                calls.append(call)
            return {**msg, "tool_calls": calls} if changed else msg
        return msg


def restore_payloads(paths: WorkspacePaths, msg: Message) -> Message:
    """The message with evicted payloads read back from their files (for the raw session log)."""
    out = msg
    if msg.get("role") == "tool" and msg.get("evicted"):
        try:
            full = read_payload(paths, msg["evicted"])
        except (OSError, UnicodeDecodeError, PathEscapeError):
            return msg  # the placeholder and its path are the best record left
        out = {k: v for k, v in msg.items() if k != "kind"}
        out["content"] = full
    if msg.get("tool_calls"):
        calls = []
        for call in msg["tool_calls"]:
            args = call["function"].get("arguments") or ""
            if args.startswith('{"_moved_to"'):
                try:
                    moved = json.loads(args)["_moved_to"]
                    args = read_payload(paths, moved)
                    call = {**call, "function": {**call["function"], "arguments": args}}
                except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, PathEscapeError):
                    pass
            calls.append(call)
        out = {**out, "tool_calls": calls}
    return out
