"""The arbiter: where the word rules and the learned heads disagree, which of them the dream believes.

The word rules read English well and little else; the heads read every language but miss what a
rule sees at once (a unit, a marker). Hand-set paths between the two (pools.HeadPolicy) fitted the
cases they were set on and not others. The arbiter learns the choice instead, from labelled
consolidation cases written for the project (corpus/cases; never the development cases): the real
dream runs over each case, every decision's evidence is recorded, and the case's labels say what
was right (arbiter_train.py). Two small models read that evidence:

- kinds (a logistic model): whether a line the rules find durable or cannot read, and that neither
  the secret scanner nor a to-do marker decided, is lasting — from the kind head's four
  probabilities, the rules' kind, and how much of the line the rules can read. Lines the rules hold
  back as status or events stay held: on the cases the rules are right there 0.85 of the time.
- relations (a small MLP): for a fact the rules call new, what it is to each candidate bullet —
  none of its business, a repeat, an update, or (a pin) a break — from what the fact is (change and
  sameness cues, how lasting the kind head finds it), how near the bullet is (both sentence models
  and its rank among the candidates), what the relation head says of the pair, and the pair's
  language-independent signals (values, names, negation, shared characters, the slot's new value, a
  numbered sibling). The likeliest related candidate is taken when that is at least the threshold.
  Where the rules found a repeat, an update or a conflict they stand: on the cases the head's other
  answer there was right 7 times in 22 (the first twelve cases).

Features are numbers in a fixed order (KIND_FEATURES, CANDIDATE_FEATURES); the models are
weights/arbiter-kinds.npz (heads.Head) and weights/arbiter-relations.npz (Network), each with its
threshold beside it (.threshold). The dream asks the arbiter only where the workspace's dream.arbiter
setting (or REVERIE_DREAM_ARBITER, for one run) says so — "kinds", "duplicates" (its repeats alone) or
"all"; pools.py says why none is the default — and its weights are there; otherwise it uses the
hand-set policy.

`RECORDER`, when set (arbiter.recording), is called with every decision's evidence, and no shipped
decision is used: `reverie bench arbiter --collect` (core/bench/arbiter_bench.collect) builds the
training rows that way.
"""
from __future__ import annotations

import contextlib
import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from core.dream.judgment import heads, pair_focus, persons_lines, pools, records, signals, word_relations
from core.dream.judgment.pools import Judged
from core.dream.judgment.wording import foreign, unbracketed

KIND_FEATURES = ("p_durable", "p_transient", "p_one_off", "p_secret", "rule_durable", "rule_transient",
                 "rule_one_off", "unread", "cjk_share", "long")
# The relation model reads every candidate bullet of a fact the rules call new, and gives each the
# probability that the fact is none of its business, repeats it, updates it, or breaks it (a pin).
RELATION_CLASSES = ("none", "duplicate", "update", "conflict")
_FREE, _PINNED = ("duplicate", "update"), ("conflict",)
FACT_FEATURES = ("unread", "change_cue", "sameness_cue", "p_durable", "candidates")
CANDIDATE_FEATURES = FACT_FEATURES + (
    "cosine", "cosine_rank", "meaning", "meaning_rank", "related", "sure_rank", "head_choice", "head_guess",
    "own_duplicate", "own_update", "own_refinement", "own_distinct", "own_conflict", "own_agreement",
    "restates_pin", "pinned", "new_value", "sibling", "why_not_replace", "other_language", "coverage", "fact_covered") + tuple(
    f"pair_{name}" for name in ("unit_change", "numbers_differ", "numbers_kept", "numbers_restated", "times_differ",
                                "dates_differ", "days_differ", "names_shared", "names_kept", "names_restated",
                                "bullet_negated", "fact_negated", "negation_differs", "longer", "shorter",
                                "grams_shared", "grams_kept", "grams_restated", "script_differs")) + tuple(
    f"record_{name}" for name in records.RECORD_SIGNALS) + ("cosine_margin", "meaning_margin")
# (the pair_ names are signals.pair_signals of the bullet at stake, in its order; the record_ names
# records.pair_signals: two records of one list look alike and are two facts. A margin is how far
# the bullet stands above the fact's other candidates: in an agent's log about one project every
# line is near every other, and nearness alone says little there)

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


def _ranks(values: Sequence[float]) -> list[float]:
    """0 for the highest value, 1 for the next, ... (capped at 10, scaled to 0..1)."""
    order = sorted(range(len(values)), key=lambda i: -values[i])
    rank = [0.0] * len(values)
    for r, i in enumerate(order):
        rank[i] = min(r, 10) / 10
    return rank


def _margins(values: Sequence[float]) -> list[float]:
    """Each value less the mean of the others (0 for a lone candidate)."""
    if len(values) < 2:
        return [0.0] * len(values)
    total = float(sum(values))
    return [float(v) - (total - float(v)) / (len(values) - 1) for v in values]


