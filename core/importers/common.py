"""What every importer shares: parsed sessions, problems by line, and storing into sessions/.

An importer turns someone else's transcript into OpenAI-shape chat messages
(core/harness/messages.py) and hands them here. Storing is append-only and
idempotent: each message carries an id derived from what it is (the transcript's
own uuid, or its content), never from where it sits in the file, so importing a
transcript again, after it grew or after lines at its top were removed, appends
only what is new. A reply written over several lines (`_reply`, `_parts`: its
blocks in order) is stored as far as it has arrived; when more of its blocks
arrive later, exactly those are appended as a continuation of it
(`<reply>~<first>-<end>`). Only the keys a chat message has are
kept (plus id, ts and kind), so nothing in an imported file can smuggle in the
harness's private keys (an `evicted` path, say).
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.errors import FormatError, NotFoundError
from core.harness.messages import validate_message
from core.store.activity import record_activity
from core.store.locks import locked
from core.store.sessions import append_jsonl, read_jsonl

IMPORT_AGENT = "import"     # the activity log's name for sessions brought in by `reverie import`
KEPT_KEYS = ("role", "content", "tool_calls", "tool_call_id", "name", "id", "ts", "kind")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class Problem:
    source: str      # the file, as given
    line: int        # 1-based; 0 for the file as a whole
    message: str

    def __str__(self) -> str:
        return f"{self.source}:{self.line}: {self.message}" if self.line else f"{self.source}: {self.message}"


@dataclass
class ParsedSession:
    session_id: str
    source: str
    messages: list[dict[str, Any]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)   # records deliberately left out, by kind
    title: str = ""                                          # the transcript's own summary line, if any

    def skip(self, kind: str) -> None:
        self.skipped[kind] = self.skipped.get(kind, 0) + 1


@dataclass(frozen=True)
class ImportResult:
    session_id: str
    path: str            # workspace-relative session log
    source: str
    messages: int        # valid messages in the transcript
    written: int         # of those, new in the session log
    created: bool        # the session log did not exist before
    problems: tuple[Problem, ...]
    skipped: dict[str, int]

    def describe(self) -> str:
        already = self.messages - self.written
        text = (f"{self.session_id}: {self.written} message(s) imported"
                + (f" ({already} already there)" if already else "") + f" -> {self.path}")
        if self.skipped:
            text += "; left out: " + ", ".join(f"{n} {kind}" for kind, n in sorted(self.skipped.items()))
        if self.problems:
            text += f"; {len(self.problems)} malformed line(s) skipped"
        return text


def safe_session_id(text: str, fallback: str = "import") -> str:
    """A session id that is one safe file-name component (letters, digits, . _ -; at most 128)."""
    cleaned = _UNSAFE.sub("-", text).strip(".-_")[:120].rstrip(".-_")
    cleaned = cleaned.replace("..", ".")
    return cleaned or fallback


def stable_id(prefix: str, *parts: Any) -> str:
    digest = hashlib.sha1("\x00".join(json.dumps(p, sort_keys=True, ensure_ascii=False, default=str)
                                      for p in parts).encode("utf-8")).hexdigest()
    return f"{prefix}-{digest[:16]}"


def transcript_files(source: Path) -> list[Path]:
    """The .jsonl files to import: the file itself, or every .jsonl under a folder (sorted)."""
    source = source.expanduser()
    if source.is_file():
        return [source]
    if source.is_dir():
        files = sorted(p for p in source.rglob("*.jsonl") if p.is_file())
        if not files:
            raise NotFoundError(f"no .jsonl transcripts under {source}")
        return files
    raise NotFoundError(f"no transcript at {source}: the file or folder does not exist")


def read_records(path: Path, parsed: ParsedSession) -> list[tuple[int, dict[str, Any]]]:
    """The JSON objects of a JSONL file; every other line becomes a Problem with its number."""
    try:
        read = read_jsonl(path)
    except OSError as exc:
        raise FormatError(f"cannot read {path}: {exc.strerror or exc}") from exc
    parsed.problems.extend(Problem(parsed.source, p.line, p.message) for p in read.problems)
    return read.records


def reply_message(reply: str, parts: list[tuple[str, Any]], start: int) -> dict[str, Any]:
    """The assistant message holding blocks `start:` of a reply: its text, its tool calls, its id."""
    texts = [value for kind, value in parts[start:] if kind == "text"]
    calls = [value for kind, value in parts[start:] if kind == "call"]
    out: dict[str, Any] = {"content": "\n\n".join(texts),
                           "id": f"{reply}~{len(parts)}" if not start else f"{reply}~{start}-{len(parts)}"}
    if calls:
        out["tool_calls"] = calls
    return out


def _stored_blocks(ids: set[str]) -> dict[str, int]:
    """reply -> how many of its blocks the log holds, from the ids of its stored parts."""
    out: dict[str, int] = {}
    for mid in ids:
        reply, sep, span = mid.rpartition("~")
        end = span.rpartition("-")[2]
        if sep and end.isdigit():
            out[reply] = max(out.get(reply, 0), int(end))
    return out


def _still_new(message: dict[str, Any], blocks: dict[str, int]) -> dict[str, Any] | None:
    """A merged reply cut to the blocks not stored yet (None when all are); other messages unchanged."""
    reply = message.get("_reply")
    if not reply:
        return message
    have = blocks.get(reply, 0)
    if have >= len(message["_parts"]):
        return None
    if not have:
        return message
    rest = dict(message)
    rest.pop("tool_calls", None)
    rest.update(reply_message(reply, message["_parts"], have))
    return rest


def _says_nothing(message: dict[str, Any]) -> bool:
    """An assistant message with no text and no tool call (a re-read reply whose new blocks were only
    thinking, say): storing it would add an empty turn on every import."""
    return message.get("role") == "assistant" and not str(message.get("content") or "").strip() \
        and not message.get("tool_calls")


def keep(message: dict[str, Any]) -> dict[str, Any]:
    return {k: message[k] for k in KEPT_KEYS if k in message and message[k] is not None}


def store_session(workspace, parsed: ParsedSession) -> ImportResult:
    """Append the parsed messages not yet in sessions/<id>.log.jsonl; a malformed one is a Problem."""
    from core.dream.state import record_session_ended

    path = workspace.paths.session_log(parsed.session_id)    # PathEscapeError on an unsafe id
    valid: list[dict[str, Any]] = []
    problems = list(parsed.problems)
    for message in parsed.messages:
        issues = validate_message(keep(message))
        if issues:
            problems.append(Problem(parsed.source, message.get("_line", 0), "; ".join(issues)))
            continue
        valid.append(message)
    with locked(workspace.paths.locks_dir / f"import-{parsed.session_id}.lock"):
        created = not path.exists() or path.stat().st_size == 0
        seen = {str(obj.get("id")) for obj in read_jsonl(path, workspace.root).objects} if not created else set()
        blocks = _stored_blocks(seen)
        todo, batch = [], set()
        for message in valid:
            message = _still_new(message, blocks)
            if message is None or message["id"] in seen or message["id"] in batch or _says_nothing(message):
                continue
            batch.add(message["id"])
            todo.append(keep(message))
        if todo:
            append_jsonl(path, todo, root=workspace.root)
    rel = workspace.relative(path)
    if todo:
        workspace.notice_external_change(rel)
        record_activity(workspace.paths, IMPORT_AGENT, "import", rel)   # an imported session is agent activity
        if created:
            record_session_ended(workspace.paths)     # a finished session counts toward the dream gate
            if parsed.title:
                workspace.session_cache.add(parsed.session_id, parsed.title, source=parsed.source)
    return ImportResult(session_id=parsed.session_id, path=rel, source=parsed.source, messages=len(valid),
                        written=len(todo), created=created and bool(todo), problems=tuple(problems),
                        skipped=dict(parsed.skipped))
