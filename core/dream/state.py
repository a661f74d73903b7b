"""The dream watermark `memory/.consolidation_state` (JSON).

    {"last_run": "2026-11-30T03:00:00+00:00", "mtime_watermark": 1764471600.0,
     "sessions_since": 2, "new_material_at": "...", "early_requested_at": "..."}

`mtime_watermark` is the newest daily-log mtime a dream has consumed: only daily
files modified after it are read by the next dream. The flush and the harness
record new material and ended sessions here; the gates read it. Updates happen
under a lock, so a flush and a session end at the same moment both count.
A damaged file is treated as "never dreamed" (the next dream reads everything),
never as an error that stops the agent.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import asdict, dataclass, field, replace
from typing import Callable

from core.store.paths import WorkspacePaths
from core.store.private import read_state_record, update_state_record


@dataclass(frozen=True)
class ConsolidationState:
    last_run: str = ""              # ISO time of the last finished dream ("" = never)
    mtime_watermark: float = 0.0    # newest daily-log mtime consumed by a dream
    sessions_since: int = 0         # sessions ended since the last dream
    new_material_at: str = ""       # last time a flush wrote new material
    early_requested_at: str = ""    # last time a flush asked for an early dream (throttled)
    last_maintenance: str = ""      # last maintenance tick
    # Daily logs the last dream read, as {path: [lines read, sha256 of those lines]}: an append-only
    # log that grew afterwards is read from where the dream stopped, not from its first line.
    consumed: dict = field(default_factory=dict)
    # Daily-log refs of facts a person rejected, {ref: fingerprint of its lines} (sources.mark): a log
    # read again does not bring them back, unless the line itself changed.
    rejected: dict = field(default_factory=dict)
    # The same for session logs (sessions/<id>.log.jsonl): {path: [lines read, sha256 of those lines]}.
    session_consumed: dict = field(default_factory=dict)
    session_watermark: float = 0.0  # newest session-log mtime consumed (its own: a log's clock never hides a daily log)
    first_open: str = ""            # when the workspace was first opened: the time gate's clock starts here
    # New facts the last dream did not propose for its per-dream limit (dream.max_new_facts), best first:
    # [{"text", "sources", "day", "section"}]. The watermark moved past their logs, so the next dream
    # reads them from here and proposes the next best ones.
    carried: list = field(default_factory=list)

    def last_run_time(self) -> dt.datetime | None:
        return _parse(self.last_run)


def _parse(value: str) -> dt.datetime | None:
    if not value:
        return None
    try:
        parsed = dt.datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.timezone.utc)


parse_time = _parse
CONSUMED_KEPT = 14
REJECTED_KEPT = 5000
SESSIONS_KEPT = 200       # session logs whose read position is kept (the most recently read)


def _now(now: dt.datetime | None) -> dt.datetime:
    return now or dt.datetime.now(dt.timezone.utc)


def load_state(paths: WorkspacePaths) -> ConsolidationState:
    return _from_record(read_state_record(paths))


def _from_record(data: dict) -> ConsolidationState:
    known = {k: v for k, v in data.items() if k in ConsolidationState.__dataclass_fields__}
    try:
        state = ConsolidationState(**known)
        consumed = state.consumed if isinstance(state.consumed, dict) else {}
        rejected = state.rejected if isinstance(state.rejected, dict) else {}
        session_consumed = state.session_consumed if isinstance(state.session_consumed, dict) else {}
        carried = [item for item in state.carried if isinstance(item, dict) and isinstance(item.get("text"), str)
                   and isinstance(item.get("sources"), list)] if isinstance(state.carried, list) else []
        return replace(state, mtime_watermark=float(state.mtime_watermark), sessions_since=int(state.sessions_since),
                       session_watermark=float(state.session_watermark),
                       consumed=consumed, rejected=rejected, session_consumed=session_consumed, carried=carried,
                       first_open=state.first_open if isinstance(state.first_open, str) else "")
    except (TypeError, ValueError):
        return ConsolidationState()


def update_state(paths: WorkspacePaths, change: Callable[[ConsolidationState], ConsolidationState]) -> ConsolidationState:
    return _from_record(update_state_record(paths, lambda record: asdict(change(_from_record(record)))))


def record_session_ended(paths: WorkspacePaths) -> ConsolidationState:
    return update_state(paths, lambda s: replace(s, sessions_since=s.sessions_since + 1))


def note_new_material(paths: WorkspacePaths, *, now: dt.datetime | None = None,
                      early_min_minutes: float = 30.0) -> bool:
    """Record that a flush wrote new facts. True when this also asks for an early dream
    (at most once per `early_min_minutes`)."""
    moment = _now(now)
    asked = []

    def change(state: ConsolidationState) -> ConsolidationState:
        last = _parse(state.early_requested_at)
        state = replace(state, new_material_at=moment.isoformat())
        if last is None or moment - last >= dt.timedelta(minutes=early_min_minutes):
            asked.append(True)
            state = replace(state, early_requested_at=moment.isoformat())
        return state

    update_state(paths, change)
    return bool(asked)


def record_dream_finished(paths: WorkspacePaths, mtime_watermark: float, *,
                          now: dt.datetime | None = None, consumed: dict | None = None,
                          sessions_seen: int | None = None,
                          session_consumed: dict | None = None,
                          session_watermark: float = 0.0, carried: list | None = None) -> ConsolidationState:
    """A dream finished. `sessions_seen` is the session count it started from: sessions that
    ended while it ran still count toward the next dream. `carried`: the facts it left for the
    next dream (None keeps those recorded)."""
    moment = _now(now)

    def change(s: ConsolidationState) -> ConsolidationState:
        left = 0 if sessions_seen is None else max(0, s.sessions_since - sessions_seen)
        merged = {**s.consumed, **(consumed or {})}
        # Only recent logs are still appended to; keep the newest few entries (names sort by date).
        kept = dict(sorted(merged.items(), key=lambda item: item[0].rsplit("/", 1)[-1])[-CONSUMED_KEPT:])
        # Session logs read by this dream go last, so the oldest read positions are the ones let go
        # (a log let go and later appended to is read again from its first line: facts, not loss).
        fresh = session_consumed or {}
        sessions = {**{k: v for k, v in s.session_consumed.items() if k not in fresh}, **fresh}
        sessions = dict(list(sessions.items())[-SESSIONS_KEPT:])
        return replace(s, last_run=moment.isoformat(), mtime_watermark=max(s.mtime_watermark, mtime_watermark),
                       sessions_since=left, consumed=kept, session_consumed=sessions,
                       session_watermark=max(s.session_watermark, session_watermark),
                       carried=s.carried if carried is None else list(carried))
    return update_state(paths, change)


def record_rejected(paths: WorkspacePaths, marks: dict[str, str]) -> ConsolidationState:
    """Remember the lines of facts a person rejected (the newest REJECTED_KEPT refs)."""
    def change(s: ConsolidationState) -> ConsolidationState:
        merged = {**s.rejected, **{ref: mark for ref, mark in marks.items() if mark}}
        return replace(s, rejected=dict(list(merged.items())[-REJECTED_KEPT:]))
    return update_state(paths, change)


def is_rejected(state: ConsolidationState, refs, mark) -> bool:
    """True when every ref of a fact names lines a person rejected, unchanged since (`mark(ref)`)."""
    refs = tuple(refs)
    return bool(refs) and all(state.rejected.get(ref) and state.rejected.get(ref) == mark(ref) for ref in refs)


def record_maintenance(paths: WorkspacePaths, *, now: dt.datetime | None = None) -> ConsolidationState:
    moment = _now(now)
    return update_state(paths, lambda s: replace(s, last_maintenance=moment.isoformat()))
