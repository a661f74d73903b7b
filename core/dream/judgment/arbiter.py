"""The arbiter: where the word rules and the learned heads disagree, which of them the dream believes.

The word rules read English well and little else; the heads read every language but miss what a
rule sees at once (a unit, a marker). Hand-set paths between the two (pools.HeadPolicy) fitted the
cases they were set on and not others. The arbiter learns the choice instead, from labelled
consolidation cases written for the project (corpus/cases, never the development cases): for each
log line of a case the real dream gave the rules' answer and the heads' answer, and the case's
labels say which one was right. Two small logistic models (arbiter_train.py) read the evidence
both sides give:

- kinds: whether a line the rules, the marker and the secret scanner leave open is lasting (the
  head's four probabilities, the rules' kind, whether the rules can read the line at all);
- relations: where the head's relation (pools.choose) differs from the rules', whether the head's
  is right (both answers, the head's certainty and its view of the rules' bullet, the change and
  sameness cues, whether the bullet's slot gets a new value, a numbered sibling or another subject,
  both cosines, a bullet in another language).

Features are numbers in a fixed order (KIND_FEATURES, RELATION_FEATURES); the weights are
weights/arbiter-kinds.npz and weights/arbiter-relations.npz (heads.Head, two classes, the
standardisation folded in) with the decision threshold stored beside them. With no weights the
dream falls back to the hand-set policy.

`RECORDER`, when set, is called with every decision's evidence (arbiter_train.collect uses it to
build the training rows from real dreams).
"""
from __future__ import annotations

import contextlib
import functools
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from core.dream.judgment import heads, pair_focus, persons_lines, signals, word_relations
from core.dream.judgment.pools import Choice, Judged
from core.dream.judgment.wording import foreign, unbracketed

KIND_FEATURES = ("p_durable", "p_transient", "p_one_off", "p_secret", "rule_durable", "rule_transient",
                 "rule_one_off", "unread", "cjk_share", "long")
RELATION_KINDS = ("new", "duplicate", "update", "conflict")
RELATION_FEATURES = tuple(f"rule_{k}" for k in RELATION_KINDS) + tuple(f"head_{k}" for k in RELATION_KINDS) + (
    "head_probability", "head_sure", "head_related", "rule_support", "same_target", "unread", "change_cue",
    "sameness_cue", "new_value", "sibling", "why_not_replace", "p_durable", "cosine", "meaning",
    "other_language", "pinned", "coverage", "length_ratio", "margin", "head_own_distinct") + tuple(
    f"pair_{name}" for name in ("unit_change", "numbers_differ", "numbers_kept", "numbers_restated", "times_differ",
                                "dates_differ", "days_differ", "names_shared", "names_kept", "names_restated",
                                "bullet_negated", "fact_negated", "negation_differs", "longer", "shorter",
                                "grams_shared", "grams_kept", "grams_restated", "script_differs"))
# signals.pair_signals of the bullet at stake, named in its order
# The labels of the head behind each of the dream's relations.
_LABELS = {"duplicate": ("duplicate", "agreement"), "update": ("update", "refinement"), "conflict": ("conflict",)}

RECORDER: Callable[[str, dict], None] | None = None
WEIGHTS = heads.WEIGHTS
_FOLDER: list[Path] = []          # weights_from's folder while inside it


def _record(what: str, evidence: dict) -> None:
    if RECORDER is not None:
        RECORDER(what, evidence)


@contextlib.contextmanager
def recording(recorder: Callable[[str, dict], None]):
    """Within: every decision's evidence goes to `recorder`, and no shipped decision is used (the dream
    runs its hand-set policy, the one the rows describe)."""
    global RECORDER
    RECORDER = recorder
    try:
        yield
    finally:
        RECORDER = None


def kind_features(text: str, rule_kind: str, row: Sequence[float], classes: Sequence[str]) -> list[float]:
    p = {c: float(v) for c, v in zip(classes, row)}
    return [p.get("durable", 0.0), p.get("transient", 0.0), p.get("one-off", 0.0), p.get("secret", 0.0),
            float(rule_kind == "durable"), float(rule_kind == "transient"), float(rule_kind == "one-off"),
            float(signals.rules_unread(text)), signals.cjk_share(text), min(len(text), 400) / 400]


def new_value(bullet: str, fact: str) -> bool:
    """The fact gives the bullet's slot a new value: another day, time, date or number of the same unit
    (signals.value_changed). What stands in brackets does not count: "(16:02 UTC completed)",
    "(2026-03-05)" say when a line was written or what it refers to, not the value it states. Another
    name counts only in the bullet's own slot (persons_lines.slot_renamed): any other name was tried,
    and in agents' logs nearly every pair of lines names different things."""
    bullet, fact = unbracketed(bullet), unbracketed(fact)
    return signals.value_changed(bullet, fact) or persons_lines.slot_renamed(bullet, fact)


def sibling(bullet: str, fact: str) -> bool:
    """A numbered sibling ("valve 3" for "valve 4") or the same sentence about another subject
    (pair_focus.another_subject). The word in the subject's place is compared only within one language:
    "Nóminas con …" and "Payroll by …" put different words there for one subject."""
    return signals.numbered_siblings(bullet, fact) or (
        foreign(bullet) == foreign(fact) and pair_focus.another_subject(bullet, fact))


