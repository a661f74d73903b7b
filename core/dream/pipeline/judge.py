"""One durable fact, decided: added, skipped as a duplicate, replacing a bullet, or held as a
conflict with a pin. The word rules, the learned head of core/dream/judgment/relations.py or both
(the rules unless the head is sure otherwise) decide; a model, when
there is one, may only choose among the answers the head finds plausible (see `allowed`), so a
small model's guess can confirm or pick, never break MEMORY.md.

An update replaces the bullet's words with what is true now (core/dream/judgment/restate.py);
the old words leave MEMORY.md but stay in the proposal (`was`, with the dates they were
valid) and, once applied, in memory/superseded.md, where search and `reverie why`
find them.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np

from core.dream.judgment import heads, persons_lines, pools, relations, restate, signals, word_relations
from core.dream.judgment.wording import foreign
from core.dream.pipeline.material import Fact
from core.dream.judgment.relations import CONFLICT, DUPLICATE, NEW, UPDATE, Candidate, Rarity, Relation
from core.dream.judgment.sections import guess_section
from core.dream.pipeline.working import Entry, WorkingMemory, source_day

CANDIDATES = 10         # bullets a fact is compared with (best cosine first)
FLOOR = 0.15            # below this cosine a bullet is not a candidate (names can still bring it in)
MEANING_CANDIDATES = 5  # bullets added from the multilingual ranking (_closest_in_meaning)


@dataclass
class Verdict:
    fact: Fact
    relation: Relation
    by_model: bool = False
    entry: Entry | None = None          # the bullet added or changed
    superseded: dict = field(default_factory=dict)


@functools.lru_cache(maxsize=1 << 16)
def _linkable(text: str) -> frozenset[str]:
    """A bullet's names and word stems, once per text: every fact of a dream is compared with every
    bullet, and a busy workspace's first dream relates thousands of facts to thousands of bullets."""
    return relations.anchors(text) | relations.stems(text)


def candidates(fact: Fact, memory: WorkingMemory, score) -> list[tuple[Candidate, Entry]]:
    """Bullets to compare `fact` with: the best by cosine, plus any that share a rare name
    (a line in another language has a low cosine with its own English twin)."""
    live = [e for e in memory.live() if "superseded" not in e.bullet.flags]
    said = relations.content(fact.text)
    names = relations.anchors(said)
    scored = []
    for entry in live:
        cosine = score(fact.text, entry.text)
        shares = bool(names & _linkable(entry.text))
        if cosine >= FLOOR or shares:
            scored.append((Candidate(entry.key, entry.text, cosine, pinned=entry.bullet.pinned), entry, shares))
    scored.sort(key=lambda item: -item[0].cosine)
    top = scored[:CANDIDATES]
    extra = [item for item in scored[CANDIDATES:] if item[2]][:3]
    chosen = {id(e) for _c, e, _s in top + extra}
    extra += [(Candidate(e.key, e.text, score(fact.text, e.text), pinned=e.bullet.pinned), e, False)
              for e in _closest_in_meaning(fact.text, live, MEANING_CANDIDATES) if id(e) not in chosen]
    return [(c, e) for c, e, _ in top + extra]


def _closest_in_meaning(text: str, live: list[Entry], count: int) -> list[Entry]:
    """The `count` bullets nearest to `text` under the learned heads' multilingual sentence model:
    for a Chinese fact the dream's English embedder ranks its own bullet among noise, so the head
    would never see it. Nothing when that model cannot load."""
    if not live or count <= 0:
        return []
    cosines = heads.meaning_cosines(text, [e.text for e in live])
    if cosines is None:
        return []
    # one vectorised sort per fact (a first dream relates thousands of facts to thousands of bullets);
    # stable, so equal cosines keep the memory's order as before
    return [live[i] for i in np.argsort(-cosines, kind="stable")[:count]]


def judge(fact: Fact, memory: WorkingMemory, score, rarity: Rarity, learned: bool = False,
          policy: pools.HeadPolicy = pools.RULES_ONLY) -> tuple[Relation, list[tuple[Candidate, Entry]]]:
    """`policy`: where the learned head may override the word rules (relations.relate)."""
    pool = candidates(fact, memory, score)
    relation = relations.relate(fact.text, [c for c, _ in pool], rarity, learned, policy)
    return _spare_persons_line(fact, relation, pool), pool


def _persons(entry: Entry | None) -> bool:
    """A line the person wrote (no dream's comment when read), even after this dream replaced it
    once: a second replace in the same dream rewrites the person's slot again, so it needs the same
    evidence (a first dream over a busy workspace otherwise chains one chatty line after another)."""
    return entry is not None and entry.persons_line


def _why_not_replace(fact: Fact, entry: Entry | None, weighed: bool = False) -> str:
    """"" when `fact` may replace `entry`; else why not. Only the person's own line asks for evidence:
    the fact is a new value of its slot, and what would be written (the fact restated as what is true
    now) still says the fact (core/dream/judgment/persons_lines.py). A dream's line is cheap to rewrite.
    Where the learned arbiter took the update (`weighed`) and the two lines are not in one Latin-script
    language, the slot evidence is the arbiter's alone: the guard's word overlap says nothing across two
    languages or in CJK text ("邮件服务换成 Resend 了" for "Transactional email: Postmark", "家园通知以后全部走企业微信"
    for "家长通知统一在钉钉…群里发"); the written text is still checked."""
    if not _persons(entry):
        return ""
    unreadable = weighed and (signals.rules_unread(fact.text) or signals.rules_unread(entry.text)
                              or foreign(fact.text) != foreign(entry.text))
    return (("" if unreadable else persons_lines.why_not_replace(fact.text, entry.text))
            or persons_lines.why_not_written(restate.current_statement(fact.text, entry.text), fact.text))


