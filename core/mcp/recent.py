"""`memory_recent`: what happened in the workspace over the last N days, for an agent starting a task.

One bounded answer instead of a dozen reads: the daily-log bullets of those days
(newest day first), the sessions that ended (with their summaries from the session
cache), and the last activity of each agent that used the workspace. Everything is
cut to MAX_CHARS so it fits a small context.
"""
from __future__ import annotations

import datetime as dt
from typing import Any

from core.secrets import mask_secrets, mask_window
from core.store.activity import last_by_agent
from core.store.memory_md import strip_comments

MAX_DAYS = 90
MAX_CHARS = 12_000
MAX_SUMMARY_CHARS = 400


def memory_recent(ws, days: int = 7, *, today: dt.date | None = None) -> dict[str, Any]:
    days = max(1, min(int(days), MAX_DAYS))
    today = today or dt.date.today()
    first = today - dt.timedelta(days=days - 1)
    since = dt.datetime.combine(first, dt.time(), dt.datetime.now().astimezone().tzinfo)
    budget = [MAX_CHARS]
    masking = ws.settings.memory.mask_secrets
    shown = mask_secrets if masking else str   # what an agent may read

    def take(text: str) -> bool:
        budget[0] -= len(text) + 1
        return budget[0] >= 0

    logs = []
    for log in sorted(ws.daily_logs(), key=lambda d: d.date, reverse=True):
        if not first <= log.date <= today:
            continue
        rel = ws.relative(log.path)
        lines = [line for line in strip_comments(ws.read(rel).text).split("\n") if line.strip()]
        kept = [line for line in lines if take(line)]
        if masking:     # only what is shown is masked (a huge log is not scanned whole), its block context kept
            kept = mask_window(lines, 0, len(kept))
        logs.append({"path": rel, "date": log.date.isoformat(), "lines": kept,
                     "truncated": len(kept) < len(lines)})
    sessions = []
    for entry in reversed(ws.session_cache.read().objects):
        ended = _time(entry.get("ended"))
        if ended is None or ended < since:
            continue
        summary = shown(str(entry.get("summary", "")))[:MAX_SUMMARY_CHARS]
        if take(summary):
            sessions.append({"session_id": entry.get("session_id", ""), "ended": entry.get("ended"),
                             "summary": summary})
    agents = [{"agent": a.agent, "at": a.at, "kind": a.kind, "detail": shown(a.detail)}
              for a in last_by_agent(ws.paths).values() if a.timestamp >= since.timestamp()]
    return {"days": days, "since": first.isoformat(), "daily_logs": logs, "sessions": sessions,
            "agents": agents, "truncated": budget[0] < 0}


def _time(value: Any) -> dt.datetime | None:
    try:
        moment = dt.datetime.fromisoformat(str(value))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.astimezone()
