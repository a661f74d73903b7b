"""Promoting a fact a dream did not propose: a person overrides the dream's "not promoted".

A dream lists every fact it kept out of MEMORY.md in its proposal (summary["skipped"]:
to-dos, status lines, one-off events, redacted secrets, facts that contradict a pin),
each with its kind and reason. `promote(ws, proposal_id, index)` turns item `index`
into an ordinary "add" change of that proposal (filed under the section the keyword
rules pick, its sources kept) and applies just that change through the same
compare-and-swap path as any accepted change, so history, undo and the guards all
hold. The item is marked with the id of the change it became, so it is promoted once.

A secret is never promoted with its value: the dream stored the fact redacted, and a
text that still holds a secret value is refused whatever its kind. A fact that
contradicts a pin is added next to the pin; the pin itself stays word for word.

If the apply is refused (MEMORY.md changed where the proposal edits it, the budget),
the new change stays in the proposal, open, to be accepted or rejected like the others.
"""
from __future__ import annotations

import datetime as dt

from core.dream.review.apply import ApplyResult, apply_proposal
from core.dream.review.operations import Change
from core.dream.review.proposals import OPEN, PENDING, load_proposal, save_proposal
from core.dream.judgment.sections import guess_section
from core.dream.review.sources import SourceResolver
from core.errors import NotFoundError, ProposalError
from core.secrets import REDACTED, holds_secret
from core.store.locks import locked
from core.store.memory_md import Bullet, Source, bullet_id_for, parse_document

_MARK = REDACTED.split("{", 1)[0]     # "[redacted ": what a redacted value starts with


def promote(ws, proposal_id: str, index: int, *, now: dt.datetime | None = None) -> ApplyResult:
    """Add not-promoted fact `index` of the proposal to MEMORY.md; returns what the apply did."""
    with locked(ws.paths.locks_dir / "proposals.lock"):
        proposal = load_proposal(ws.paths, proposal_id)
        skipped = proposal.summary.get("skipped") or []
        if not isinstance(index, int) or not 0 <= index < len(skipped):
            raise NotFoundError(f"proposal {proposal.id} has no not-promoted fact #{index} "
                                f"(it has {len(skipped)}, numbered from 0)")
        item = skipped[index]
        if item.get("promoted"):
            raise ProposalError(f"fact #{index} of proposal {proposal.id} was already promoted "
                                f"(change {item['promoted']})")
        change = _change_for(ws, proposal, item)
        proposal.changes.append(change)
        item["promoted"] = change.id
        if proposal.status not in OPEN:
            proposal.status = PENDING      # decided proposals take a new change; apply settles it again
        save_proposal(ws.paths, proposal)
    return apply_proposal(ws, proposal.id, change_ids=[change.id], reviewed=True, now=now)


def _change_for(ws, proposal, item: dict) -> Change:
    fact = " ".join(str(item.get("fact") or "").split())
    kind = str(item.get("kind") or "")
    if not fact:
        raise ProposalError(f"the not-promoted item of proposal {proposal.id} has no text to promote")
    if holds_secret(fact):
        raise ProposalError("this fact holds a password, token or key; a secret value is never put into MEMORY.md "
                            "(redact the daily log first: reverie secrets WS --redact)")
    if kind == "secret" and _MARK not in fact:
        raise ProposalError("this fact was kept out as a secret and its text is not redacted; it is not promoted")
    document = parse_document(ws.read_memory().text)
    sections = [s.title for s in document.sections if s.heading_line]
    taken = {b.id for s in document.sections for b in s.bullets() if b.id}
    taken |= {c.bullet_id for c in proposal.changes if c.bullet_id}
    bullet_id = bullet_id_for(fact, taken)
    sources = tuple(str(s) for s in item.get("sources") or ())
    flags = () if SourceResolver(ws.paths).all_resolve(sources) else ("unsourced",)
    after = Bullet(text=fact, id=bullet_id, sources=tuple(Source(s) for s in sources), flags=frozenset(flags)).render()
    why = str(item.get("reason") or kind or "not promoted")
    if kind == "conflict":
        why += "; added next to the pinned bullet, which stays as it is"
    numbers = [int(c.id[1:]) for c in proposal.changes if c.id[:1] == "c" and c.id[1:].isdigit()]
    return Change(id=f"c{max(numbers, default=0) + 1}", kind="add", op="add", section=guess_section(fact, sections),
                  bullet_id=bullet_id, after=after, reason=f"promoted by a person: {why}", sources=sources,
                  flags=flags)