def target_of(relation: Relation, pool: list[tuple[Candidate, Entry]]) -> Entry | None:
    """The entry of the pool the relation points at (None for a new fact)."""
    return next((e for c, e in pool if c.key == relation.target), None)


def _spare_persons_line(fact: Fact, relation: Relation, pool: list[tuple[Candidate, Entry]]) -> Relation:
    """An update of the person's own line stands only on strong evidence that the fact is a new
    value of that line's slot (_why_not_replace); otherwise the fact is new and is added beside the
    line, which stays byte for byte."""
    if relation.kind != UPDATE:
        return relation
    target = target_of(relation, pool)
    if target is None:
        return relation
    why_not = _why_not_replace(fact, target, relation.weighed)
    if not why_not:
        return relation
    return Relation(NEW, "", f"not a new value of the person's line \"{target.text[:60]}\": {why_not}",
                    relation.cosine)


PLAUSIBLE = 0.3         # a relation the head gives at least this probability is one a model may pick


def allowed(fact: Fact, rule: Relation, pool: list[tuple[Candidate, Entry]], rarity: Rarity,
            trusted: bool = False, learned: bool = False) -> set[tuple[str, str]]:
    """The (relation, target) answers a model may give for this fact. A model that `reverie models
    check` measured better than the heads at relations (`trusted`) may give any answer that fits the
    bullets shown: new, a duplicate of one, an update of an editable one, a conflict with a pin.
    Otherwise: the head's own answer, and, where the head found nothing, "duplicate" of a bullet the
    head finds a plausible duplicate (a paraphrase it was not sure of); such a model never turns a
    duplicate or an update into an addition, and never picks a bullet to replace."""
    answers = {(rule.kind, rule.target)}
    if trusted:
        answers.add((NEW, ""))
        for c, entry in pool:
            answers.add((DUPLICATE, c.key))
            if c.pinned:
                answers.add((CONFLICT, c.key))
            elif not _why_not_replace(fact, entry):
                answers.add((UPDATE, c.key))     # the person's own line: only on the same evidence as the rules
        return answers
    if rule.kind == NEW and learned:
        answers |= {(DUPLICATE, c.key) for c, view in relations.judged(fact.text, [c for c, _e in pool])
                    if not c.pinned and view.mass.get("duplicate", 0.0) >= PLAUSIBLE}
    elif rule.kind == NEW:
        answers |= {(DUPLICATE, c.key) for c, _e in pool
                    if word_relations.could_be_duplicate(fact.text, c, rarity or Rarity([fact.text]))}
    return answers


def apply_verdict(verdict: Verdict, memory: WorkingMemory, pool: list[tuple[Candidate, Entry]],
                  sourced: bool, notes: list[str], held: list[dict]) -> None:
    """Make the edit the verdict stands for."""
    fact, relation = verdict.fact, verdict.relation
    origin = ", ".join(fact.sources)
    flags = () if sourced else ("unsourced",)
    target = target_of(relation, pool)
    who = "the model" if verdict.by_model else "the rules"
    if relation.kind == DUPLICATE and target is not None:
        if target.editable:
            memory.update(target, add_sources=fact.sources, op="sources",
                          reason=f"the same fact appeared again in {origin} ({relation.reason}; {who})")
        else:
            what = "pinned" if target.bullet.pinned else "nested"
            notes.append(f"{fact.sources[0]} repeats {what} bullet {target.bullet.id or target.key}")
        verdict.entry = target
        return
    if relation.kind == CONFLICT and target is not None:
        held.append({"fact": fact.text, "sources": list(fact.sources), "kind": "conflict",
                     "reason": f"contradicts pinned bullet {target.bullet.id or target.key} "
                               f"(\"{target.text}\"): {relation.reason}; the pin stays until a person decides",
                     "pinned": target.bullet.id or target.key})
        return
    if relation.kind == UPDATE and target is not None and target.replaceable:
        old = target.text
        text = restate.current_statement(fact.text, old)
        valid_from = source_day(target.refs) or ""
        verdict.superseded = {"bullet_id": target.bullet.id, "text": old, "sources": list(target.refs),
                              "valid_from": valid_from, "valid_until": fact.day, "replaced_by": text,
                              "because": origin}
        memory.update(target, text=text, add_sources=fact.sources, add_flags=flags, op="replace",
                      reason=f"updated from {origin}: {relation.reason} ({who}); it said: {old}")
        target.superseded_by = target.bullet.id
        verdict.entry = target
        return
    section = guess_section(fact.text, memory.sections, fact.section)
    verdict.entry = memory.add(section, fact.text, fact.sources, op="add", flags=flags,
                               reason=f"new fact from {origin}")
