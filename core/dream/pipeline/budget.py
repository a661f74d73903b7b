"""The per-dream limit on new facts: which candidates may become bullets, and which are listed as
"not proposed: budget" (they stay in the logs and in search, and are carried to the next dream). The budget of MEMORY.md itself is met
by a condense proposal (condense.py), never by cutting what the person curated."""
from __future__ import annotations

from core.dream.pipeline.material import Fact
from core.dream.pipeline.working import Entry, source_day, source_days
from core.secrets import redact

WORKING_FACTOR = 10      # new facts that may enter the working memory: this many times dream.max_new_facts


def fact_rank(ctx, fact: Fact) -> tuple:
    """candidate_rank before a fact is a bullet: days said on, recency, the kind's doubt."""
    day = source_day(fact.sources) or fact.day or "0000-00-00"
    return (-len(source_days(fact.sources)), tuple(-ord(ch) for ch in day), ctx.kind_scores.get(fact.text, 0.0),
            -len(fact.sources))


def addable(ctx, facts: list[Fact]) -> set[int]:
    """The facts (by id) that may be added as new bullets while relating: the best ranked, up to
    WORKING_FACTOR x dream.max_new_facts. Each new bullet is compared with every later fact, so a first
    dream over thousands of prose lines would otherwise grow quadratically; a fact past the cap is
    still related to MEMORY.md (its updates and duplicates count) but, when new, only listed as not
    proposed. The per-dream limit then picks among those added (limit_new_facts)."""
    cap = max(0, ctx.settings.dream.max_new_facts) * WORKING_FACTOR
    if len(facts) <= cap:
        return {id(f) for f in facts}
    return {id(f) for f in sorted(facts, key=lambda f: fact_rank(ctx, f))[:cap]}


def not_proposed(ctx, text: str, refs, section: str = "") -> None:
    limit = max(0, ctx.settings.dream.max_new_facts)
    reason = (f"budget: at most {limit} new facts are proposed per dream (dream.max_new_facts); "
              f"this one stays in {', '.join(list(refs)[:2]) or 'the logs'} and is carried to the next dream")
    shown = redact(text)
    ctx.not_proposed.append({"fact": shown, "sources": list(refs), "reason": reason, "section": section,
                             "carry": shown == text})     # a fact holding a secret is never written to the state


def carry_over(ctx) -> list[dict]:
    """The facts this dream did not propose for the budget, best ranked first (at most WORKING_FACTOR x
    dream.max_new_facts), for the state record: the next dream reads them again with its new material,
    so they are proposed in turn instead of being passed by the watermark."""
    cap = max(0, ctx.settings.dream.max_new_facts) * WORKING_FACTOR
    kept = [item for item in ctx.not_proposed if item.get("carry")]
    ranked = sorted(kept, key=lambda item: (-len(source_days(item["sources"])),
                                            tuple(-ord(ch) for ch in source_day(item["sources"]) or "0000-00-00")))
    return [{"text": item["fact"], "sources": list(item["sources"]), "day": source_day(item["sources"]),
             "section": item.get("section", "")} for item in ranked[:cap]]


def candidate_rank(ctx, entry: Entry) -> tuple:
    """How well a new bullet is supported, best first: said on more days (a line pasted into every
    session transcript of one day is one day's boilerplate, not a fact said eight times), then the
    more recent, then the kind judged with less doubt, then more sources, then the order the logs gave."""
    day = entry.day or "0000-00-00"
    return (-len(source_days(entry.refs)), tuple(-ord(ch) for ch in day), ctx.kind_scores.get(entry.text, 0.0),
            -len(entry.refs), ctx.memory.entries.index(entry))


def limit_new_facts(ctx) -> None:
    """At most `dream.max_new_facts` new bullets per dream, the best supported (candidate_rank).
    The others are not proposed: they stay in the logs and in search, are listed in the proposal's
    summary ("not_proposed") and in a note. A new bullet grouped with a change to an existing one
    (a merge) is always proposed: leaving it out would leave half of a change."""
    limit = max(0, ctx.settings.dream.max_new_facts)
    with_base = {e.group for e in ctx.memory.entries if e.group and not e.is_new}
    new = [e for e in ctx.memory.live() if e.is_new and e.group not in with_base]
    for entry in sorted(new, key=lambda e: candidate_rank(ctx, e))[limit:]:
        not_proposed(ctx, entry.text, entry.refs, entry.section)
        ctx.memory.drop(entry, op="budget", reason=ctx.not_proposed[-1]["reason"])
    if not ctx.not_proposed:
        return
    ctx.notes.append(f"{len(ctx.not_proposed)} more candidates, not proposed: budget (at most {limit} new facts "
                     f"per dream; they stay in the logs and in search, and the next dream proposes the next best)")
