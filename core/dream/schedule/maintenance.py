"""The maintenance tick: archive old daily logs, prune old session logs, dream when due, reindex.

`gates.plan_maintenance` decides (pure, from the state and the clock); this module
does. Archiving moves `memory/YYYY-MM-DD.md` to `memory/archive/` by rename (same
file system: atomic, and the mtime is kept so the watermark is not disturbed);
provenance refs to the old path still resolve through the archive. Pruning deletes
session logs nobody has written for the retention window. Both are core/store's
(archive_daily_log, prune_session_log).
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Callable

from core.dream.schedule import gates
from core.dream.state import load_state, record_maintenance
from core.errors import CoreError, ModelCancelled
from core.store.daily import archive_daily_log, list_daily_logs
from core.store.sessions import prune_session_log


@dataclass
class MaintenanceReport:
    plan: gates.MaintenancePlan
    archived: list[str] = field(default_factory=list)
    pruned: list[str] = field(default_factory=list)
    dream: object | None = None         # DreamResult when a dream ran
    reindexed: bool = False
    notes: list[str] = field(default_factory=list)

    @property
    def ran(self) -> bool:
        return self.plan.tick_due


def plan_for(ws, now: dt.datetime, *, idle: bool, force: bool = False,
             asked_dream: bool = False) -> gates.MaintenancePlan:
    logs = [gates.LogFile(ws.relative(log.path), log.date, log.archived) for log in list_daily_logs(ws.paths)]
    sessions = []
    for info in ws.sessions():
        try:
            sessions.append(gates.SessionFile(info.id, info.path.stat().st_mtime))
        except FileNotFoundError:
            continue
    return gates.plan_maintenance(load_state(ws.paths), now, ws.settings.dream, ws.settings.retention,
                                  logs=logs, sessions=sessions, idle=idle, force=force, asked_dream=asked_dream)


def maintain(ws, *, now: dt.datetime | None = None, llm_factory: Callable[[], object] | None = None,
             idle: bool | None = None, monitor=None, force: bool = False, asked_dream: bool = False,
             cancel=None, progress=None, apply: bool | None = None, dreamer: Callable[..., object] | None = None,
             reindex: Callable[[], object] | None = None) -> MaintenanceReport:
    """One maintenance tick. `idle` (or `monitor`, an IdleMonitor) says whether a scheduled
    dream may start; `llm_factory` opens the model only when a dream really runs. `dreamer`
    (run_dream's signature) and `reindex` replace how the dream and the reindex run (the
    desktop app runs both in child processes)."""
    moment = now or dt.datetime.now(dt.timezone.utc)
    if idle is None:
        idle = monitor.is_idle() if monitor is not None else True
    plan = plan_for(ws, moment, idle=idle, force=force, asked_dream=asked_dream)
    report = MaintenanceReport(plan)
    if not plan.tick_due:
        return report
    if plan.note:
        report.notes.append(plan.note)
    for rel in plan.archive:
        report.archived.append(archive_daily_log(ws.paths, rel))
    for sid in plan.prune_sessions:
        gone = prune_session_log(ws.paths, sid)
        if gone:
            report.pruned.append(gone)
    if plan.run_dream:
        from core.dream.pipeline.consolidator import run_dream

        llm = llm_factory() if llm_factory is not None else None
        stop = monitor.stop_check() if monitor is not None and not asked_dream else None
        report.dream = (dreamer or run_dream)(ws, llm, now=moment, cancel=cancel, should_stop=stop, progress=progress,
                                 apply=apply, read_archived=tuple(report.archived))
        if monitor is not None:
            monitor.ignore_own_write("MEMORY.md")
    if plan.reindex:
        report.reindexed = _reindex(reindex or ws.sync_index, report)
    record_maintenance(ws.paths, now=moment)
    return report


def _reindex(sync: Callable[[], object], report: MaintenanceReport) -> bool:
    try:
        sync()
    except ImportError as exc:     # the search index is optional for dreaming
        report.notes.append(f"search index not available ({exc}); not reindexed")
        return False
    except ModelCancelled:         # the tick was cancelled (the app is quitting): not a failure
        raise
    except CoreError as exc:
        report.notes.append(f"reindex failed: {exc}")
        return False
    return True
