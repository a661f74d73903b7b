"""Hand-offs (`handoffs/<id>.json`) and checkpoints (`checkpoints/<session>/<id>.json`) as searchable lines.

Both are written by the store as JSON with two-space indentation, one field or
one list item a line. A hit is `path:line` like any other, so each text value
is a row at the line it sits on, shown as `field: value` (a list item as
`field: value` too, the field being the list it belongs to). What is not
prose stays out: ids, timestamps, hop counts and artifact hashes. The record's
own time (`created` or `timestamp`) dates its lines, so a date filter and
recency see them; who handed what to whom is in every line's context.
"""
from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Any

from core.store.jsonsafe import parse_json_line

SKIPPED = frozenset({"id", "checkpoint_id", "session_id", "task_id", "timestamp", "created", "hop", "status",
                     "depends_on"})
_PAIR = re.compile(r'^\s*"((?:[^"\\]|\\.)*)"\s*:\s*(.*?),?\s*$')
_ITEM = re.compile(r'^\s*("(?:[^"\\]|\\.)*")\s*,?\s*$')
_HEX = re.compile(r"^[0-9a-f]{32,}$")


@dataclass(frozen=True)
class RecordLine:
    line: int
    text: str           # "target: ship the CSV export"
    field: str          # the field it belongs to (a heading of sorts)
    day: dt.date | None
    about: str          # "hand-off from planner to coder" / "checkpoint of session s1"


def _day(record: dict[str, Any]) -> dt.date | None:
    for key in ("created", "timestamp"):
        try:
            return dt.datetime.fromisoformat(str(record.get(key, ""))).date()
        except ValueError:
            continue
    return None


def _about(rel: str, record: dict[str, Any]) -> str:
    if rel.startswith("handoffs/"):
        return f"hand-off from {record.get('from_agent', '?')} to {record.get('to_agent', '?')}"
    return f"checkpoint of session {record.get('session_id', '?')}: {record.get('target', '')}"


def _string(quoted: str) -> str | None:
    value, why = parse_json_line(quoted)
    if why:
        return None
    return value if isinstance(value, str) else None


def record_lines(rel: str, text: str) -> tuple[list[RecordLine], list[str]]:
    """The searchable lines of one hand-off or checkpoint file, and problems (not JSON, not an object)."""
    record, why = parse_json_line(text)
    if why:
        return [], [f"{rel}: {why}; not searchable until it is fixed"]
    if not isinstance(record, dict):
        return [], [f"{rel}: not a JSON object; not searchable"]
    day, about = _day(record), _about(rel, record)
    out: list[RecordLine] = []
    field = ""
    for number, raw in enumerate(text.split("\n"), start=1):
        pair = _PAIR.match(raw)
        value = None
        if pair:
            key = _string(f'"{pair.group(1)}"') or ""
            rest = pair.group(2)
            if rest in ("[", "{"):
                field = key           # the items below belong to it
                continue
            value = _string(rest) if rest.startswith('"') else None
            name = field if field == "artifacts" else key
            if field == "artifacts" and value is not None:
                value = key           # an artifact is its path; the hash says nothing
        else:
            item = _ITEM.match(raw)
            if item:
                value, name = _string(item.group(1)), field
            elif raw.strip().startswith(("]", "}")):
                if len(raw) - len(raw.lstrip()) <= 2:
                    field = ""        # a top-level list or object ended
                continue
        if not value or not value.strip() or name in SKIPPED or _HEX.match(value):
            continue
        shown = " ".join(value.split())
        out.append(RecordLine(number, f"{name.replace('_', ' ')}: {shown}" if name else shown,
                              name.replace("_", " "), day, about))
    return out, []
