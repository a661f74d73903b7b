"""Applying and rejecting proposals: compare-and-swap, rebase, partial accept, idempotent.

Apply reads MEMORY.md as it is now and decides how to bring the proposal onto it:
- unchanged since the dream read it: the proposal's changes on the text it read;
- changed only by an append (an agent added lines at the end): the same, with the
  appended text kept after it;
- changed elsewhere: the bullet-level changes are replayed onto the current text,
  which is safe when every bullet they touch is still as the dream saw it; if one
  was edited the proposal is held for review and nothing is written.
The write is the store's compare-and-swap (a history snapshot first, so undo works);
an append racing the write is merged by the store. Replaying is idempotent, so an
apply killed at any moment can simply be run again.

An accepted update ("replace") takes a value out of MEMORY.md; the value, with the
dates it held, goes to memory/superseded.md (written once per record, so a re-run
after a crash writes what the killed run did not).
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from core.dream.review.archive import archive_sections
from core.dream.review.operations import ApplyOutcome, Change, apply_changes, pins_kept
from core.dream.review.proposals import APPLIED, HELD, OPEN, REJECTED, Proposal, load_proposal, save_proposal
from core.dream.review.sources import SourceResolver
from core.dream.state import record_rejected
from core.errors import ConflictError, ProposalError
from core.store.locks import locked
from core.store.memory_md import parse_bullet
from core.store.superseded import SupersededFact
from core.types import Changes

ATTEMPTS = 4


@dataclass
class ApplyResult:
    proposal: Proposal
    changes: Changes = field(default_factory=Changes)
    applied: list[str] = field(default_factory=list)
    already: list[str] = field(default_factory=list)
    rebased: str = ""              # "" | "append" | "replay"
    history_id: str = ""

    @property
    def wrote(self) -> bool:
        return not self.changes.empty


def _target(proposal: Proposal, selected: list[Change], current: str) -> tuple[ApplyOutcome, str]:
    base = proposal.base_text
    if current == base:
        return apply_changes(base, selected), ""
    replay = apply_changes(current, selected)
    # A pure append keeps the appended text after the proposal's version, unless some of the
    # changes are already in the file (an apply that was killed after its write): then only
    # the replay knows what is left to do.
    if current.startswith(base) and not replay.already:
        outcome = apply_changes(base, selected)
        appended = current[len(base):]
        joiner = "" if not outcome.text or outcome.text.endswith("\n") else "\n"
        outcome.text = outcome.text + joiner + appended
        return outcome, "append"
    return replay, "replay"


def _lock(ws):
    return locked(ws.paths.locks_dir / "proposals.lock")


def apply_proposal(ws, proposal_id: str, *, change_ids=(), sections=(), hunk_ids=(),
                   reviewed: bool = True, now: dt.datetime | None = None) -> ApplyResult:
    """Apply a proposal (or the named changes, sections or hunks of it) to MEMORY.md.

    `reviewed=False` is the automatic path: a held proposal is refused. A person (the CLI,
    the app) passes reviewed=True and may accept a held one.
    """
    with _lock(ws):
        proposal = load_proposal(ws.paths, proposal_id)
        if not proposal.is_open:
            raise ProposalError(f"proposal {proposal.id} is already {proposal.status}")
        if proposal.status == HELD and not reviewed:
            raise ProposalError(f"proposal {proposal.id} is held for review: {'; '.join(proposal.hold_reasons)}")
        selected = proposal.select(change_ids=change_ids, sections=sections, hunk_ids=hunk_ids)
        if not selected:
            raise ProposalError(f"nothing left to apply in proposal {proposal.id}")
        for _attempt in range(ATTEMPTS):
            current = ws.read_memory()
            outcome, rebased = _target(proposal, selected, current.text)
            if not outcome.clean:
                proposal.status = HELD
                reason = ("MEMORY.md changed where this proposal edits it since the dream read it: "
                          + "; ".join(why for _cid, why in outcome.conflicts))
                if reason not in proposal.hold_reasons:
                    proposal.hold_reasons.append(reason)
                save_proposal(ws.paths, proposal)
                raise ProposalError(f"proposal {proposal.id} is held for review: {reason}. "
                                    f"Nothing was written; review it, or reject it and dream again")
            missing = pins_kept(current.text, outcome.text)
            if missing:
                raise ProposalError(f"applying {proposal.id} would change {len(missing)} pinned bullet(s); refused")
            archive_sections(ws, proposal, selected, outcome)
            result = ApplyResult(proposal, applied=list(outcome.applied), already=list(outcome.already),
                                 rebased=rebased)
            if outcome.text != current.text:
                try:
                    result.changes = ws.write_memory(outcome.text, current.hash, reason=f"dream proposal {proposal.id}",
                                                     base_text=current.text)
                except ConflictError:
                    continue          # someone wrote between our read and our write: read again, rebase again
                result.history_id = result.changes.info.get("history_id", "")
            done = set(outcome.applied) | set(outcome.already)
            kept = superseded_facts(proposal, [c for c in selected if c.id in done])
            if kept:
                result.changes = result.changes | ws.record_superseded(kept)
            _record(proposal, selected, outcome, result, now)
            save_proposal(ws.paths, proposal)
            return result
        raise ProposalError(f"MEMORY.md kept changing while proposal {proposal.id} was applied; try again")


def superseded_facts(proposal: Proposal, changes: list[Change]) -> list[SupersededFact]:
    """The old values the "replace" changes among `changes` take out, from the dream's record of them
    (summary["superseded"]), with the id of the bullet that now holds the new value."""
    records = [r for r in proposal.summary.get("superseded") or [] if isinstance(r, dict) and r.get("text")]
    out: list[SupersededFact] = []
    for change in changes:
        if change.op != "replace" or not change.bullet_id:
            continue
        before, after = parse_bullet(change.before), parse_bullet(change.after)
        for record in records:
            rid = str(record.get("bullet_id") or "")
            # A bullet that had no id when the dream read it got one with the update: its record
            # has none, and is found by the words it replaced or the words that replaced it.
            if rid:
                mine = rid == change.bullet_id
            else:
                mine = ((before is not None and record["text"] == before.text)
                        or (after is not None and record.get("replaced_by") == after.text))
            if mine:
                out.append(SupersededFact(change.bullet_id, str(record["text"]), str(record.get("valid_from") or ""),
                                          str(record.get("valid_until") or ""),
                                          tuple(str(s) for s in record.get("sources") or ())))
    return out


def _record(proposal: Proposal, selected: list[Change], outcome: ApplyOutcome, result: ApplyResult,
            now: dt.datetime | None) -> None:
    for cid in outcome.applied:
        proposal.decisions[cid] = "applied"
    for cid in outcome.already:
        proposal.decisions[cid] = "already"
    moment = (now or dt.datetime.now(dt.timezone.utc)).isoformat(timespec="seconds")
    proposal.applied.append({"time": moment, "changes": [c.id for c in selected], "rebased": result.rebased,
                             "history_id": result.history_id, "hash": result.changes.info.get("hash", "")})
    _settle(proposal)


def _settle(proposal: Proposal) -> None:
    if proposal.undecided():
        return
    proposal.status = APPLIED if any(v in ("applied", "already") for v in proposal.decisions.values()) else REJECTED


def reject_proposal(ws, proposal_id: str, *, change_ids=(), sections=(), hunk_ids=()) -> Proposal:
    """Reject a proposal, or some of its changes (the rest stay open for review)."""
    with _lock(ws):
        proposal = load_proposal(ws.paths, proposal_id)
        if proposal.status not in OPEN:
            raise ProposalError(f"proposal {proposal.id} is already {proposal.status}")
        chosen = proposal.select(change_ids=change_ids, sections=sections, hunk_ids=hunk_ids)
        for change in chosen:
            proposal.decisions[change.id] = "rejected"
        _settle(proposal)
        save_proposal(ws.paths, proposal)
        resolver = SourceResolver(ws.paths)
        record_rejected(ws.paths, {ref: resolver.mark(ref) for c in chosen if c.kind != "drop"
                                   for ref in c.sources if not ref.startswith("session:")})
        return proposal


def proposed_text(proposal: Proposal) -> str:
    """MEMORY.md as the proposal now proposes it: the text the dream read with every change that is
    not rejected (what a review's "as proposed" pane shows: a rejected change leaves it, a fact a
    person promoted joins it)."""
    kept = [c for c in proposal.changes if proposal.decisions.get(c.id) != "rejected"]
    return apply_changes(proposal.base_text, kept).text


def preview_apply(ws, proposal_id: str, *, change_ids=(), sections=(), hunk_ids=()) -> ApplyOutcome:
    """What MEMORY.md would become now, without writing (for a review screen)."""
    proposal = load_proposal(ws.paths, proposal_id)
    selected = proposal.select(change_ids=change_ids, sections=sections, hunk_ids=hunk_ids)
    return _target(proposal, selected, ws.read_memory().text)[0]
