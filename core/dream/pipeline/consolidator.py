"""The consolidator: one dream, as a generator of progress events.

    for event in iter_dream(ws, llm):          # from a background thread
        show(event.stage, event.done, event.total, event.message)
    result = event.result                       # on the last event (status "finished")

or `run_dream(ws, llm, progress=callback)`. Stages: orient, gather, consolidate,
prune; then the proposal is written (unless dry_run) and the watermark advanced.
Between stages (and between model batches) the dream checks its CancelToken and
`should_stop` (the idle check): when either fires it stops there and writes
nothing. With `apply=True` (or the auto_apply_safe setting) a proposal that no
guard held is applied at once through the same compare-and-swap path as a review.
"""
from __future__ import annotations

import datetime as dt
import time
from dataclasses import dataclass, field
from typing import Callable, Iterator

from core.cancel import CancelToken
from core.dream.pipeline import stages
from core.dream.pipeline.budget import carry_over
from core.dream.review.apply import ApplyResult, apply_proposal
from core.dream.pipeline.condense import condense_proposal
from core.dream.pipeline.relevance import relevance_proposal
from core.dream.review.proposals import HELD, PENDING, Proposal, guard_reasons, new_proposal_id, save_proposal
from core.dream.judgment.similarity import Similarity, load_similarity
from core.dream.review.sources import SourceResolver
from core.dream.state import load_state, record_dream_finished
from core.dream.pipeline.working import WorkingMemory
from core.errors import ProposalError
from core.store.limits import check_dream_inputs
from core.store.locks import lock_if_free
from core.store.private import append_dream_log, read_dream_log

STAGES = ("orient", "gather", "consolidate", "prune")
NOTHING, PROPOSED, APPLIED, STOPPED, DRY_RUN, BUSY = "nothing", "proposed", "applied", "stopped", "dry-run", "busy"


@dataclass
class DreamResult:
    status: str                             # nothing | proposed | applied | stopped | dry-run | busy
    reason: str = ""
    proposal: Proposal | None = None
    applied: ApplyResult | None = None
    stats: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    stopped_at: str = ""                    # the stage boundary a stopped dream stopped at

    @property
    def held(self) -> bool:
        return self.proposal is not None and self.proposal.status == HELD


@dataclass(frozen=True)
class DreamEvent:
    stage: str                              # one of STAGES, or "propose" / "done"
    status: str                             # start | progress | done | finished
    done: int = 0
    total: int = 0
    message: str = ""
    result: DreamResult | None = None


def iter_dream(ws, llm=None, **options) -> Iterator[DreamEvent]:
    """Progress events of one dream; the last one (status "finished") carries the DreamResult.
    Options: now, cancel, should_stop, dry_run, apply, similarity, include_archive (read archived
    logs too), read_archived (these archived logs: maintenance just moved them, unread)."""
    # One dream per workspace at a time (the app's scheduler and `reverie dream` may race).
    with lock_if_free(ws.paths.locks_dir / "dream.lock") as mine:
        if not mine:
            result = DreamResult(BUSY, reason="another dream is running in this workspace")
            yield DreamEvent("done", "finished", message=result.reason, result=result)
            return
        yield from _dream(ws, llm, **options)


def _dream(ws, llm=None, *, now: dt.datetime | None = None, cancel: CancelToken | None = None,
           should_stop: Callable[[], str] | None = None, dry_run: bool = False, apply: bool | None = None,
           similarity: Similarity | None = None, include_archive: bool = False,
           read_archived: tuple[str, ...] = ()) -> Iterator[DreamEvent]:
    moment = now or dt.datetime.now(dt.timezone.utc)
    started = time.perf_counter()
    state = load_state(ws.paths)
    check_dream_inputs(ws.paths, ws.settings.dream, state.mtime_watermark)   # too large: one clear line, at once
    snapshot = ws.read_memory()
    sim = similarity or load_similarity(ws.paths, ws.settings)
    ctx = stages.DreamContext(paths=ws.paths, settings=ws.settings, llm=llm, now=moment,
                              cancel=cancel or CancelToken(), should_stop=should_stop, state=state,
                              snapshot=snapshot, memory=WorkingMemory(snapshot.text), similarity=sim,
                              resolver=SourceResolver(ws.paths), include_archive=include_archive,
                              read_archived=frozenset(read_archived))
    runners = {"orient": stages.orient, "gather": stages.gather_stage,
               "consolidate": stages.consolidate, "prune": stages.prune}
    current = "orient"
    try:
        for name in STAGES:
            current = name
            ctx.checkpoint()
            yield DreamEvent(name, "start")
            stage_start = time.perf_counter()
            for done, total, message in runners[name](ctx):
                yield DreamEvent(name, "progress", done, total, message)
            ctx.stats.stage_seconds[name] = time.perf_counter() - stage_start
            yield DreamEvent(name, "done")
        current = "propose"
        ctx.checkpoint()             # the last boundary: after it the dream writes
    except stages.StopDream as stop:
        result = DreamResult(STOPPED, reason=f"stopped before {current}: {stop}", stats=ctx.stats.to_dict(),
                             notes=ctx.notes, stopped_at=current)
        yield DreamEvent("done", "finished", message=result.reason, result=result)
        return
    result = _finish(ws, ctx, moment, dry_run, apply, started)
    yield DreamEvent("done", "finished", message=result.reason, result=result)


