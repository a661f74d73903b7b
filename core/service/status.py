"""What `reverie status WS` and a status bar show: each agent's last activity, idle time, the next dream.

Read-only: the activity log (core/store/activity.py), the idle monitor, the dream gates
and whether a scheduler (the app or `reverie serve`) holds the workspace.
"""
from __future__ import annotations

import datetime as dt
import time
from dataclasses import dataclass

from core.dream.schedule.gates import dream_due
from core.dream.schedule.idle import IdleMonitor
from core.dream.state import load_state
from core.service.daemon import scheduler_running
from core.store.activity import Activity, last_by_agent


@dataclass(frozen=True)
class WorkspaceStatus:
    agents: tuple[Activity, ...]        # the newest record of each agent, newest first
    last_activity: str                  # what the idle monitor saw last ("claude-code: search memory_search")
    idle_for_s: float                   # inf when nothing was ever recorded or written
    idle: bool
    dream_due: bool
    dream_reason: str
    next_dream_at: dt.datetime | None
    sessions_since: int
    scheduler_running: bool


def agent_activity(paths) -> list[Activity]:
    """Each agent's last activity, newest first (for the app's status bar)."""
    return list(last_by_agent(paths).values())


def workspace_status(ws, *, now: float | None = None) -> WorkspaceStatus:
    moment = time.time() if now is None else now
    monitor = IdleMonitor(ws.paths, ws.settings.dream.idle_minutes)
    last, what = monitor.last_activity()
    idle_for = max(0.0, moment - last) if last else float("inf")
    state = load_state(ws.paths)
    due = dream_due(state, dt.datetime.fromtimestamp(moment, dt.timezone.utc), ws.settings.dream)
    return WorkspaceStatus(tuple(agent_activity(ws.paths)), what if last else "", idle_for,
                           idle_for >= monitor.idle_seconds_needed, due.due, due.reason, due.next_at,
                           state.sessions_since, scheduler_running(ws.paths))


def ago(seconds: float) -> str:
    if seconds == float("inf"):
        return "never"
    if seconds < 90:
        return f"{seconds:.0f} s ago"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min ago"
    if seconds < 36 * 3600:
        return f"{seconds / 3600:.1f} h ago"
    return f"{seconds / 86400:.1f} days ago"
