"""Which lines a search may answer with: by kind of file and by date.

Kinds (what a person picks in the search view, the CLI's --kind, the MCP
tool's `kinds`):
    memory      MEMORY.md, memory/superseded.md, OpenClaw's USER.md, SOUL.md, TOOLS.md,
                IDENTITY.md, AGENTS.md, HEARTBEAT.md, and undated notes under memory/
                (memory/people/maya.md): curated, undated
    daily       the dated logs under memory/ (memory/YYYY-MM-DD.md, hook-named
                YYYY-MM-DD-slug.md / -HHMM.md, nested month folders, memory/archive/)
    session     session logs sessions/<id>.log.jsonl
    handoff     hand-off packets handoffs/<id>.json
    checkpoint  task checkpoints checkpoints/<session>/<id>.json
    progress    progress.md, the attention anchor
    tasks       handoff + checkpoint + progress (a task's state, as one choice)

A date range keeps the lines whose date (a daily log's day, a message's or a
record's timestamp) lies within it, both ends included; undated lines
(MEMORY.md) are left out of a dated search. Every filter is one SQL condition
on the `lines` table, so keyword search applies it in its join and vector
search asks hnswlib for allowed labels only.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from core.errors import CoreError
from core.store.paths import OPENCLAW_FILES, daily_date

CURATED = ("MEMORY.md", "memory/superseded.md", *OPENCLAW_FILES)
# A file under memory/ is a daily log when its name is dated (lines.py gives each of its lines that day),
# a note otherwise: the line's day tells them apart without a pattern per naming scheme.
_KIND_SQL = {
    "memory": "(l.path IN (" + ", ".join(f"'{name}'" for name in CURATED) + ") "
              "OR (l.path GLOB 'memory/*' AND l.day = 0))",
    "daily": "(l.path GLOB 'memory/*' AND l.day > 0)",
    "session": "l.path GLOB 'sessions/*'",
    "handoff": "l.path GLOB 'handoffs/*'",
    "checkpoint": "l.path GLOB 'checkpoints/*'",
    "progress": "l.path = 'progress.md'",
}
GROUPS = {"tasks": ("handoff", "checkpoint", "progress")}
KINDS = tuple(_KIND_SQL) + tuple(GROUPS)
_ALIASES = {"memory.md": "memory", "daily-log": "daily", "daily-logs": "daily", "logs": "daily", "sessions": "session",
            "handoffs": "handoff", "hand-off": "handoff", "hand-offs": "handoff", "checkpoints": "checkpoint"}


class SearchFilterError(CoreError):
    """A kind or a date a search was asked to filter by is not one we know."""


def kind_of(rel: str) -> str:
    """The kind of an indexed file (one of the keys above)."""
    if rel in CURATED:
        return "memory"
    if rel == "progress.md":
        return "progress"
    head = rel.split("/", 1)[0]
    if head == "memory" and daily_date(Path(rel)) is None:
        return "memory"
    return {"memory": "daily", "sessions": "session", "handoffs": "handoff", "checkpoints": "checkpoint"}.get(head, "memory")


def _day(value, what: str) -> dt.date | None:
    if value is None or value == "":
        return None
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(str(value).strip()[:10])
    except ValueError:
        raise SearchFilterError(f"{what} {value!r} is not a date; write it as YYYY-MM-DD") from None


@dataclass(frozen=True)
class SearchFilter:
    kinds: tuple[str, ...] = ()         # empty: every kind
    since: dt.date | None = None
    until: dt.date | None = None

    @classmethod
    def of(cls, kinds: Iterable[str] | str | None = None, since=None, until=None) -> "SearchFilter":
        """A filter from what a person or an agent typed; a clear error for a kind or date we do not know."""
        if isinstance(kinds, str):
            kinds = [kinds]
        wanted: list[str] = []
        for raw in kinds or ():
            for given in str(raw).split(","):
                name = given.strip().lower()
                if not name or name == "all":
                    continue
                name = _ALIASES.get(name, name)
                if name not in KINDS:
                    raise SearchFilterError(f"unknown kind {given.strip()!r}; use one of {', '.join(KINDS)}")
                wanted.extend(GROUPS.get(name, (name,)))
        start, end = _day(since, "since"), _day(until, "until")
        if start and end and start > end:
            raise SearchFilterError(f"the date range is empty: since {start} is after until {end}")
        return cls(tuple(dict.fromkeys(wanted)), start, end)

    @property
    def active(self) -> bool:
        return bool(self.kinds or self.since or self.until)

    def sql(self) -> tuple[str, tuple]:
        """(condition on `lines` as l, its parameters); ("", ()) when nothing is filtered."""
        parts, params = [], []
        if self.kinds:
            parts.append("(" + " OR ".join(_KIND_SQL[k] for k in self.kinds) + ")")
        if self.since:
            parts.append("l.day >= ?")
            params.append(self.since.toordinal())
        if self.until:
            parts.append("l.day BETWEEN 1 AND ?")
            params.append(self.until.toordinal())
        return " AND ".join(parts), tuple(params)


NO_FILTER = SearchFilter()
