"""One line per saved version of a file: who made the change after it and what it did.

A history entry holds the file *before* a change, with the reason the writer gave.
The version after it is the next newer entry's snapshot (or the file now, for the
newest); when that one's hash is not the entry's `hash_after`, something outside
Reverie changed the file in between, which the line says too.
"""
from __future__ import annotations

import re
from collections import Counter

from core.workspace import strip_comments

_BULLET = re.compile(r"^\s*[-*+]\s+(?P<text>.+?)\s*$")
WHO = (("undo dream accept", "undo of a dream accept"), ("dream proposal", "dream accept"),
       ("undo:", "undo"), ("restore version", "restore"), ("unpin", "unpin"), ("pin", "pin"),
       ("redact secrets", "secret redaction"), ("edited in reverie", "editor"))


# Internal ids a reason may carry: history entries, dream proposals, changes ("d-20261207-…", "c-3").
_IDS = re.compile(r"\s*\((?:\d{8}T\d+Z-[^)]*|[a-z]{1,3}-[\w-]*\d[\w-]*)\)|\s+\b(?:d|c|m|p)-[0-9a-f][\w-]{3,}")


def who(reason: str) -> str:
    lowered = reason.lower()
    found = next((name for prefix, name in WHO if lowered.startswith(prefix)), None)
    return found or _IDS.sub("", reason).strip() or "unknown"


def when(entry) -> str:
    """The entry's time to the second; to the millisecond (from its id) when another shares the second."""
    day_time = entry.time.replace("T", " ")[:19]
    match = re.match(r"\d{8}T\d{6}(\d{3})", entry.id)
    return f"{day_time}.{match.group(1)}" if match else day_time


def bullets(text: str) -> Counter:
    found: Counter = Counter()
    for line in text.split("\n"):
        match = _BULLET.match(line)
        if match:
            found[" ".join(strip_comments(match.group("text")).split())] += 1
    return found


def bullet_delta(before: str, after: str) -> str:
    """"+3 −1 bullets" (a changed bullet counts as one of each); "" when only other lines changed."""
    old, new = bullets(before), bullets(after)
    added, removed = sum((new - old).values()), sum((old - new).values())
    if added or removed:
        return f"+{added} −{removed} bullets"
    return "same bullets" + (", other lines changed" if before != after else "")


def summaries(entries, snapshot_text, current) -> list[str]:
    """The one-line summary of each entry (newest first, as History.entries gives them).
    `snapshot_text(entry)` reads an entry's bytes as text; `current` is the file now (a Snapshot)."""
    lines = []
    seconds = Counter(entry.time[:19] for entry in entries)
    for index, entry in enumerate(entries):
        before = snapshot_text(entry)
        newer = entries[index - 1] if index else None
        after_hash = newer.hash_before if newer is not None else current.hash
        after = snapshot_text(newer) if newer is not None else current.text
        outside = after_hash != entry.hash_after
        what = "changed outside Reverie after it" if outside else bullet_delta(before, after)
        undone = " (undone)" if entry.undone_by else ""
        stamp = when(entry) if seconds[entry.time[:19]] > 1 else entry.time.replace("T", " ")[:19]
        lines.append(f"{stamp}  {who(entry.reason)}: {what}{undone}")
    return lines