def candidate_features(fact: str, bullets: Sequence[str], cosines: Sequence[float], pinned: Sequence[bool],
                       views: Sequence[Judged], meaning: Sequence[float] | None, p_durable: float) -> np.ndarray:
    """One row per candidate bullet: what the fact is (its cues, how lasting the kind head finds it), how
    near the bullet is (both sentence models, and its rank among the candidates), what the relation head
    says of the pair (before its gate, and whether it is its choice or best guess), and the pair's
    language-independent signals (values, names, negation, shared characters)."""
    meaning = list(meaning) if meaning is not None else [0.0] * len(bullets)
    sure = [v.related * (1.0 - (v.own or v.mass).get("distinct", 0.0)) for v in views]
    choice, guess = pools.choose(views), pools.best_guess(views)
    fact_row = [float(signals.rules_unread(fact)), float(word_relations.has_change_cue(fact, any_language=True)),
                float(word_relations.has_sameness_cue(fact, any_language=True)), p_durable, min(len(bullets), 20) / 20]
    cosine_rank, meaning_rank, sure_rank = _ranks(list(cosines)), _ranks(meaning), _ranks(sure)
    cosine_margin, meaning_margin = _margins(list(cosines)), _margins(meaning)
    rows = []
    for i, (bullet, view) in enumerate(zip(bullets, views)):
        own = view.own or view.mass
        rows.append(fact_row + [
            float(cosines[i]), cosine_rank[i], float(meaning[i]), meaning_rank[i], view.related, sure_rank[i],
            float(choice.index == i), float(guess is not None and guess.index == i),
            own.get("duplicate", 0.0), own.get("update", 0.0), own.get("refinement", 0.0), own.get("distinct", 0.0),
            own.get("conflict", 0.0), own.get("agreement", 0.0), float(view.restates), float(pinned[i]),
            float(new_value(bullet, fact)), float(sibling(bullet, fact)),
            float(not pinned[i] and bool(persons_lines.why_not_replace(fact, bullet))),
            float(foreign(bullet) != foreign(fact)), persons_lines.coverage(fact, bullet),
            persons_lines.coverage(bullet, fact)]
            + [float(v) for v in signals.pair_signals(bullet, fact)]
            + [float(v) for v in records.pair_signals(bullet, fact)] + [cosine_margin[i], meaning_margin[i]])
    return np.asarray(rows, dtype=np.float32).reshape(len(bullets), len(CANDIDATE_FEATURES))


def pick(classes: Sequence[str], probabilities: np.ndarray, pinned: Sequence[bool]) -> tuple[int, str, float] | None:
    """(candidate, relation, probability that the fact relates to it) of the likeliest related candidate:
    a free bullet is repeated or updated, a pin broken (agreeing with a pin is no edit)."""
    best = None
    for i, row in enumerate(probabilities):
        allowed = [c for c in (_PINNED if pinned[i] else _FREE) if c in classes]
        if not allowed:
            continue
        related = sum(float(row[list(classes).index(c)]) for c in allowed)
        kind = max(allowed, key=lambda c: float(row[list(classes).index(c)]))
        if best is None or related > best[2]:
            best = (i, kind, related)
    return best


@dataclass(frozen=True)
class Network:
    """A small multilayer perceptron (one hidden layer of rectified units, a softmax over `classes`), its
    input standardisation folded into the first layer; read with numpy alone, like heads.Head."""
    classes: tuple[str, ...]
    hidden: np.ndarray          # (features, units)
    hidden_bias: np.ndarray     # (units,)
    out: np.ndarray             # (units, classes)
    out_bias: np.ndarray        # (classes,)

    def probabilities(self, x: np.ndarray) -> np.ndarray:
        h = np.maximum(np.asarray(x, dtype=np.float32) @ self.hidden + self.hidden_bias, 0.0)
        logits = h @ self.out + self.out_bias
        logits -= logits.max(axis=1, keepdims=True)
        exp = np.exp(logits)
        return exp / exp.sum(axis=1, keepdims=True)

    def save(self, path: Path) -> None:
        np.savez_compressed(path, classes=np.asarray(self.classes), hidden=self.hidden, hidden_bias=self.hidden_bias,
                            out=self.out, out_bias=self.out_bias)

    @classmethod
    def load(cls, path: Path) -> "Network":
        with np.load(path, allow_pickle=False) as data:
            return cls(tuple(str(c) for c in data["classes"]), *(data[k].astype(np.float32) for k in
                                                                  ("hidden", "hidden_bias", "out", "out_bias")))


def _load_model(path: Path):
    with np.load(path, allow_pickle=False) as data:
        network = "hidden" in data.files
    return Network.load(path) if network else heads.Head.load(path)


class Decision:
    """One learned decision: a model (heads.Head, or Network) over its classes and the threshold of its
    answer (kinds: the probability of "yes", lasting; relations: that the fact relates to a bullet)."""

    def __init__(self, head, threshold: float):
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
        return cls(_load_model(path), float(path.with_suffix(".threshold").read_text(encoding="utf-8")))


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


def related(fact: str, bullets: Sequence[str], cosines: Sequence[float], pinned: Sequence[bool],
            views: Sequence[Judged], meaning: Sequence[float] | None, p_durable: float) -> tuple[int, str, float] | None | bool:
    """For a fact the rules call new: (candidate, relation, probability) when the arbiter finds it repeats, updates or
    breaks one, None when it is new after all, False with no shipped decision."""
    x = candidate_features(fact, bullets, cosines, pinned, views, meaning, p_durable)
    _record("relation", {"text": fact, "bullets": list(bullets), "pinned": list(pinned),
                         "x": [[round(float(v), 4) for v in row] for row in x]})
    model = decision("relations")
    if model is None:
        return False
    best = pick(model.head.classes, model.head.probabilities(x), pinned)
    return None if best is None or best[2] < model.threshold else best
