"""The word rules for a fact's relation to MEMORY.md (dream.judgment = "rules", the default until the
learned head of relations.py measures better on the consolidation cases; docs/benchmarks.md).
How a durable fact relates to MEMORY.md: new, duplicate, update, or a conflict with a pin.

Embedding cosine alone decides none of this: MiniLM puts "Prefers tea over coffee"
and "Prefers coffee over tea" at 0.995, and a restatement in another language far
below an unrelated English bullet. So cosine only ranks the candidates, and the
decision is made on what the two texts state:

- anchors: names, numbers, times, identifiers (the words that carry a fact's value);
- a change: a cue ("switched", "no longer", "from now on", "instead of") whose old side
  names the bullet's words, a new value in the same slot (the same subject words with
  another number, weekday or version), or a reversed polarity or order;
- a duplicate: no change, no anchor the bullet lacks, most of the fact's words in the
  bullet (for a line in another language: its names and numbers, which survive
  translation).

Word overlaps are weighted by rarity among the texts at hand, so a name that is in
every bullet ("Daniel") links nothing.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Sequence

from core.dream.judgment import change_cues, restate
from core.dream.judgment.wording import (CALENDAR, CUE_WORDS, GENERIC, ORDINALS, Rarity, anchors, content, foreign,
                                numbers_of, same_unit, stem, stems, values_of)

NEW, DUPLICATE, UPDATE, CONFLICT = "new", "duplicate", "update", "conflict"

_PERMIT = re.compile(r"\b(?:is fine|it'?s fine|are fine|fine to|ok to|okay to|allowed|can|may|no need|"
                     r"go ahead|without asking|directly|on (?:my|his|her|their) own)\b", re.IGNORECASE)
_PROHIBIT = re.compile(r"\b(?:never|not|no|don'?t|do not|must not|only through|without \w+'?s? (?:ok|okay|"
                       r"approval|consent)|before the)\b", re.IGNORECASE)
_NEGATION = re.compile(r"\b(?:never|not|no longer)\b|n'?t\b", re.IGNORECASE)
_REVERSAL = re.compile(r"\b(?:after all|change of plan|reversed|flipped|changed (?:\w+ )?mind|the other way round|"
                       r"instead|anymore|any more)\b", re.IGNORECASE)
_SUBJECT_GOES = re.compile(r"(?:has left|have left|left for|is leaving|retired|declined|is off|are off|sold|"
                           r"ended|is gone|are gone|stopped|anymore|any more|closed|has closed|shut down)$",
                           re.IGNORECASE)
_NEGATION_SCOPE = re.compile(r"\b(?:never|not|no|no longer|without)\b|n['’]t\b", re.IGNORECASE)
_REVERSED_OBJECT = re.compile(r"\b(?:reversed|undid|overturned|scrapped|cancelled)\s+(?:the\s+)?(?P<old>[^:;,.]+)",
                              re.IGNORECASE)
_STRONG_REVERSAL = re.compile(r"\b(?:instead|after all|change of plan|reversed|flipped|changed (?:\w+ )?mind|"
                              r"the other way round)\b", re.IGNORECASE)
# A move of the subject to a new value or holder: "moved X to", "handed the job to", "now goes to".
_CHANGE_TO = re.compile(r"\b(?:moved|switched|changed|migrated|upgraded|shifted|went over|is going|handed|passed|"
                        r"transferred|gave|given|renamed) (?:[\w'’-]+ ){0,4}(?:over )?to\b|"
                        r"\b(?:took over|taken over|takes over)\b|"
                        r"\bnow (?:is|are|uses|lives|runs|goes|go|points|point|sits|sit|lands|land)\b", re.IGNORECASE)
# A change stated as such: only then may the fact still name the old value ("moved to 8010; ... wants 8000").
_STRICT_CUE = re.compile(r"\b(?:moved|switched|changed|migrated|upgraded|shifted|bumped|raised|lowered|increased|"
                         r"reduced|cut|renamed|replaced|from now on|no longer)\b", re.IGNORECASE)
_SAME = re.compile(r"\b(?:still|again|as usual|as always|same as)\b", re.IGNORECASE)
_ORDER = re.compile(r"\b(\w+)\s+(?:over|rather than|before|instead of|then)\s+(\w+)", re.IGNORECASE)


@dataclass(frozen=True)
class Candidate:
    key: str
    text: str
    cosine: float
    pinned: bool = False


@dataclass(frozen=True)
class Relation:
    kind: str                    # new | duplicate | update | conflict
    target: str = ""             # the candidate's key ("" for new)
    reason: str = ""
    cosine: float = 0.0
    label: str = ""              # the corpus label behind a learned decision (refinement, agreement, ...)
    probability: float = 0.0
    weighed: bool = False         # the learned arbiter weighed the person's-line evidence (arbiter.py)


def relate(fact: str, candidates: Sequence[Candidate], rarity: Rarity) -> Relation:
    """The relation of `fact` to the best of `candidates` (ranked by cosine, best first)."""
    if not candidates:
        return Relation(NEW)
    update = _best_update(fact, candidates, rarity)
    if update is not None:
        candidate, why = update
        return Relation(CONFLICT if candidate.pinned else UPDATE, candidate.key, why, candidate.cosine)
    duplicate = _best_duplicate(fact, candidates, rarity)
    if duplicate is not None:
        candidate, why = duplicate
        return Relation(DUPLICATE, candidate.key, why, candidate.cosine)
    return Relation(NEW, "", "", candidates[0].cosine)


# ----- changes --------------------------------------------------------------------------------
# A list of quoted strings mentions words, it does not use them: 'searches for "expired", "closed",
# "no longer open"' says nothing is no longer so. Change cues are not read inside such a list (two or
# more quoted spans, in any script's quotes, joined by commas, "、", "/", "or", "and"). A single
# quotation stays: reported speech ('she said "no more Slack"', 「以后不再用旧路由器」) is a change.
_QUOTE = r'(?:"[^"\n]*"|“[^”\n]*”|„[^“”\n]*[“”]|«[^»\n]*»|「[^」\n]*」|『[^』\n]*』)'
_QUOTED_LIST = re.compile(_QUOTE + r'(?:\s*(?:[,，、/]|\bor\b|\band\b)\s*(?:(?:or|and)\s+)?' + _QUOTE + r')+',
                          re.IGNORECASE)


def _unquoted(fact: str) -> str:
    return _QUOTED_LIST.sub(" ", fact)


def has_change_cue(fact: str, any_language: bool = False) -> bool:
    """The fact says something changed: a new-value, old-value or reversal cue outside quotes (in
    English; `any_language`: also in the other languages of change_cues.py)."""
    fact = _unquoted(fact)
    return bool(restate._NEW_CUE.search(fact) or restate._OLD_CUE.search(fact) or _REVERSAL.search(fact)
                or re.search(r"\bfrom now on\b", fact, re.IGNORECASE)
                or (any_language and change_cues.foreign_change_cue(fact)))


def has_sameness_cue(fact: str, any_language: bool = False) -> bool:
    """The fact says something is still as it was ("still", "as usual"; `any_language`: also in the
    other languages of change_cues.py) and no change cue says otherwise."""
    said = _unquoted(fact)
    same = bool(_SAME.search(said) or restate._SAME_CUE.search(said)
                or (any_language and change_cues.foreign_sameness_cue(said)))
    return same and not has_change_cue(fact, any_language)


def _old_side(fact: str) -> frozenset[str]:
    """Words the fact says are gone: "from X", "off X", "instead of X", "(was X)", "replaced X",
    and the clauses with an old-value cue ("gave up X", "X has left")."""
    fact = _unquoted(fact)
    found: set[str] = set()
    for pattern in (restate._FROM_TO, restate._OFF, restate._INSTEAD_OF, restate._REPLACED):
        for match in pattern.finditer(fact):
            found |= stems(match.group("old"))
    for match in _REVERSED_OBJECT.finditer(fact):
        found |= stems(match.group("old"))
    for match in restate._PARENTHESES.finditer(fact):
        if restate._WAS.match(match.group("inner").strip()):
            found |= stems(match.group("inner"))
    clauses, _glue = restate._clauses(fact)
    for clause in clauses:
        match = restate._OLD_CUE.search(clause)
        if match is None:
            continue
        # "Lindgren declined", "Karim has left": the subject went; "gave up oolong": the object.
        side = clause[:match.start()] if _SUBJECT_GOES.match(match.group(0)) else clause[match.end():]
        found |= stems(side)
    return frozenset(found - CUE_WORDS)


def gone_words(fact: str) -> frozenset[str]:
    """Stems of what the fact says is gone or replaced (empty without a change cue)."""
    return _old_side(fact) if has_change_cue(fact) else frozenset()


def _slot_change(fact: str, bullet: str, rarity: Rarity, cue: bool = False, cued: bool = False) -> str:
    """The same subject with another value: shared subject words, and a value of one type (a
    time, a number, a weekday, a month, "first"/"last") that the bullet has and the fact
    replaces with another. Returns a description, or ""."""
    f_values, b_values = values_of(fact), values_of(bullet)
    # Without a change cue the bullet's value must be gone from the fact; with one ("moved to
    # port 8010; the portal wants 8000") the fact may still name the old value.
    changed = [(kind, f_values[kind] - b_values[kind]) for kind in f_values
               if f_values[kind] - b_values[kind] and b_values[kind] and (cue or b_values[kind] - f_values[kind])]
    if any(kind == "number" for kind, _new in changed) and not same_unit(fact, bullet, f_values, b_values):
        changed = [(kind, new) for kind, new in changed if kind != "number"]
    if not changed:
        return ""
    everything = set().union(*f_values.values(), *b_values.values())
    subject = {w for w in (stems(fact) & stems(bullet)) - CALENDAR - CUE_WORDS - ORDINALS - GENERIC - everything
               if not w[:1].isdigit()}
    moved = {v for kind, _new in changed for v in f_values[kind] ^ b_values[kind]}
    subject |= (anchors(fact) & anchors(bullet)) - moved             # "1:1", "Kubernetes"
    if not subject:
        return ""
    if not (cue or cued) and _names_differ(fact, bullet, everything, rarity):
        return ""            # "the check for Kakadorlo" / "the check for Lokami": two things, not one changed
    strength = sum(rarity.weight(t) for t in subject)
    # Two fairly rare words, or one very rare; a fact close in meaning that says it changes
    # something ("changed to", "only one left") needs only one fairly rare word ("newsletter", "hive").
    if strength < (0.7 if cued else 1.1) * math.log(rarity.total + 1):
        return ""
    values = sorted(v for _kind, new in changed for v in new)
    return f"same subject ({', '.join(sorted(subject)[:4])}), new value {', '.join(values[:3])}"


def _names_differ(fact: str, bullet: str, values: set[str], rarity: Rarity) -> bool:
    """Each side names something (a rare name or identifier, not one of the changed values) the
    other does not, and no name is shared: they are about different things. One shared name ("Kate
    wants the call on the last Sunday now" / "call with Kate and Daisuke") keeps them one subject."""
    def names(text: str) -> set[str]:
        return {a for a in anchors(text) if a not in values and not a[:1].isdigit()}
    mine, theirs = names(fact), names(bullet)
    novel_mine = _novel(frozenset(mine), bullet, rarity)
    novel_theirs = _novel(frozenset(theirs), fact, rarity)
    # What is left is shared or too common to tell things apart ("API" in every eighth line): only a
    # shared name that is rare makes one subject.
    common = max(2.0, rarity.total * 0.05)
    if any(rarity.count(a) <= common for a in (mine - novel_mine) | (theirs - novel_theirs)):
        return False                         # a rare name one side has is in the other's words
    return bool(novel_mine) and bool(novel_theirs)


def _new_version(fact: str, bullet: str) -> str:
    """The same name with another version number ("Kubernetes 1.29" -> "Kubernetes 1.31")."""
    mine = dict(re.findall(r"\b([A-Za-z][\w.+-]*)\s+v?(\d+(?:\.\d+)+)\b", fact))
    theirs = dict(re.findall(r"\b([A-Za-z][\w.+-]*)\s+v?(\d+(?:\.\d+)+)\b", bullet))
    for name, version in mine.items():
        other = next((v for n, v in theirs.items() if n.lower() == name.lower()), None)
        if other is not None and other != version:
            return f"{name} {other} is now {version}"
    return ""


def _permits_what_is_forbidden(fact: str, bullet: str) -> bool:
    """The bullet forbids ("never", "only through") and the fact allows ("is fine", "can", "no need")."""
    return bool(_PROHIBIT.search(bullet) and _PERMIT.search(fact))


def _order_flip(fact: str, bullet: str) -> bool:
    f, b = _ORDER.search(fact), _ORDER.search(bullet)
    if not f or not b:
        return False
    return (stem(f.group(1).lower()), stem(f.group(2).lower())) == (stem(b.group(2).lower()), stem(b.group(1).lower()))


_FIRST = re.compile(r"\b(\w+)\s+first\b", re.IGNORECASE)


def _first_flip(fact: str, bullet: str) -> bool:
    """"the why first, then the command" against "the command first": what came first is now
    named after something else."""
    f, b = _FIRST.search(fact), _FIRST.search(bullet)
    if not f or not b:
        return False
    mine, theirs = stem(f.group(1).lower()), stem(b.group(1).lower())
    return mine != theirs and theirs in stems(fact[f.end():])


def _best_update(fact: str, candidates: Sequence[Candidate], rarity: Rarity):
    cue = has_change_cue(fact)
    old_side = _old_side(fact) if cue else frozenset()
    f_stems = stems(fact)
    best = None
    for candidate in candidates:
        b_stems = stems(candidate.text)
        shared = (f_stems & b_stems) - CUE_WORDS
        if not shared:
            continue
        why, strength = "", 0.0
        named = old_side & b_stems
        weight = sum(rarity.weight(t) for t in named)
        if named and weight >= 1.5:
            why = f"the fact says {', '.join(sorted(named)[:3])} is no longer so"
            strength = 3.0 + min(weight, 6.0) / 3 + candidate.cosine
        elif _order_flip(fact, candidate.text) and candidate.cosine >= 0.6:
            why, strength = "the same preference the other way round", 2.5 + candidate.cosine
        elif (_first_flip(fact, candidate.text) and candidate.cosine >= 0.4
              and sum(rarity.weight(t) for t in shared - {"first"}) >= 6.0):
            why, strength = "what comes first is the other way round", 2.5 + candidate.cosine
        elif candidate.pinned and candidate.cosine >= 0.45 and _permits_what_is_forbidden(fact, candidate.text):
            # A conflict with a pin is the safe reading: nothing changes until a person decides.
            why, strength = "it allows what the pinned bullet forbids", 3.5 + candidate.cosine
        elif (candidate.cosine >= 0.6 and negation_flip(fact, candidate.text)
              and max(rarity.overlap(f_stems, b_stems), rarity.overlap(b_stems, f_stems)) >= 0.5):
            why, strength = "it says the opposite", 2.0 + candidate.cosine
        elif _new_version(fact, candidate.text):
            why, strength = _new_version(fact, candidate.text), 2.5 + candidate.cosine
        elif (_CHANGE_TO.search(fact) and candidate.cosine >= 0.55
              and sum(rarity.weight(t) for t in shared) >= 4.0):
            why, strength = "it moves the bullet's subject to something new", 1.7 + candidate.cosine
        elif (_STRONG_REVERSAL.search(fact) and candidate.cosine >= 0.5
              and sum(rarity.weight(t) for t in shared) >= 4.0):
            why, strength = "it reverses what the bullet says", 1.8 + candidate.cosine
        else:
            # Without a cue a new value needs a close bullet ("mileage 68 c per km" / "pays 60 c per km").
            strict = bool(_STRICT_CUE.search(fact))
            slot = _slot_change(fact, candidate.text, rarity, strict, cue and candidate.cosine >= 0.4) if (cue or candidate.cosine >= 0.6) else ""
            if slot:
                why, strength = slot, (2.0 if cue else 1.5) + candidate.cosine
        if why and (best is None or strength > best[2]):
            best = (candidate, why, strength)
    return (best[0], best[1]) if best else None


# ----- duplicates -----------------------------------------------------------------------------
def negated(text: str) -> frozenset[str]:
    """Stems a negation reaches: the few words after "never", "not", "no", "won't"."""
    found: set[str] = set()
    for match in _NEGATION_SCOPE.finditer(text):
        found |= {w for w in stems(" ".join(text[match.end():].split()[:3])) if not w[:1].isdigit()}
    return frozenset(found)


def negation_flip(a: str, b: str) -> bool:
    """One text denies what the other states ("Deploys never happen on Mondays")."""
    neg_a, neg_b = negated(a), negated(b)
    return bool((neg_a - neg_b) & stems(b)) or bool((neg_b - neg_a) & stems(a))


def contradicts(a: str, b: str) -> bool:
    """Two texts that say opposite things: a reversed order or a flipped negation."""
    return _order_flip(a, b) or negation_flip(a, b)


def _best_duplicate(fact: str, candidates: Sequence[Candidate], rarity: Rarity):
    if (restate._OLD_CUE.search(fact) or _REVERSAL.search(fact)) and not _SAME.search(fact):
        return None                  # "no longer", "instead": a change, even when no bullet matched it
    said = content(fact)
    is_foreign = foreign(said)
    f_anchors = anchors(said)
    f_numbers = numbers_of(said)
    for candidate in (candidates if is_foreign else candidates[:5]):
        if not f_numbers <= numbers_of(candidate.text):
            continue                 # a number the bullet does not have is news
        if not is_foreign and contradicts(said, candidate.text):
            continue
        novel = _novel(f_anchors, candidate.text, rarity, loose=is_foreign)
        if is_foreign:
            # One shared name is enough only when it is rare (a brand named once, not the project
            # every line is about).
            rare = [a for a in f_anchors if rarity.count(a) <= 3]
            if f_anchors and not novel and (len(f_anchors) >= 2 or rare):
                return candidate, f"the same names and numbers in another language ({', '.join(sorted(f_anchors)[:4])})"
            continue
        f_stems, b_stems = stems(said), stems(candidate.text)
        if _swapped_word(f_stems, b_stems, candidate.cosine):
            continue
        covered = max(rarity.overlap(f_stems, b_stems), min(rarity.overlap(b_stems, f_stems),
                                                            rarity.overlap(f_stems, b_stems) + 0.25))
        if not novel and (candidate.cosine >= 0.6 or (candidate.cosine >= 0.45 and covered >= 0.5)
                          or (candidate.cosine >= 0.4 and covered >= 0.7)):
            return candidate, f"says the same (cosine {candidate.cosine:.2f}, words {covered:.2f})"
        if len(novel) <= 1 and candidate.cosine >= 0.8 and covered >= 0.3:
            return candidate, f"says the same (cosine {candidate.cosine:.2f})"
    return None


def _swapped_word(f_stems: frozenset[str], b_stems: frozenset[str], cosine: float) -> bool:
    """One word traded for another with everything else the same, and the sentences still far apart:
    the traded word is the fact ("line on the daily log" / "line in MEMORY.md"). A paraphrase that
    trades a word for its synonym stays close in meaning (cosine 0.85 and more; "billing exporter" /
    "billing dashboard" is 0.83)."""
    only_fact, only_bullet = f_stems - b_stems, b_stems - f_stems
    shared = f_stems & b_stems
    return (len(only_fact) == 1 and len(only_bullet) == 1 and len(shared) >= 2
            and len(shared) >= 2 * max(len(only_fact), len(only_bullet)) and cosine < 0.85)


def _novel(f_anchors: frozenset[str], bullet: str, rarity: Rarity, loose: bool = False) -> set[str]:
    """Anchors of the fact the bullet lacks: not in its text (as a substring: paths, hosts; for an
    identifier with digits, its part with the digits), not a stem of its words, not a weekday or
    month (a detail, not news), and rare enough to matter (the name of the person a memory is
    about is in half its lines). `loose`: a word the bullet has with another ending counts
    (another language: "Maintainern" / "maintainer")."""
    lower = bullet.lower()
    b_stems = stems(bullet)
    b_words = re.findall(r"\w+", lower)
    common = max(2.0, rarity.total * 0.05)

    def present(anchor: str) -> bool:
        if anchor in lower or stem(anchor) in b_stems:
            return True
        parts = [p for p in re.split(r"[-_/.]", anchor) if any(c.isdigit() for c in p)]
        if parts and all(re.search(rf"(?<![\w.]){re.escape(p)}(?![\w])", lower) for p in parts):
            return True
        return loose and any(len(w) >= 4 and (anchor.startswith(w) or w.startswith(anchor))
                             and min(len(w), len(anchor)) >= 0.7 * max(len(w), len(anchor)) for w in b_words)

    return {a for a in f_anchors
            if not present(a) and a not in CALENDAR and stem(a) not in CALENDAR
            and rarity.count(a) <= common}


def could_be_duplicate(fact: str, candidate: Candidate, rarity: Rarity) -> bool:
    """Loose enough for a model to call it a duplicate: close, no new name or number, no
    contradiction, no change cue."""
    said = content(fact)
    if candidate.cosine < 0.5 or has_change_cue(said) or contradicts(said, candidate.text):
        return False
    return numbers_of(said) <= numbers_of(candidate.text) and not _novel(anchors(said), candidate.text, rarity)
