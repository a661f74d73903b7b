"""`reverie bench judgment`, second part: the dream's relation decision, leave one domain out.

The first part scores the relation head pair by pair. A dream asks something else: among the
bullets a fact is compared with (several on its subject, most about other things), which one does
it repeat, update or break, or none? Here every case of a left-out domain is decided the three ways
the dream can decide it, with the heads trained without that domain:

- pools (corpus/pools/): the pool's bullets plus every other pool's bullets of the domain, the ten
  closest by cosine (as core/dream/pipeline/judge.py ranks them);
- the corpus' pairs, each a pool of one bullet.

"rules" is word_relations.py, "head" is pools.choose over the relation head and gate, and
"both@T" is pools.combine: the rules unless the head is at least T sure of another answer. A case
is right when the decision (new / duplicate / update / conflict, and the bullet) is its label's
(agreeing with a pin: a duplicate of it, or new). The threshold that scores best over pools and pairs
together is printed as the one to ship (pools.OVERRIDE); the consolidation cases play no part.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Sequence

import numpy as np

from core.dream.judgment import dataset, features, pools, signals, word_relations
from core.dream.judgment.heads import Head
from core.dream.judgment.relations import restates_pin
from core.dream.judgment.wording import Rarity

THRESHOLDS = (0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95)
SHOWN = 10                  # candidates per fact, as judge.CANDIDATES
COSINE_MODEL = "all-MiniLM-L6-v2"   # ranks candidates, as the dream's default similarity does


@dataclass
class Case:
    source: str                         # "pool" or "pair"
    lang: str
    truth_kind: str
    truth_index: int | None
    agreement: bool                     # a pin agreed with: its duplicate, or new, is right
    rule: tuple[str, int | None]
    judged: list


def right(case: Case, kind: str, index: int | None) -> bool:
    if case.agreement:
        return (kind, index) in ((pools.DUPLICATE, case.truth_index), (pools.NEW, None))
    return kind == case.truth_kind and (index == case.truth_index or kind == pools.NEW)


def _cosines(vectors: np.ndarray | None, line: int, rows: Sequence[int]) -> list[float]:
    if vectors is None:
        return [0.5] * len(rows)
    return [float(vectors[line] @ vectors[r]) for r in rows]


class Decider:
    """The fold's relation head and gate over any (bullets, line) set."""

    def __init__(self, head: Head, gate: Head, store: features.VectorStore | None):
        self.head, self.gate, self.store = head, gate, store

    def judged(self, bullets: Sequence[str], pinned: Sequence[bool], line: str) -> list[pools.Judged]:
        vb = self.store.get(list(bullets)) if self.store else None
        vl = self.store.get([line] * len(bullets)) if self.store else None
        x = features.pair_features(bullets, [line] * len(bullets), vb, vl, pinned)
        probs = self.head.probabilities(x)
        related = self.gate.probabilities(x)[:, self.gate.classes.index("related")]
        return [pools.judged_row(self.head.classes, row, p, pin, pin and restates_pin(line, b))
                for row, p, pin, b in zip(probs, related, pinned, bullets)]


def _case(source, lang, bullets, pinned, line, truth_relation, truth_index, decider, rarity, cosine) -> Case:
    order = sorted(range(len(bullets)), key=lambda i: -cosine[i])[:SHOWN]
    shown = [bullets[i] for i in order]
    shown_pins = [pinned[i] for i in order]
    candidates = [word_relations.Candidate(str(n), b, cosine[i], pin)
                  for n, (i, b, pin) in enumerate(zip(order, shown, shown_pins))]
    rule = word_relations.relate(line, candidates, rarity)
    rule_index = int(rule.target) if rule.target else None
    index = order.index(truth_index) if truth_index in order else (-1 if truth_index is not None else None)
    return Case(source, lang, pools.DREAM_KIND.get(truth_relation, pools.NEW), index,
                truth_relation == "agreement", (rule.kind, rule_index), decider.judged(shown, shown_pins, line))


def fold_cases(domain: str, decider: Decider, folder: Path, cosine_store) -> list[Case]:
    """Every pool and every corpus pair of `domain` as the dream would judge it."""
    clean = signals.body
    domain_pools = [p for p in pools.load_pools(folder) if p.domain == domain]
    pairs = [replace(p, bullet=clean(p.bullet), line=clean(p.line))
             for p in dataset.load_pairs(folder) if p.domain == domain]
    every = [clean(b) for p in domain_pools for b in p.bullets]
    rarity = Rarity(every + [p.bullet for p in pairs] + [clean(p.line) for p in domain_pools] + [p.line for p in pairs])
    texts = list(dict.fromkeys(every + [clean(p.line) for p in domain_pools] + [p.bullet for p in pairs]
                               + [p.line for p in pairs]))
    where = {t: i for i, t in enumerate(texts)}
    vectors = cosine_store.get(texts) if cosine_store else None
    cases = []
    for pool in domain_pools:
        own = [clean(b) for b in pool.bullets]
        others = [(clean(b), i in o.pinned) for o in domain_pools if o.id != pool.id for i, b in enumerate(o.bullets)]
        others = [(b, pin) for b, pin in others if b not in own]
        bullets = own + [b for b, _ in others]
        pinned = [i in pool.pinned for i in range(len(own))] + [pin for _, pin in others]
        line = clean(pool.line)
        cosine = _cosines(vectors, where[line], [where[b] for b in bullets])
        cases.append(_case("pool", pool.lang, bullets, pinned, line, pool.relation, pool.match, decider, rarity,
                           cosine))
    for pair in pairs:
        cosine = _cosines(vectors, where[pair.line], [where[pair.bullet]])
        cases.append(_case("pair", pair.lang, [pair.bullet], [pair.pinned], pair.line, pair.relation,
                           None if pair.relation == "distinct" else 0, decider, rarity, cosine))
    return cases


