"""How a durable fact relates to MEMORY.md: new, duplicate, update, or a conflict with a pin.

With `dream.judgment = "learned"` a learned head decides (core/dream/judgment/heads.py): for the fact against each candidate bullet
it gives the probability of each relation the corpus labels — duplicate, update (the same slot with
a new value), refinement (the same fact with more detail), distinct, and against a pinned bullet
conflict or agreement — from the two sentence vectors, their character n-grams (what the fact adds
and drops) and language-independent signals (another number with the same unit, another time, day,
date or name, negation on one side only). A pinned bullet is judged among conflict, agreement and
distinct; any other among duplicate, update, refinement and distinct. A gate head first turns away
bullets about something else (most of those a fact is compared with). The candidate whose related
answer is most probable wins; none related: the fact is new.

The dream's relations: duplicate adds nothing (the bullet gets the source), and so does agreement
with a pin when the fact restates it (any other agreeing fact is new);
update and refinement replace the bullet (a refinement loses nothing of it); conflict holds the fact
for a person. One word rule stays, near certain: a fact that restates a pin in its own words
(nearly all of the pin's characters, the same negation) agrees with it. With "rules"
word_relations.py decides; with `pools.HeadPolicy(everywhere=True)` word_relations.py decides unless the head is sure of
another answer (pools.combine: a numbered neighbour the rules took for the same subject, a reversed
preference, a permission against a pin), the threshold chosen on the corpus. The dream's "both"
asks for that only when pools.override_on() (off by default: docs/benchmarks.md says why).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Sequence

from core.dream.judgment import arbiter, heads, persons_lines, pools, signals, word_relations
from core.dream.judgment.heads import FREE_CLASSES, allowed_classes
from core.dream.judgment.word_relations import Candidate, Relation   # one shape for both judgments
from core.dream.judgment.wording import Rarity, anchors, content, foreign, stem, stems, unbracketed

NEW, DUPLICATE, UPDATE, CONFLICT = "new", "duplicate", "update", "conflict"
_SAYS = {"duplicate": "says the same", "agreement": "agrees with the pinned bullet",
         "update": "a new value for the same thing", "refinement": "the same fact with more detail",
         "conflict": "goes against the pinned bullet"}

__all__ = ["NEW", "DUPLICATE", "UPDATE", "CONFLICT", "Candidate", "Relation", "Rarity", "relate", "judged",
           "contradicts", "anchors", "content", "stem", "stems"]




def restates_pin(fact: str, pin: str) -> bool:
    """The fact holds nearly all of the pin's characters (trigrams) and negates as the pin does."""
    pin_grams = signals.ngrams(signals.body(pin), (3,))
    if len(pin_grams) < 4:
        return False
    shared = len(pin_grams & signals.ngrams(signals.body(fact), (3,))) / len(pin_grams)
    return shared >= 0.8 and bool(signals.negations(fact)) == bool(signals.negations(pin))


def judged(fact: str, candidates: Sequence[Candidate]) -> list[tuple[Candidate, pools.Judged]]:
    """Each candidate with the head's view of it: the probability of every relation allowed for it
    (they sum to 1) and the gate's probability that the two are about one thing."""
    if not candidates:
        return []
    classes, probs, related = heads.relation_probabilities([c.text for c in candidates], [fact] * len(candidates),
                                                           [c.pinned for c in candidates])
    return [(c, pools.judged_row(classes, row, p, c.pinned, c.pinned and restates_pin(fact, c.text)))
            for c, row, p in zip(candidates, probs, related)]


def _views(fact: str, candidates: Sequence[Candidate]) -> list[pools.Judged]:
    return [view for _c, view in judged(fact, candidates)]


