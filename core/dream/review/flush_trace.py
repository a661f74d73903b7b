"""From a daily-log line back to the conversation: which flush wrote it, from which session's messages.

Every flush appends a record to `.reverie/flushes.jsonl`: the daily log and line range
it wrote, the session id and the ids of the messages it read. A MEMORY.md bullet's
source names daily-log lines; the flush whose block holds those lines leads on to the
session log, where the messages are looked up by id. `reverie why` follows this
bullet -> log line -> flush -> session messages chain.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath

from core.errors import PathEscapeError
from core.store.sessions import read_jsonl

MAX_MESSAGES = 12          # shown per flush; a long span says how many more there were


@dataclass(frozen=True)
class FlushTrace:
    when: str
    session_id: str
    log_path: str                                   # the daily log the flush wrote (as recorded)
    lines: tuple[int, int]                          # the block it wrote there
    messages: tuple[tuple[str, str, str], ...]      # (message id, role, content) found in the session log
    missing: int = 0                                # message ids the session log no longer has
    more: int = 0                                   # messages left out of `messages` (MAX_MESSAGES)


def _same_log(recorded: str, found: str) -> bool:
    """memory/2026-11-30.md and memory/archive/2026-11-30.md are one log (archiving only moves it)."""
    return PurePosixPath(recorded).name == PurePosixPath(found).name and found.startswith("memory/")


def trace_lines(ws, rel_path: str, numbers: list[int]) -> list[FlushTrace]:
    """The flushes whose written block holds any of `numbers` in the daily log `rel_path`."""
    if not numbers:
        return []
    found = []
    for record in read_jsonl(ws.paths.flush_record).objects:
        span = record.get("lines") or [0, 0]
        try:
            first, last = int(span[0]), int(span[1])
        except (TypeError, ValueError, IndexError):
            continue
        if record.get("outcome") != "written" or not _same_log(str(record.get("path", "")), rel_path):
            continue
        if not any(first <= n <= last for n in numbers):
            continue
        found.append(_trace(ws, record, (first, last)))
    return found


def _trace(ws, record: dict, lines: tuple[int, int]) -> FlushTrace:
    session_id = str(record.get("session_id") or "")
    wanted = [str(i) for i in record.get("message_ids") or []]
    by_id: dict[str, dict] = {}
    if session_id:
        try:
            by_id = {str(m.get("id")): m for m in ws.read_session(session_id).objects}
        except (PathEscapeError, OSError):
            by_id = {}
    present = [by_id[i] for i in wanted if i in by_id]
    shown = tuple((str(m.get("id")), str(m.get("role", "")), str(m.get("content") or "")) for m in present[:MAX_MESSAGES])
    return FlushTrace(str(record.get("ts", "")), session_id, str(record.get("path", "")), lines, shown,
                      missing=len(wanted) - len(present), more=max(0, len(present) - MAX_MESSAGES))