def accuracy(cases: Sequence[Case], decide) -> float:
    return sum(right(c, *decide(c)) for c in cases) / max(len(cases), 1)


def deciders(threshold: float | None):
    """A case -> (kind, index) function: the rules (None), the head (0.0 means: always the head), or both@T."""
    if threshold is None:
        return lambda c: c.rule
    if threshold == 0.0:
        return lambda c: (lambda ch: (ch.kind, ch.index))(pools.choose(c.judged))
    return lambda c: (lambda ch: (ch.kind, ch.index))(pools.combine(c.rule[0], c.rule[1], c.judged, threshold)[0])


def evaluate(cases: Sequence[Case]) -> dict:
    """Accuracy of each way of deciding, on pools, pairs, both, and per language group."""
    ways = {"rules": None, "head": 0.0} | {f"both@{t}": t for t in THRESHOLDS}
    groups = {"pools": [c for c in cases if c.source == "pool"], "pairs": [c for c in cases if c.source == "pair"],
              "all": list(cases), "en": [c for c in cases if c.lang == "en"],
              "zh+mixed": [c for c in cases if c.lang in dataset.CHINESE],
              "pools, no match": [c for c in cases if c.source == "pool" and c.truth_index is None]}
    table = {way: {g: accuracy(cs, deciders(t)) for g, cs in groups.items()} for way, t in ways.items()}
    best = max(THRESHOLDS, key=lambda t: (round(table[f"both@{t}"]["all"], 4), t))
    overrides = {t: override_precision(cases, t) for t in THRESHOLDS}
    safe = min((t for t in THRESHOLDS if overrides[t][0] >= pools.OVERRIDE_PRECISION), default=None)
    by_direction = direction_precision(cases, pools.OVERRIDE)
    trusted = frozenset(d for d, (share, n) in by_direction.items()
                        if share >= pools.OVERRIDE_PRECISION and n >= MIN_OVERRIDES)
    restricted = lambda c: (lambda ch: (ch.kind, ch.index))(pools.combine(c.rule[0], c.rule[1], c.judged,
                                                                          pools.OVERRIDE, trusted)[0])
    table[f"both@{pools.OVERRIDE}, trusted changes"] = {g: accuracy(cs, restricted) for g, cs in groups.items()}
    return {"table": table, "sizes": {g: len(cs) for g, cs in groups.items()}, "best_threshold": best,
            "overrides": overrides, "safe_threshold": safe, "shipped_threshold": pools.OVERRIDE,
            "directions": {f"{a} -> {b}": v for (a, b), v in sorted(by_direction.items())},
            "trusted": sorted(f"{a} -> {b}" for a, b in trusted)}


MIN_OVERRIDES = 10      # a change the head made fewer times than this on the corpus is not trusted


def direction_precision(cases: Sequence[Case], threshold: float) -> dict:
    """{(rules' kind, head's kind): (share of those overrides that are right, how many)} at `threshold`."""
    out: dict = {}
    for c in cases:
        choice, overrode = pools.combine(c.rule[0], c.rule[1], c.judged, threshold)
        if overrode:
            out.setdefault((c.rule[0], choice.kind), []).append(right(c, choice.kind, choice.index))
    return {d: (sum(v) / len(v), len(v)) for d, v in out.items()}


def override_precision(cases: Sequence[Case], threshold: float) -> tuple[float, int]:
    """(the share of the head's overrides that are right, how many overrides) at `threshold`."""
    made = [(c, pools.combine(c.rule[0], c.rule[1], c.judged, threshold)[0]) for c in cases]
    made = [(c, ch) for c, ch in made if (ch.kind, ch.index) != (c.rule[0], c.rule[1] if c.rule[0] != pools.NEW
                                                                  else None)]
    return sum(right(c, ch.kind, ch.index) for c, ch in made) / max(len(made), 1), len(made)


def report(result: dict) -> str:
    groups = list(result["sizes"])
    out = ["## the dream's relation decision (leave one domain out; right bullet and right kind)",
           "| decided by | " + " | ".join(f"{g} ({result['sizes'][g]})" for g in groups) + " |",
           "|---" * (len(groups) + 1) + "|"]
    for way, row in result["table"].items():
        out.append(f"| {way} | " + " | ".join(f"{row[g]:.3f}" for g in groups) + " |")
    out += ["", "| both@T | overrides | right |", "|---|---|---|"]
    out += [f"| {t} | {n} | {share:.3f} |" for t, (share, n) in result["overrides"].items()]
    out += ["", f"| change at {result['shipped_threshold']} (rules -> head) | overrides | right |", "|---|---|---|"]
    out += [f"| {d} | {n} | {share:.3f} |" for d, (share, n) in result["directions"].items()]
    out += ["", f"Trusted changes (right at least {pools.OVERRIDE_PRECISION:.0%} of {MIN_OVERRIDES}+ times): "
                f"{', '.join(result['trusted']) or 'none'}"]
    out += ["", f"Most accurate threshold over pools and pairs: {result['best_threshold']}; lowest threshold whose "
                f"overrides are right at least {pools.OVERRIDE_PRECISION:.0%} of the time: {result['safe_threshold']} "
                f"(shipped: pools.OVERRIDE = {result['shipped_threshold']})", ""]
    return "\n".join(out)


def summary_line(result: dict) -> str:
    t = result["table"]
    chosen = t[f"both@{result['shipped_threshold']}"]
    return (f"relations rules={t['rules']['all']:.3f} head={t['head']['all']:.3f} "
            f"both={chosen['all']:.3f} pools_rules={t['rules']['pools']:.3f} pools_both={chosen['pools']:.3f} "
            f"threshold={result['shipped_threshold']}")