def relate(fact: str, candidates: Sequence[Candidate], rarity: Rarity | None = None, learned: bool = False,
           policy: pools.HeadPolicy = pools.RULES_ONLY) -> Relation:
    """The relation of `fact` to the best of `candidates` (ranked by cosine, best first). The head
    needs no `rarity` (counts of the page); the word rules do. `policy` (pools.HeadPolicy) says where
    the head's answer may replace the rules': everywhere in the directions the corpus trusts, at
    pools.OVERRIDE; for a line the rules cannot read (signals.rules_unread) in any direction at
    OVERRIDE, or only as a duplicate at pools.UNREAD_DUPLICATE_P; for a line with a change cue the
    rules see (word_relations.has_change_cue, in any language of change_cues.py) and the kind head
    finds likely to last (pools.CUED_DURABLE_P), only as an update at OVERRIDE that gives the bullet's
    slot a new value (_new_value: another day, time, date, number of its unit, or name); for a line
    with a sameness cue ("still", "照常"), only as a duplicate at pools.SAME_DUPLICATE_P that gives
    the bullet no new value; for any other line the rules read and call new, only as a duplicate at
    pools.PLAIN_DUPLICATE_P of a bullet with no new value and near in meaning
    (pools.PLAIN_DUPLICATE_MEANING). On the value paths the head chooses among the bullets whose
    values agree. With `policy.arbiter` (the relations it may take: pools.arbiter_relations) and its weights shipped,
    all of that gives way, for a fact the rules call new, to the learned arbiter (arbiter.related), which
    read every candidate, where it takes one of those; the rules' repeats, updates and conflicts stand."""
    if learned:
        return _relation(pools.choose(_views(fact, candidates)), candidates, "")
    old = word_relations.relate(fact, candidates, rarity or Rarity([c.text for c in candidates] + [fact]))
    rule = Relation(old.kind, old.target, old.reason, old.cosine)
    if policy.arbiter and candidates and rule.kind == NEW:
        arbitrated = _arbitrated(fact, candidates, rule, policy.arbiter)
        if arbitrated is not None:
            return arbitrated
    allowed = _head_may(fact, policy)
    if allowed is None or not candidates:
        return rule
    threshold, directions, value, near = allowed
    index = next((i for i, c in enumerate(candidates) if c.key == rule.target), None)
    views = _views(fact, candidates)
    if value is not None:
        # A cue's override may only land on a bullet whose values agree with the cue: the head's
        # surest update among those, not its surest overall ("店休改成每周二" is an update of the line
        # that says which day the shop closes, though the head is a little surer of a line about
        # which days the butcher delivers, whose slot the fact does not cover).
        meaning = heads.meaning_cosines(fact, [c.text for c in candidates]) if near else None
        views = [view if _value_agrees(c.text, fact, value) and not _sibling(c.text, fact)
                 and (meaning is None or meaning[i] >= near) else pools.set_aside(view)
                 for i, (c, view) in enumerate(zip(candidates, views))]
    choice, overrode = pools.combine(rule.kind, index, views, threshold, directions)
    if not overrode or _sibling_pick(fact, choice, candidates):
        return rule
    return _relation(choice, candidates, "the head overrode the rules, ")


def _arbitrated(fact: str, candidates: Sequence[Candidate], rule: Relation, takes: frozenset) -> Relation | None:
    """For a fact the rules call new: the bullet the learned arbiter finds it repeats, updates or breaks
    (arbiter.related), else the rules' answer; None when no arbiter is shipped, or when what it found is
    not among the relations it may take (`takes`): the hand-set paths decide then.

    A guard measured on real agents' logs stays around it, because the labelled cases hold few of their
    lines: a fact the kind head finds unlikely to last (under pools.CUED_DURABLE_P) relates to nothing
    here ("状态: ✅ 正常", "_Status: APPROVED_", a day's run numbers). On the published workspaces the
    arbiter otherwise merged or rewrote about 1,600 lines, in a sample of 25 wrongly 15 times: two
    status records are no repeat of each other. Nor are two records under one label with different
    values (persons_lines.another_record: "按钮: 🛡️ 防…" / "按钮: ⚔️ 攻…", table rows an agent flattened).
    (The plain path's floor in meaning, pools.PLAIN_DUPLICATE_MEANING, was tried too: leave one case
    out it let dup_added rise from 0.112 to 0.240, restatements across two languages sitting under it.)
    A numbered sibling is never taken."""
    p_durable = _durable_probability(fact)
    if p_durable < pools.CUED_DURABLE_P:
        return rule
    texts = [c.text for c in candidates]
    meaning = heads.meaning_cosines(fact, texts)
    found = arbiter.related(fact, texts, [c.cosine for c in candidates], [c.pinned for c in candidates],
                            _views(fact, candidates), meaning, p_durable)
    if found is False:
        return None
    if found is None:
        return rule
    index, kind, probability = found
    if kind not in takes:
        return None
    if kind != CONFLICT and _sibling(candidates[index].text, fact):
        return rule     # "valve 3" is never "valve 4": near certain, whatever the cases taught (_sibling_pick)
    if kind == DUPLICATE and persons_lines.another_record(candidates[index].text, fact):
        return rule     # two records of one list under one label are not one fact said twice
    return replace(_relation(pools.Choice(index, kind, kind, probability, probability), candidates,
                             "the arbiter found it, "), weighed=True)