def _support(kind: str, index: int | None, views: Sequence[Judged]) -> float:
    """The head's probability of the rules' answer: of its label on the rules' bullet, or, for a new
    fact, that no bullet is repeated, updated or broken."""
    if kind == "new" or index is None:
        return min((1.0 - v.related * (1.0 - v.mass.get("distinct", 0.0)) for v in views), default=1.0)
    view = views[index]
    return view.related * sum(view.mass.get(label, 0.0) for label in _LABELS.get(kind, ()))


def relation_features(fact: str, bullets: Sequence[str], cosines: Sequence[float], pinned: Sequence[bool],
                      rule_kind: str, rule_index: int | None, views: Sequence[Judged], choice: Choice,
                      p_durable: float, meaning: Sequence[float] | None) -> list[float]:
    """The evidence on one disagreement: the rules said (rule_kind, rule_index), the head `choice`."""
    target = choice.index if choice.index is not None else rule_index
    bullet = bullets[target] if target is not None else ""
    head_view = views[choice.index] if choice.index is not None else None
    return ([float(rule_kind == k) for k in RELATION_KINDS] + [float(choice.kind == k) for k in RELATION_KINDS] + [
        choice.probability, choice.sure, head_view.related if head_view else 0.0,
        _support(rule_kind, rule_index, views), float(choice.index == rule_index),
        float(signals.rules_unread(fact)), float(word_relations.has_change_cue(fact, any_language=True)),
        float(word_relations.has_sameness_cue(fact, any_language=True)),
        float(bool(bullet) and new_value(bullet, fact)), float(bool(bullet) and sibling(bullet, fact)),
        float(bool(bullet) and not pinned[target] and bool(persons_lines.why_not_replace(fact, bullet))),
        p_durable, float(cosines[target]) if target is not None else 0.0,
        float(meaning[target]) if meaning is not None and target is not None else 0.0,
        float(bool(bullet) and foreign(bullet) != foreign(fact)),
        float(target is not None and pinned[target]),
        persons_lines.coverage(fact, bullet) if bullet else 0.0,
        min(persons_lines.length_ratio(fact, bullet), 4.0) / 4.0 if bullet else 0.0,
        _margin(views, choice), (head_view.own or head_view.mass).get("distinct", 0.0) if head_view else 1.0]
        + [float(v) for v in (signals.pair_signals(bullet, fact) if bullet else np.zeros(signals.PAIR_SIGNALS))])


def _margin(views: Sequence[Judged], choice: Choice) -> float:
    """How far the head's chosen bullet stands above the next best one (a fact that fits two bullets
    equally well is about neither for sure)."""
    if choice.index is None:
        return 0.0
    others = [v.related * (1.0 - v.mass.get("distinct", 0.0)) for i, v in enumerate(views) if i != choice.index]
    return choice.sure - max(others, default=0.0)


class Decision:
    """One learned yes/no: heads.Head with classes ("no", "yes") and the threshold of "yes"."""

    def __init__(self, head: heads.Head, threshold: float):
        self.head, self.threshold = head, threshold

    def probability(self, x: Sequence[float]) -> float:
        row = self.head.probabilities(np.asarray([x], dtype=np.float32))[0]
        return float(row[self.head.classes.index("yes")])

    def says_yes(self, x: Sequence[float]) -> bool:
        return self.probability(x) >= self.threshold

    def save(self, path: Path) -> None:
        self.head.save(path)
        path.with_suffix(".threshold").write_text(f"{self.threshold:.4f}\n", encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> "Decision":
        return cls(heads.Head.load(path), float(path.with_suffix(".threshold").read_text(encoding="utf-8")))


def decision_path(name: str, folder: Path = WEIGHTS) -> Path:
    return folder / f"arbiter-{name}.npz"


def decision(name: str) -> Decision | None:
    """The shipped decision `name` ("kinds" or "relations"), or None when it is not there (or while
    recording)."""
    return None if RECORDER is not None else _shipped(name)


@contextlib.contextmanager
def weights_from(folder: Path):
    """Within: the decisions come from `folder` (a benchmark's fold) instead of the shipped weights."""
    _FOLDER.append(Path(folder))
    _shipped.cache_clear()
    try:
        yield
    finally:
        _FOLDER.pop()
        _shipped.cache_clear()


@functools.lru_cache(maxsize=4)
def _shipped(name: str) -> Decision | None:
    path = decision_path(name, _FOLDER[-1] if _FOLDER else WEIGHTS)
    if not path.exists() or not path.with_suffix(".threshold").exists():
        return None
    return Decision.load(path)


def lasting(text: str, rule_kind: str, row: Sequence[float], classes: Sequence[str]) -> bool | None:
    """Whether a line the rules judged `rule_kind` is lasting, or None with no shipped decision."""
    x = kind_features(text, rule_kind, row, classes)
    _record("kind", {"text": text, "rule": rule_kind, "x": x})
    model = decision("kinds")
    return None if model is None else model.says_yes(x)


def head_wins(fact: str, bullets: Sequence[str], cosines: Sequence[float], pinned: Sequence[bool], rule_kind: str,
              rule_index: int | None, views: Sequence[Judged], choice: Choice, p_durable: float,
              meaning: Sequence[float] | None) -> bool | None:
    """Whether the head's `choice` beats the rules' answer, or None with no shipped decision."""
    x = relation_features(fact, bullets, cosines, pinned, rule_kind, rule_index, views, choice, p_durable, meaning)
    _record("relation", {"text": fact, "rule": [rule_kind, rule_index], "head": [choice.kind, choice.index],
                         "bullets": list(bullets), "x": x})
    model = decision("relations")
    return None if model is None else model.says_yes(x)
