"""Facts from the sessions themselves: offloaded session logs and imported transcripts.

The autoDream chapter's Gather reads the session history, per role: what the person
says gives preferences, what the assistant reports gives outcomes, what tools return
gives technical discoveries and system constraints. A flush by a small model keeps
only a few facts in the daily logs; the session log (`sessions/<id>.log.jsonl`,
written by compaction's offload and by the importers) keeps every message, so a
dream that reads it too does not depend on how good the flush was.

A fact is one statement: a sentence that says something is so ("X is Y", "we use
Z", "the build needs W"), never a request, a question, a plan, a greeting, code or
a log line. Each carries `session:<id>#<n>`, n being the message's line in the log,
so `reverie why` shows the message. The kind and relation rules (kinds.py,
relations.py) then judge these facts exactly as they judge daily-log bullets.

Behind a watermark like the daily logs' (its own, `session_watermark`, so a session
log's clock never hides a daily log): a log whose mtime is not past it is only
stat()ed, and a log a dream read before is read from the line after the last one it
read (when those lines are unchanged; the log is append-only).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field

from core.errors import CoreError
from core.store.fileio import confined_glob, read_bytes
from core.store.paths import WorkspacePaths
from core.store.textio import decode_lossy

# Where a fact of each role goes when no keyword says better (core/dream/judgment/sections.py).
ROLE_SECTIONS = {"user": "Preferences", "assistant": "Decisions", "tool": "Learnings"}
MAX_TOOL_FACTS = 8          # a tool result is mostly data: a few statements from it at most
MAX_MESSAGE_CHARS = 200_000  # a huge payload is scanned this far
MIN_WORDS, MAX_WORDS = 4, 60
SKIPPED_KINDS = frozenset({"summary", "harness", "reference"})

_SPLIT = re.compile(r"(?<=[.!?。！？])\s+|\n+")
# Requests, plans, greetings and narration of what the assistant is about to do.
_NOT_A_STATEMENT = re.compile(
    r"^(?:please|pls|can you|could you|would you|will you|let'?s|let me|let us|i'?ll|i will|i'?m going to|"
    r"i am going to|i'?d like|okay|ok|sure|thanks|thank you|hi|hello|hey|looking at|checking|now i|next,? i|"
    r"first,? i|here is|here'?s|try|run|check|look|see|show|tell|give|find|search|read|open|use|make|do)\b",
    re.IGNORECASE)
# A statement says something is so: a verb of being, having, using, needing, or a lasting rule.
_STATEMENT_VERB = re.compile(
    r"\b(?:is|are|was|were|has|have|had|uses?|used|prefers?|preferred|likes?|loves?|hates?|wants?|needs?|"
    r"requires?|runs?|ran|lives?|works?|owns?|must|always|never|means|belongs|costs?|supports?|depends|"
    r"fails?|failed|breaks?|broke|caused?|decided|chose|agreed|switched|moved|lives|expects?|allows?|"
    r"accepts?|rejects?|returns?|listens|points|stores?|keeps?|should|cannot|can'?t|won'?t|doesn'?t|don'?t|"
    r"isn'?t|aren'?t|wasn'?t)\b|是|有|要|用|喜欢|需要|不能",
    re.IGNORECASE)
_LASTING = re.compile(r"\b(?:always|never|from now on|going forward|by default|every|in all|whenever)\b", re.IGNORECASE)
_CODE = re.compile(r"[{}<>|\\]|=>|==|:=|\(\)|^\s*(?:def|class|import|from|return|SELECT|INSERT)\b|```")


def is_statement(sentence: str) -> bool:
    """A sentence that states a fact (not a request, a question, code or a log line)."""
    text = sentence.strip()
    if not text or not text[0].isalpha() or text.endswith("?") or _CODE.search(text):
        return False
    words = text.split()
    if not MIN_WORDS <= len(words) <= MAX_WORDS and not _is_cjk(text):
        return False
    letters = sum(ch.isalpha() for ch in text)
    if letters < 0.6 * sum(not ch.isspace() for ch in text):
        return False
    if _NOT_A_STATEMENT.match(text):
        return bool(_LASTING.search(text))      # "Always use tabs" is a standing preference, not a request
    return bool(_STATEMENT_VERB.search(text))


def _is_cjk(text: str) -> bool:
    return any("\u3040" <= ch <= "\u30ff" or "\u4e00" <= ch <= "\u9fff" or "\uac00" <= ch <= "\ud7af"
               for ch in text) and len(text) >= 6


@dataclass(frozen=True)
class Statement:
    """One statement of a logged message (core/dream/pipeline/material.py makes it a Fact)."""

    text: str
    ref: str                  # session:<id>#<line>
    day: str
    section: str              # the role's section (ROLE_SECTIONS)


def message_statements(session_id: str, line: int, message: dict, day: str = "") -> list[Statement]:
    """The statements of one logged message, each sourced to `session:<id>#<line>`."""
    role = str(message.get("role") or "")
    if role not in ROLE_SECTIONS or message.get("kind") in SKIPPED_KINDS:
        return []
    content = message.get("content")
    if isinstance(content, list):         # content parts (an importer may keep them)
        content = " ".join(str(p.get("text") or "") for p in content if isinstance(p, dict))
    if not isinstance(content, str) or not content.strip():
        return []
    ref = f"session:{session_id}#{line}"
    found: list[Statement] = []
    for piece in _SPLIT.split(content[:MAX_MESSAGE_CHARS]):
        if is_statement(piece) and len(piece.strip()) >= 12:
            found.append(Statement(" ".join(piece.split()), ref, day, ROLE_SECTIONS[role]))
            if role == "tool" and len(found) >= MAX_TOOL_FACTS:
                break
    return found


@dataclass
class SessionRead:
    statements: list[Statement] = field(default_factory=list)
    logs_read: list[str] = field(default_factory=list)
    logs_seen: int = 0
    bytes_read: int = 0
    watermark: float = 0.0
    consumed: dict[str, list] = field(default_factory=dict)   # rel path -> [lines read, sha256 of them]


def lines_hash(lines: list[str]) -> str:
    """What a dream remembers of the lines it read: an appended log keeps these lines as they were."""
    return hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()


def _day(message: dict, fallback: str) -> str:
    stamp = str(message.get("ts") or "")
    return stamp[:10] if re.match(r"\d{4}-\d{2}-\d{2}", stamp) else fallback


def read_session_logs(paths: WorkspacePaths, watermark: float, consumed: dict) -> SessionRead:
    """Facts from the session logs changed since `watermark`, each from the line after the one the
    last dream read (`consumed`: {rel path: [lines, sha256]})."""
    import datetime as dt

    out = SessionRead(watermark=watermark)
    if not paths.sessions_dir.is_dir():
        return out
    # Only logs that really lie inside the workspace: a link out is reported by `index`, never read.
    for path in sorted(confined_glob(paths.root, paths.sessions_dir, "*.log.jsonl")):
        out.logs_seen += 1
        try:
            mtime = os.stat(path).st_mtime       # before reading: a later append moves it past the watermark
        except FileNotFoundError:
            continue
        if mtime <= watermark:
            continue
        rel = paths.relative(path)
        session_id = path.name[: -len(".log.jsonl")]
        try:
            data = read_bytes(paths.root, path)
        except (OSError, CoreError):
            continue                              # gone or turned into a link since the listing
        out.bytes_read += len(data)
        lines = decode_lossy(data).text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        start = 0
        seen = consumed.get(rel)
        if isinstance(seen, list) and len(seen) == 2 and isinstance(seen[0], int) and 0 < seen[0] <= len(lines):
            if lines_hash(lines[: seen[0]]) == seen[1]:
                start = seen[0]
        day = dt.datetime.fromtimestamp(mtime).date().isoformat()
        for index in range(start, len(lines)):
            raw = lines[index]
            if not raw.strip():
                continue
            try:
                message = json.loads(raw)
            except (ValueError, RecursionError):
                continue                          # a damaged line is skipped (the reader reports it)
            if isinstance(message, dict):
                out.statements.extend(message_statements(session_id, index + 1, message, _day(message, day)))
        out.logs_read.append(rel)
        out.consumed[rel] = [len(lines), lines_hash(lines)]
        out.watermark = max(out.watermark, mtime)
    return out
