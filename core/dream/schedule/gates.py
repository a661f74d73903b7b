"""What is due, decided from the consolidation state and a clock: pure functions, no I/O.

The scheduler (the desktop app's thread, `reverie maintain`, a cron job) asks these
functions and acts on the answer, so every rule can be tested with an injected
clock instead of waiting hours:

- a dream is due when it is asked for (always), when `gate_hours` (24 h) have passed
  since the last one or, before the first dream, since the workspace was first
  opened (the chapter's clock starts when the memory is created, so a new workspace
  is not dreamed over at once; a workspace with no recorded first open is due at
  once), when `gate_sessions` (5) sessions have ended since the last one, or when a
  flush asked for an early dream after the last one (the flush side throttles that
  request to once per 30 minutes, see state.py);
- the maintenance tick is due every `maintenance_hours` (6 h), and at once when an
  early dream is pending;
- daily logs older than `archive_after_days` (90) are archived, session logs not
  written for `prune_sessions_after_days` (180) are pruned;
- scheduled dreams start only while the agent is idle.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Iterable

from core.config import DreamSettings, RetentionSettings
from core.dream.state import ConsolidationState, parse_time


@dataclass(frozen=True)
class DreamDue:
    due: bool
    reason: str                       # why it is due, or why not ("" never)
    next_at: dt.datetime | None       # when the time gate opens (None: due now, or never dreamed)
    sessions_to_go: int = 0           # sessions still to end before the sessions gate opens (0: open or off)


@dataclass(frozen=True)
class LogFile:
    """A daily log as the planner sees it: a workspace path and its date."""

    rel_path: str
    date: dt.date
    archived: bool = False


@dataclass(frozen=True)
class SessionFile:
    session_id: str
    mtime: float                      # seconds since the epoch (session logs are append-only)


@dataclass(frozen=True)
class MaintenancePlan:
    tick_due: bool
    archive: tuple[str, ...]          # daily logs to move to memory/archive/
    prune_sessions: tuple[str, ...]   # session ids whose logs are deleted
    dream: DreamDue
    run_dream: bool                   # due and the agent is idle
    reindex: bool
    next_tick_at: dt.datetime
    note: str = ""                    # e.g. "dream due but the agent is active"


def _aware(moment: dt.datetime) -> dt.datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.timezone.utc)


def early_request_pending(state: ConsolidationState) -> bool:
    """A flush asked for an early dream after the last dream finished."""
    asked = parse_time(state.early_requested_at)
    if asked is None:
        return False
    last = state.last_run_time()
    return last is None or asked > last


def dream_due(state: ConsolidationState, now: dt.datetime, settings: DreamSettings, *,
              asked: bool = False) -> DreamDue:
    now = _aware(now)
    last = state.last_run_time()
    opened = parse_time(state.first_open)
    start = last or opened                  # the time gate's clock: the last dream, else the first open
    next_at = start + dt.timedelta(hours=settings.gate_hours) if start else None
    if asked:
        return DreamDue(True, "asked for", next_at)
    if start is None:
        return DreamDue(True, "no dream has run yet", None)
    if settings.gate_sessions and state.sessions_since >= settings.gate_sessions:
        return DreamDue(True, f"{state.sessions_since} sessions ended since the last dream", next_at)
    if next_at is not None and now >= next_at:
        hours = (now - start).total_seconds() / 3600
        since = "the last dream" if last else "the workspace was first opened"
        return DreamDue(True, f"{hours:.0f} h since {since}", next_at)
    if early_request_pending(state):
        return DreamDue(True, "a memory flush asked for an early dream", next_at)
    left = (next_at - now).total_seconds() / 3600 if next_at else 0.0
    which = "next" if last else "first"
    to_go = max(0, settings.gate_sessions - state.sessions_since) if settings.gate_sessions else 0
    sessions = f" or after {to_go} more session(s)" if to_go else ""
    return DreamDue(False, f"{which} dream in {left:.1f} h{sessions}", next_at, to_go)


def next_dream_at(state: ConsolidationState, now: dt.datetime, settings: DreamSettings) -> dt.datetime:
    """When the next scheduled dream may start (for a status bar); `now` when one is due."""
    due = dream_due(state, now, settings)
    if due.due or due.next_at is None:
        return _aware(now)
    return due.next_at


def maintenance_due(state: ConsolidationState, now: dt.datetime, settings: DreamSettings) -> tuple[bool, dt.datetime]:
    now = _aware(now)
    last = parse_time(state.last_maintenance)
    if last is None:
        return True, now
    next_at = last + dt.timedelta(hours=settings.maintenance_hours)
    if early_request_pending(state):
        return True, now
    return now >= next_at, next_at


def logs_to_archive(logs: Iterable[LogFile], today: dt.date, retention: RetentionSettings) -> tuple[str, ...]:
    cutoff = today - dt.timedelta(days=retention.archive_after_days)
    return tuple(log.rel_path for log in logs if not log.archived and log.date < cutoff)


def sessions_to_prune(sessions: Iterable[SessionFile], now: dt.datetime,
                      retention: RetentionSettings) -> tuple[str, ...]:
    cutoff = _aware(now).timestamp() - retention.prune_sessions_after_days * 86400
    return tuple(s.session_id for s in sessions if s.mtime < cutoff)


def plan_maintenance(state: ConsolidationState, now: dt.datetime, dream: DreamSettings,
                     retention: RetentionSettings, *, logs: Iterable[LogFile] = (),
                     sessions: Iterable[SessionFile] = (), idle: bool = True,
                     force: bool = False, asked_dream: bool = False) -> MaintenancePlan:
    """Everything one maintenance tick should do now. `force` runs the tick off schedule
    (`reverie maintain`); the dream inside it still follows its gates unless `asked_dream`."""
    now = _aware(now)
    tick, next_tick = maintenance_due(state, now, dream)
    tick = tick or force
    if not tick:
        return MaintenancePlan(False, (), (), DreamDue(False, "maintenance not due", None), False, False, next_tick)
    today = now.date()
    archive = logs_to_archive(logs, today, retention)
    prune = sessions_to_prune(sessions, now, retention)
    due = dream_due(state, now, dream, asked=asked_dream)
    run = due.due and (idle or asked_dream)
    note = "a dream is due but the agent is active; it waits for idle" if due.due and not run else ""
    following = now + dt.timedelta(hours=dream.maintenance_hours)
    return MaintenancePlan(True, archive, prune, due, run, True, following, note)
