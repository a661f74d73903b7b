"""The structured compaction summary: schema, validation, deterministic facts, rendering.

The model proposes a JSON object (session intent, achieved, pending work, key
decisions, artifacts with paths, failed attempts with reasons, next steps).
Deterministic code validates it against a small schema and fills what a small
model leaves out or gets wrong from facts the code can see for itself: the
first user request is the intent, paths named in tool-call arguments are the
artifacts, tool results that report an error are failed attempts. A previous
summary's facts carry forward, so repeated compactions do not forget.
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

from core.harness.grounding import content_words, is_grounded, is_repetitive
from core.harness.messages import Message, is_summary, parse_arguments, tool_names
from core.harness.transcript import clip

MAX_ITEMS = 6
MAX_CHARS = 200
LIST_FIELDS = ("achieved", "pending", "decisions", "next_steps")

_items = {"type": "array", "items": {"type": "string", "maxLength": MAX_CHARS}, "maxItems": MAX_ITEMS}
SUMMARY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "intent": {"type": "string", "maxLength": MAX_CHARS},
        "achieved": _items,
        "pending": _items,
        "decisions": _items,
        "artifacts": {"type": "array", "maxItems": MAX_ITEMS, "items": {
            "type": "object", "properties": {"path": {"type": "string", "maxLength": 160},
                                             "note": {"type": "string", "maxLength": 120}},
            "required": ["path", "note"]}},
        "failed_attempts": {"type": "array", "maxItems": MAX_ITEMS, "items": {
            "type": "object", "properties": {"attempt": {"type": "string", "maxLength": 160},
                                             "reason": {"type": "string", "maxLength": 160}},
            "required": ["attempt", "reason"]}},
        "next_steps": _items,
    },
    "required": ["intent", "achieved", "pending", "decisions", "artifacts", "failed_attempts", "next_steps"],
}

PATH_KEYS = ("path", "file", "file_path", "filename", "target", "dest", "destination", "output", "src")
_ERROR = re.compile(r"^\s*(error|exception|traceback|failed|fatal)\b|\b(error|failed|exit code [1-9]|not found|"
                    r"permission denied|timed out)\b", re.IGNORECASE)
_LOOKS_LIKE_PATH = re.compile(r"^[\w.~/-][\w.@~/+-]*(\.[A-Za-z0-9]{1,8}|/)$")


@dataclass
class SummaryData:
    intent: str = ""
    achieved: list[str] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    artifacts: list[dict[str, str]] = field(default_factory=list)        # {"path", "note"}
    failed_attempts: list[dict[str, str]] = field(default_factory=list)  # {"attempt", "reason"}
    next_steps: list[str] = field(default_factory=list)
    compacted_messages: int = 0
    offload_path: str = ""
    model_used: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Any) -> "SummaryData":
        if not isinstance(data, dict):
            return cls()
        known = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        try:
            return cls(**known)
        except TypeError:
            return cls()


# ----- validation of the model's proposal --------------------------------------------------
def _clean_text(value: Any, limit: int = MAX_CHARS) -> str:
    if not isinstance(value, str):
        return ""
    text = " ".join(value.split())
    return text[:limit].strip()


def _clean_list(value: Any, reject: set[str], evidence_words: set[str]) -> list[str]:
    out: list[str] = []
    for item in value if isinstance(value, list) else []:
        text = _clean_text(item)
        # A one- or two-word item ("notes.txt") says nothing a reader can act on.
        if text and text.lower() not in reject and text.lower() not in {o.lower() for o in out} \
                and len(text.split()) >= 3 and is_grounded(text, evidence_words) and not is_repetitive(text):
            out.append(text)
    return out[:MAX_ITEMS]


def validate_proposal(data: Any, evidence: str) -> SummaryData:
    """The model's JSON, checked: wrong types dropped, text bounded, artifacts must appear in the evidence."""
    if not isinstance(data, dict):
        return SummaryData()
    # A small model often echoes the field names or the instructions back as content.
    reject = {"", "none", "n/a", "null", "string", "...", *SUMMARY_SCHEMA["properties"]}
    words = content_words(evidence)
    intent = _clean_text(data.get("intent"))
    result = SummaryData(intent=intent if is_grounded(intent, words) else "", model_used=True)
    for name in LIST_FIELDS:
        setattr(result, name, _clean_list(data.get(name), reject, words))
    for item in data.get("artifacts") if isinstance(data.get("artifacts"), list) else []:
        if isinstance(item, dict):
            path = _clean_text(item.get("path"), 160)
            if path and path in evidence and _LOOKS_LIKE_PATH.match(path):
                note = _clean_text(item.get("note"), 120)
                result.artifacts.append({"path": path, "note": note if is_grounded(note, words) else ""})
    for item in data.get("failed_attempts") if isinstance(data.get("failed_attempts"), list) else []:
        if isinstance(item, dict):
            attempt, reason = _clean_text(item.get("attempt"), 160), _clean_text(item.get("reason"), 160)
            if attempt and reason and attempt.lower() not in reject and is_grounded(attempt + " " + reason, words):
                result.failed_attempts.append({"attempt": attempt, "reason": reason})
    return result