def _finish(ws, ctx: stages.DreamContext, moment: dt.datetime, dry_run: bool, apply: bool | None,
            started: float) -> DreamResult:
    memory = ctx.memory
    changes = memory.changes()
    new_text = memory.render()
    material = ctx.material
    summary = {"facts": len(material.facts), "new_facts": len(ctx.prepared), "files_read": material.files_read,
               "files_seen": material.files_seen, "bytes_read": material.bytes_read, "sessions": material.sessions,
               "session_logs_read": material.session_logs_read,
               "themes": ctx.themes, "bullets_before": memory.base_count, "bullets_after": len(memory.live()),
               "tokens_after": memory.tokens(), "notes": ctx.notes, "embedded": ctx.similarity.embedded,
               "skipped": ctx.skipped, "superseded": ctx.superseded, "relations": ctx.relations,
               "not_proposed": ctx.not_proposed, "irrelevant": len(ctx.irrelevant),
               "stats": {**ctx.stats.to_dict(), "seconds": round(time.perf_counter() - started, 3)}}
    if ctx.irrelevant and not dry_run:
        held = relevance_proposal(ctx.snapshot.text, ctx.snapshot.hash, ctx.irrelevant, moment)
        save_proposal(ws.paths, held)
        ctx.notes.append(f"relevance prune: proposal {held.id} suggests dropping {len(ctx.irrelevant)} bullet(s) "
                         f"unrelated to recent work; it is held until a person reviews it")
    if ctx.condense and not dry_run:
        condensed = condense_proposal(ctx.snapshot.text, ctx.snapshot.hash, ctx.condense, moment,
                                      ws.settings.memory.memory_md_chars_hint)
        save_proposal(ws.paths, condensed)
        ctx.notes.append(f"condense: proposal {condensed.id} suggests {len(ctx.condense)} change(s) to bring "
                         f"MEMORY.md back under its budget; it is held until a person reviews it")
    if not changes:
        reason = "nothing new to consolidate" if not material.facts else "the new facts are already in MEMORY.md"
        if not dry_run:
            ctx.similarity.save_cache()
            _finished(ws, ctx, moment)
            _log(ws, moment, NOTHING, "", summary)
        return DreamResult(NOTHING if not dry_run else DRY_RUN, reason=reason, stats=summary["stats"],
                           notes=ctx.notes)
    holds = list(ctx.hold_reasons) + guard_reasons(
        ctx.snapshot.text, new_text, changes, memory.base_count,
        max_drop_fraction=ws.settings.dream.max_drop_fraction, budget_tokens=ws.settings.memory.memory_md_tokens)
    holds = list(dict.fromkeys(holds))
    proposal = Proposal(id=new_proposal_id(moment, new_text), created=moment.isoformat(timespec="seconds"),
                        status=HELD if holds else PENDING, base_hash=ctx.snapshot.hash,
                        base_text=ctx.snapshot.text, new_text=new_text, changes=changes, hold_reasons=holds,
                        summary=summary)
    if dry_run:
        return DreamResult(DRY_RUN, reason=_describe(proposal), proposal=proposal, stats=summary["stats"],
                           notes=ctx.notes)
    ctx.similarity.save_cache()
    save_proposal(ws.paths, proposal)       # the proposal first: a kill before the state write re-dreams
    _finished(ws, ctx, moment)
    _log(ws, moment, PROPOSED, proposal.id, summary)
    result = DreamResult(PROPOSED, reason=_describe(proposal), proposal=proposal, stats=summary["stats"],
                         notes=ctx.notes)
    auto = ws.settings.dream.auto_apply_safe if apply is None else apply
    if auto and not holds:
        try:
            result.applied = apply_proposal(ws, proposal.id, reviewed=False, now=moment)
            result.proposal = result.applied.proposal
            result.status = APPLIED
        except ProposalError as exc:
            result.notes.append(str(exc))
            from core.dream.review.proposals import load_proposal

            result.proposal = load_proposal(ws.paths, proposal.id)
    return result


def _finished(ws, ctx: stages.DreamContext, moment: dt.datetime) -> None:
    record_dream_finished(ws.paths, ctx.material.watermark, now=moment, consumed=ctx.material.consumed,
                          sessions_seen=ctx.state.sessions_since, session_consumed=ctx.material.session_consumed,
                          session_watermark=ctx.material.session_watermark, carried=carry_over(ctx))


def _describe(proposal: Proposal) -> str:
    counts: dict[str, int] = {}
    for change in proposal.changes:
        counts[change.op] = counts.get(change.op, 0) + 1
    what = ", ".join(f"{n} {op}" for op, n in sorted(counts.items()))
    held = f"; held: {'; '.join(proposal.hold_reasons)}" if proposal.hold_reasons else ""
    return f"proposal {proposal.id}: {len(proposal.changes)} change(s) ({what}){held}"


def _log(ws, moment: dt.datetime, status: str, proposal_id: str, summary: dict) -> None:
    """One line per dream in .reverie/dreams.jsonl: the app's history of dreams."""
    append_dream_log(ws.paths, {"time": moment.isoformat(timespec="seconds"), "status": status,
                                "proposal": proposal_id, "facts": summary["facts"],
                                "files_read": len(summary["files_read"]), "stats": summary["stats"],
                                "notes": [n for n in summary["notes"] if "model" in n][:3]})


def run_dream(ws, llm=None, *, progress: Callable[[DreamEvent], None] | None = None, **options) -> DreamResult:
    """Run a dream to the end; `progress` gets every event (from the calling thread)."""
    result = None
    for event in iter_dream(ws, llm, **options):
        if progress is not None:
            progress(event)
        if event.result is not None:
            result = event.result
    assert result is not None   # iter_dream always ends with a finished event
    return result


def dream_history(ws, limit: int = 50) -> list[dict]:
    return read_dream_log(ws.paths)[-limit:][::-1]