def _head_may(fact: str, policy: pools.HeadPolicy) -> tuple[float, frozenset | None, bool | None, float] | None:
    """(threshold, directions, whether the bullet's slot must get a new value: True for a change, False
    for a sameness, None either way; the least cosine under the heads' sentence model a bullet needs,
    0 for any) of the head's override of the rules for this fact (directions None: any), or None when
    the policy leaves this fact to the rules."""
    unreadable = (policy.unread or policy.unread_duplicates) and signals.rules_unread(fact)
    if unreadable and policy.unread:
        return pools.OVERRIDE, None, None, 0.0
    if policy.everywhere:
        return pools.OVERRIDE, pools.DREAM_CHANGES, None, 0.0
    cued = word_relations.has_change_cue(fact, any_language=True)
    if policy.cued_updates and cued:
        if _durable_probability(fact) < pools.CUED_DURABLE_P:
            return None
        return pools.OVERRIDE, pools.CUED_CHANGES, True, 0.0
    if policy.same_duplicates and not cued and word_relations.has_sameness_cue(fact, any_language=True):
        return pools.SAME_DUPLICATE_P, pools.SAME_CHANGES, False, 0.0
    if unreadable:
        return pools.UNREAD_DUPLICATE_P, frozenset({(NEW, DUPLICATE)}), None, 0.0
    if policy.plain_duplicates and not cued and not signals.rules_unread(fact):
        return pools.PLAIN_DUPLICATE_P, pools.PLAIN_CHANGES, False, pools.PLAIN_DUPLICATE_MEANING
    return None


def _durable_probability(fact: str) -> float:
    classes, probs = heads.kind_probabilities([fact])
    return float(probs[0][list(classes).index("durable")])


def _value_agrees(bullet: str, fact: str, changed: bool) -> bool:
    """Whether the fact's values agree with the cue: a change gives the bullet's slot a new value and is
    a statement of the bullet's size and subject (persons_lines.why_not_replace: a long run of clauses
    from an agent's log that happens to hold a new time is about more than the bullet's value); a
    sameness gives it none."""
    if not changed:
        return not _new_value(bullet, fact)
    return _new_value(bullet, fact) and not persons_lines.why_not_replace(fact, bullet)


_new_value = arbiter.new_value


def _sibling_pick(fact: str, choice: pools.Choice, candidates: Sequence[Candidate]) -> bool:
    """The head would make the fact a duplicate or an update of a numbered sibling ("valve 3" for
    "valve 4") or of the same sentence about another subject ("Dana runs the Tuesday class" for
    "Marco runs the Thursday class", pair_focus.another_subject): its sentence vectors barely see a
    number or a name, so its "the same thing" is no evidence there, and the rules (which read
    units, times and how rare the shared words are) decide."""
    if choice.index is None or choice.kind not in (DUPLICATE, UPDATE):
        return False
    return _sibling(candidates[choice.index].text, fact)


_sibling = arbiter.sibling


def _relation(choice: pools.Choice, candidates: Sequence[Candidate], why: str) -> Relation:
    if choice.index is None:
        return Relation(NEW, "", f"{why}about nothing in MEMORY.md (learned, p={choice.sure:.2f})" if why else "",
                        candidates[0].cosine if candidates else 0.0)
    candidate = candidates[choice.index]
    return Relation(choice.kind, candidate.key, f"{why}{_SAYS[choice.label]} (learned, p={choice.probability:.2f})",
                    candidate.cosine, choice.label, choice.probability)


def contradicts(a: str, b: str, learned: bool = False) -> bool:
    """Two close texts that give one thing different values (so they must not merge): the head
    reads b as an update of a, either way round (the word rules: a reversed order or negation)."""
    if not learned:
        return word_relations.contradicts(a, b)
    classes, probs, _related = heads.relation_probabilities([a, b], [b, a], [False, False])
    for row in probs:
        mass = {c: row[classes.index(c)] for c in FREE_CLASSES}
        if max(mass, key=mass.get) == "update":
            return True
    return False