# ----- what the code can see for itself ----------------------------------------------------
def deterministic_facts(messages: list[Message]) -> SummaryData:
    """Intent, artifacts and failed attempts read straight off the messages."""
    data = SummaryData()
    originals = [m for m in messages if not is_summary(m)]
    users = [m for m in originals if m.get("role") == "user" and m.get("kind") != "harness"
             and (m.get("content") or "").strip()]
    if users:
        data.intent = _clean_text(users[0]["content"])
        data.next_steps = [_clean_text(users[-1]["content"])] if len(users) > 1 else []
    names = tool_names(originals)
    calls: dict[str, str] = {}
    seen_paths: set[str] = set()
    for msg in originals:
        for call in msg.get("tool_calls") or []:
            args = parse_arguments(call)
            calls[call["id"]] = f"{call['function']['name']}({clip(call['function'].get('arguments') or '', 80)})"
            for key in PATH_KEYS:
                value = args.get(key)
                if isinstance(value, str) and value.strip() and value not in seen_paths and len(value) <= 160:
                    seen_paths.add(value)
                    data.artifacts.append({"path": value, "note": f"used by {call['function']['name']}"})
        if msg.get("evicted"):
            path = str(msg["evicted"])
            if path not in seen_paths:
                seen_paths.add(path)
                data.artifacts.append({"path": path, "note": "evicted tool payload (full text)"})
        if msg.get("role") == "tool":
            first = (msg.get("content") or "").strip().split("\n", 1)[0]
            if first and _ERROR.search(first[:300]):
                call_id = msg.get("tool_call_id", "")
                attempt = calls.get(call_id) or names.get(call_id, "tool call")
                data.failed_attempts.append({"attempt": attempt, "reason": _clean_text(first, 160)})
    return data


def _merge_list(*lists: list, limit: int, key=lambda x: x) -> list:
    out, seen = [], set()
    for items in lists:
        for item in items:
            k = key(item)
            k = k.lower() if isinstance(k, str) else k
            if k not in seen:
                seen.add(k)
                out.append(item)
    return out[-limit:]


def merge(previous: SummaryData | None, proposal: SummaryData, facts: SummaryData) -> SummaryData:
    """One summary from the last one, the model's proposal and the deterministic facts.

    The session intent is the first request ever made (carried from the previous summary);
    artifacts, decisions and failures accumulate; pending work and next steps are the newest
    the model gave, else the previous ones, else the last request seen.
    """
    prev = previous or SummaryData()
    return SummaryData(
        intent=prev.intent or facts.intent or proposal.intent,
        achieved=_merge_list(prev.achieved, proposal.achieved, limit=12),
        pending=proposal.pending or prev.pending,
        decisions=_merge_list(prev.decisions, proposal.decisions, limit=12),
        artifacts=_merge_list(prev.artifacts, facts.artifacts, proposal.artifacts, limit=24,
                              key=lambda a: a["path"]),
        failed_attempts=_merge_list(prev.failed_attempts, facts.failed_attempts, proposal.failed_attempts,
                                    limit=12, key=lambda f: f["attempt"] + "|" + f["reason"]),
        next_steps=proposal.next_steps or prev.next_steps or facts.next_steps,
        compacted_messages=prev.compacted_messages + facts.compacted_messages,
        offload_path=facts.offload_path or prev.offload_path,
        model_used=proposal.model_used,
    )


def render(data: SummaryData) -> str:
    """The summary as the text of the message that replaces the compacted prefix."""
    where = f"; the full messages are in {data.offload_path}" if data.offload_path else ""
    lines = [f"[Summary of the earlier conversation: {data.compacted_messages} messages compacted{where}]",
             f"Session intent: {data.intent or '(not stated)'}"]

    def section(title: str, items: list[str]) -> None:
        if items:
            lines.append(f"{title}:")
            lines.extend(f"- {item}" for item in items)

    section("Achieved", data.achieved)
    section("Pending", data.pending)
    section("Key decisions", data.decisions)
    section("Artifacts", [f"{a['path']}" + (f" — {a['note']}" if a.get("note") else "") for a in data.artifacts])
    section("Failed attempts", [f"{f['attempt']} — {f['reason']}" for f in data.failed_attempts])
    section("Next steps", data.next_steps)
    return "\n".join(lines)
