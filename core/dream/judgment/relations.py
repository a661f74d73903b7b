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
(nearly all of the pin's characters, the same negation) agrees with it. With "rules" (the default
until the heads measure better on the consolidation cases) word_relations.py decides.
"""
from __future__ import annotations

from typing import Sequence

from core.dream.judgment import heads, signals, word_relations
from core.dream.judgment.heads import FREE_CLASSES, allowed_classes
from core.dream.judgment.word_relations import Candidate, Relation   # one shape for both judgments
from core.dream.judgment.wording import Rarity, anchors, content, stem, stems

NEW, DUPLICATE, UPDATE, CONFLICT = "new", "duplicate", "update", "conflict"
_DREAM_KIND = {"duplicate": DUPLICATE, "agreement": DUPLICATE, "update": UPDATE, "refinement": UPDATE,
               "conflict": CONFLICT}
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


def judged(fact: str, candidates: Sequence[Candidate]) -> list[tuple[Candidate, dict[str, float], float]]:
    """Each candidate with the head's probability of every relation allowed for it (they sum to 1)
    and the gate's probability that the two are about one thing."""
    if not candidates:
        return []
    classes, probs, related = heads.relation_probabilities([c.text for c in candidates], [fact] * len(candidates),
                                                           [c.pinned for c in candidates])
    out = []
    for candidate, row, p_related in zip(candidates, probs, related):
        allowed = allowed_classes(candidate.pinned)
        mass = {c: float(row[classes.index(c)]) for c in allowed if c in classes}
        total = sum(mass.values()) or 1.0
        mass = {c: p / total for c, p in mass.items()}
        if p_related < heads.GATE:              # about something else: the gate turns it away
            mass = {c: (1.0 if c == "distinct" else 0.0) for c in mass}
        if candidate.pinned and restates_pin(fact, candidate.text):
            mass = {c: (1.0 if c == "agreement" else 0.0) for c in mass}
        out.append((candidate, mass, float(p_related)))
    return out


def relate(fact: str, candidates: Sequence[Candidate], rarity: Rarity | None = None, learned: bool = False) -> Relation:
    """The relation of `fact` to the best of `candidates` (ranked by cosine, best first). The head
    needs no `rarity` (counts of the page); the word rules do."""
    if not learned:
        old = word_relations.relate(fact, candidates, rarity or Rarity([c.text for c in candidates] + [fact]))
        return Relation(old.kind, old.target, old.reason, old.cosine)
    best = None
    for candidate, mass, p_related in judged(fact, candidates):
        label = heads.decide_relation(mass, candidate.pinned)
        # Agreeing with a pin is no conflict, but only a fact that restates the pin is the pin: a pinned
        # bullet is often a plain fact ("Maya is a backend engineer in Lisbon"), and a new fact about
        # its subject that does not contradict it is news.
        if label == "distinct" or (label == "agreement" and not restates_pin(fact, candidate.text)):
            continue
        # Among several bullets the fact may relate to, the one most surely about the same thing.
        if best is None or mass[label] * p_related > best[3]:
            best = (candidate, label, mass[label], mass[label] * p_related)
    if best is None:
        return Relation(NEW, "", "", candidates[0].cosine if candidates else 0.0)
    candidate, label, p, _sure = best
    return Relation(_DREAM_KIND[label], candidate.key, f"{_SAYS[label]} (learned, p={p:.2f})", candidate.cosine,
                    label, p)


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
