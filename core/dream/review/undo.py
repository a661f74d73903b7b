"""Undoing an accept: take exactly the changes one accept wrote back out of MEMORY.md.

"Undo" on the file's history restores the version before its newest change, which
after an accept and a person's own save is the person's save. An accept is undone
instead by its own changes, inverted and replayed onto MEMORY.md as it is now (an
added bullet dropped, an updated one set back, a dropped one added again), through
the same compare-and-swap write as the accept: the person's later edits stay. A
bullet edited since the accept is not overwritten: the undo is refused and names it
(History can restore any version). The changes go back to open in their proposal,
so they can be accepted again; the accept's record keeps when it was undone. The old
values its updates had moved to memory/superseded.md are taken back out of it: they
are in MEMORY.md again.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field, replace

from core.dream.review.apply import superseded_facts
from core.dream.review.operations import Change, apply_changes
from core.dream.review.proposals import HELD, PENDING, Proposal, list_proposals, load_proposal, save_proposal
from core.errors import ConflictError, NotFoundError, ProposalError
from core.store.locks import locked
from core.types import Changes

ATTEMPTS = 4
WROTE = ("applied", "already")


@dataclass
class Undone:
    proposal: Proposal
    reverted: list[str] = field(default_factory=list)    # change ids taken out of MEMORY.md
    reopened: list[str] = field(default_factory=list)    # change ids open again (reverted ones and "already" ones)
    changes: Changes = field(default_factory=Changes)


def last_accept(paths) -> tuple[Proposal, int] | None:
    """The newest accept not yet undone, as (its proposal, the index of its record)."""
    best, best_key = None, None
    for proposal in list_proposals(paths):
        for index, record in enumerate(proposal.applied):
            if record.get("undone") or not any(proposal.decisions.get(c) in WROTE for c in record.get("changes", ())):
                continue
            key = (str(record.get("time", "")), str(record.get("history_id", "")), index)
            if best_key is None or key > best_key:
                best, best_key = (proposal, index), key
    return best


def inverse(change: Change) -> Change:
    """The change that takes `change` back out."""
    if change.kind == "add":
        return replace(change, kind="drop", before=change.after, after="", base_line=0)
    if change.kind == "update":
        return replace(change, before=change.after, after=change.before, base_line=0)
    return replace(change, kind="add", before="", after=change.before)


def undo_last_accept(ws, *, now: dt.datetime | None = None) -> Undone:
    with locked(ws.paths.locks_dir / "proposals.lock"):
        found = last_accept(ws.paths)
        if found is None:
            raise NotFoundError("no accepted dream change is left to undo (your own edits are undone from "
                                "the editor or History)")
        proposal = load_proposal(ws.paths, found[0].id)
        record = proposal.applied[found[1]]
        ids = [cid for cid in record.get("changes", ()) if proposal.decisions.get(cid) in WROTE]
        written = [proposal.change(cid) for cid in ids if proposal.decisions[cid] == "applied"]
        undone = Undone(proposal, reverted=[c.id for c in written], reopened=ids)
        for _attempt in range(ATTEMPTS):
            current = ws.read_memory()
            outcome = apply_changes(current.text, [inverse(c) for c in written])
            if not outcome.clean:
                raise ProposalError("not undone: MEMORY.md was edited where that accept wrote ("
                                    + "; ".join(why for _cid, why in outcome.conflicts)
                                    + "); restore an older version from History instead")
            if outcome.text == current.text:
                break
            try:
                undone.changes = ws.write_memory(outcome.text, current.hash,
                                                 reason=f"undo dream accept {proposal.id}", base_text=current.text)
                break
            except ConflictError:
                continue          # someone wrote between our read and our write: read again
        else:
            raise ProposalError("MEMORY.md kept changing while the accept was undone; try again")
        undone.changes = undone.changes | ws.forget_superseded(superseded_facts(proposal, written))
        for cid in ids:
            proposal.decisions.pop(cid, None)
        record["undone"] = (now or dt.datetime.now(dt.timezone.utc)).isoformat(timespec="seconds")
        proposal.status = HELD if proposal.hold_reasons else PENDING
        save_proposal(ws.paths, proposal)
        return undone
