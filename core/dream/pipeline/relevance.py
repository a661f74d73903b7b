"""Relevance prune: the autoDream chapter's third Prune strategy, after the duplicate pass.

A bullet that shares no meaning with recent work (the daily logs of the last
`dream.relevance_days` days and the session logs written in them) is proposed as a
drop, with its best match and score as the reason. It is only ever proposed: the
suggestions go into a proposal of their own that is always held, so nothing is
dropped until a person accepts it, and the dream's main proposal (and its
auto-apply) is not held back by them. Pinned bullets are never suggested, nor
bullets this dream added, changed or confirmed, nor bullets whose own sources are
recent, nor bullets younger than `dream.relevance_min_age_days` (a month: a fact not
mentioned for a week is not stale), nor bullets a person already kept by rejecting
their drop; at most `relevance_max_suggestions` per dream, the least related first,
so the review stays short. It runs when a
dream has new material (current work changed); without the embedding model (word
overlap is not meaning) or any recent work to measure against, nothing is suggested.
"""
from __future__ import annotations

import datetime as dt

from core.dream.pipeline.material import facts_from_lines
from core.dream.review.proposals import HELD, OPEN, Proposal, list_proposals, new_proposal_id
from core.dream.pipeline.session_facts import read_session_logs
from core.dream.pipeline.working import WorkingMemory
from core.store.daily import list_daily_logs
from core.store.textio import decode_lossy

OP = "relevance"
MAX_RECENT = 2000            # recent texts compared with, newest first


def recent_texts(paths, now: dt.datetime, days: float) -> list[str]:
    """The facts of the daily logs and session logs of the last `days` days, newest first."""
    cutoff = now - dt.timedelta(days=days)
    texts: list[str] = []
    for log in sorted(list_daily_logs(paths, include_archive=False), key=lambda l: l.date, reverse=True):
        if log.date < cutoff.date():
            break
        try:
            lines = decode_lossy(log.path.read_bytes()).text.split("\n")
        except FileNotFoundError:
            continue
        texts.extend(f.text for f in facts_from_lines(paths.relative(log.path), lines, 0, log.date.isoformat()))
    sessions = read_session_logs(paths, cutoff.timestamp(), {})
    texts.extend(s.text for s in reversed(sessions.statements))
    return list(dict.fromkeys(texts))[:MAX_RECENT]


def suggest_drops(ctx) -> list[dict]:
    """Bullets unrelated to recent work: [{key, bullet_id, text, score, match, reason}]."""
    settings = ctx.settings.dream
    threshold = settings.relevance_threshold
    if threshold <= 0 or not ctx.similarity.semantic or not ctx.material.facts:
        return []        # off, no meaning to measure with, or no new work to measure against
    recent = recent_texts(ctx.paths, ctx.now, settings.relevance_days)
    recent = list(dict.fromkeys([f.text for f in ctx.material.facts] + recent))
    if not recent:
        return []
    # Old enough to be stale: "recent" work is the last relevance_days, but a fact stated a week ago that
    # nobody mentioned since is not stale yet (on the demo, 11 of 26 bullets a month old or less were
    # suggested). A bullet of unknown age counts as old.
    age = max(settings.relevance_days, settings.relevance_min_age_days)
    cutoff = (ctx.now - dt.timedelta(days=age)).date().isoformat()
    proposed = already_proposed(ctx.paths)
    candidates = [e for e in ctx.memory.live()
                  if e.editable and not e.is_new and not e.modified and "superseded" not in e.bullet.flags
                  and (e.day or "") < cutoff and (e.bullet.id or e.key) not in proposed]
    if not candidates:
        return []
    best = ctx.similarity.best_matches([e.text for e in candidates], recent)
    out = []
    for entry, (index, score) in zip(candidates, best):
        if score < threshold:
            match = recent[index] if index >= 0 else ""
            out.append({"key": entry.key, "bullet_id": entry.bullet.id, "text": entry.text, "score": round(score, 3),
                        "match": match,
                        "reason": f"unrelated to the work of the last {settings.relevance_days:g} days: its closest "
                                  f"recent line scores {score:.2f}, under the relevance threshold {threshold:.2f}"
                                  + (f" (\"{match[:80]}\")" if match else "")})
    out.sort(key=lambda item: item["score"])      # the least related first, and only a few per dream
    return out[:max(0, settings.relevance_max_suggestions)]


def already_proposed(paths) -> set[str]:
    """Bullets a relevance proposal already suggests dropping, or whose drop a person rejected:
    not suggested again (a person who kept a bullet once is not asked about it every dream)."""
    found = set()
    for proposal in list_proposals(paths):
        for change in proposal.changes:
            if change.op != OP:
                continue
            decision = proposal.decisions.get(change.id)
            if decision == "rejected" or (decision is None and proposal.status in OPEN):
                found.add(change.bullet_id)
    return found


def relevance_proposal(base_text: str, base_hash: str, suggestions: list[dict], moment: dt.datetime) -> Proposal:
    """The suggestions as a proposal of drops against the text the dream read, always held."""
    memory = WorkingMemory(base_text)
    for item in suggestions:
        entry = memory.get(item["key"])
        if entry is not None and not entry.dropped and entry.editable:
            memory.drop(entry, op=OP, reason=item["reason"])
    new_text = memory.render()
    return Proposal(id=new_proposal_id(moment, "relevance\n" + new_text), created=moment.isoformat(timespec="seconds"),
                    status=HELD, base_hash=base_hash, base_text=base_text, new_text=new_text,
                    changes=memory.changes(),
                    hold_reasons=[f"relevance prune: {len(suggestions)} bullet(s) unrelated to recent work; "
                                  f"nothing is dropped until a person accepts"],
                    summary={"kind": OP, "suggestions": suggestions})
