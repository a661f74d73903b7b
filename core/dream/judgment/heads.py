"""The learned heads: a line's kind and a (bullet, line) pair's relation, from small linear models
trained on the labelled corpus (core/dream/judgment/train.py) and committed in weights/.

Each head is a multinomial logistic regression stored as an npz (class names, weights, intercept,
the sentence model it was trained with); prediction is one matrix product in numpy, so the dream
needs no scikit-learn. Two variants of each head are shipped: one that reads sentence vectors and
one that reads text alone (character n-grams and signals), used when the sentence model cannot
load (not installed, a test that runs without it).
"""
from __future__ import annotations

import functools
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from core.dream.judgment import features, signals

WEIGHTS = Path(__file__).resolve().parent / "weights"
KIND_HEAD, RELATION_HEAD, RELATED_HEAD = "kinds", "relations", "related"
GATE = 0.5          # below this probability of being about the same thing, a pair is distinct
# A fact kept by mistake costs a review click, a fact lost costs the memory: a line is held back as
# transient or one-off only when the head prefers that kind to durable by this much (secrets: always).
DURABLE_MARGIN = 0.25


PINNED_CLASSES = ("conflict", "agreement", "distinct")
FREE_CLASSES = ("duplicate", "update", "refinement", "distinct")


def allowed_classes(pinned: bool) -> tuple[str, ...]:
    """A pinned bullet is agreed with, broken, or unrelated; a free one is repeated, updated, refined, or not."""
    return PINNED_CLASSES if pinned else FREE_CLASSES


# The same cost argument for a relation: a wrong duplicate or update loses a fact (or a bullet), a
# missed one adds a line a person can merge. A free bullet's duplicate/update/refinement must beat
# "distinct" by this much (for a pin, conflict holds the fact for a person anyway).
RELATED_MARGIN = 0.15


def decide_relation(mass: dict[str, float], pinned: bool) -> str:
    """The relation a head's probabilities (over the classes allowed for the bullet) decide."""
    best = max(mass, key=mass.get)
    if not pinned and best != "distinct" and mass[best] - mass.get("distinct", 0.0) < RELATED_MARGIN:
        return "distinct"
    return best


def decide_kind(classes: Sequence[str], row: np.ndarray) -> int:
    """The index of the kind a row of probabilities decides."""
    best = int(row.argmax())
    if "durable" in classes and classes[best] not in ("durable", "secret"):
        durable = classes.index("durable")
        if row[best] - row[durable] < DURABLE_MARGIN:
            return durable
    return best


@dataclass(frozen=True)
class Head:
    classes: tuple[str, ...]
    coef: np.ndarray            # (classes, features)
    intercept: np.ndarray       # (classes,)
    model: str                  # the sentence model whose vectors it reads ("" for text alone)

    def probabilities(self, x: np.ndarray) -> np.ndarray:
        logits = np.asarray(x, dtype=np.float32) @ self.coef.T + self.intercept
        logits -= logits.max(axis=1, keepdims=True)
        exp = np.exp(logits)
        return exp / exp.sum(axis=1, keepdims=True)

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(path, classes=np.asarray(self.classes), coef=self.coef.astype(np.float32),
                            intercept=self.intercept.astype(np.float32), model=np.asarray(self.model))

    @classmethod
    def load(cls, path: Path) -> "Head":
        with np.load(path, allow_pickle=False) as data:
            return cls(tuple(str(c) for c in data["classes"]), data["coef"].astype(np.float32),
                       data["intercept"].astype(np.float32), str(data["model"]))


def head_path(name: str, text_only: bool, folder: Path = WEIGHTS) -> Path:
    return folder / f"{name}{'-text' if text_only else ''}.npz"


@functools.lru_cache(maxsize=8)
def load_head(name: str, text_only: bool) -> Head:
    return Head.load(head_path(name, text_only))


class Vectors:
    """Sentence vectors for the heads, from the model they were trained with, loaded once per
    process; None when that model cannot load (the text-only heads decide then)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._embed = None
        self._failed = False
        self._memo: dict[str, np.ndarray] = {}

    def _embedder(self, model: str):
        with self._lock:
            if self._embed is None and not self._failed:
                try:
                    from core.index.embedding import default_embedder

                    embedder = default_embedder(model)
                    embedder.embed_batch(["warm up"])
                    self._embed = embedder.embed_batch
                except Exception:      # not installed or broken: text alone
                    self._failed = True
            return self._embed

    def of(self, texts: Sequence[str], model: str) -> np.ndarray | None:
        embed = self._embedder(model)
        if embed is None:
            return None
        todo = [t for t in dict.fromkeys(texts) if t not in self._memo]
        if todo:
            for text, vector in zip(todo, np.asarray(embed(todo), dtype=np.float32)):
                self._memo[text] = vector
            if len(self._memo) > 50_000:
                self._memo = {t: self._memo[t] for t in texts}
        return np.asarray([self._memo[t] for t in texts], dtype=np.float32)

    def use(self, embed) -> None:
        """Vectors from another embedder of the same model (a test's, a child process relay)."""
        with self._lock:
            self._embed, self._failed, self._memo = embed, embed is None, {}


VECTORS = Vectors()


def _pick(name: str) -> tuple[Head, bool]:
    full = load_head(name, False)
    return full, VECTORS._embedder(full.model) is None


def kind_probabilities(texts: Sequence[str]) -> tuple[tuple[str, ...], np.ndarray]:
    texts = [signals.body(t) for t in texts]        # as trained: no list marker, no time stamp
    head, text_only = _pick(KIND_HEAD)
    if text_only:
        head = load_head(KIND_HEAD, True)
        x = features.line_features(texts, None)
    else:
        x = features.line_features(texts, VECTORS.of(list(texts), head.model))
    return head.classes, head.probabilities(x)


def meaning_cosines(text: str, others: Sequence[str]) -> np.ndarray | None:
    """Cosines of `text` with each of `others` under the relation head's own sentence model (a
    multilingual one), or None when it cannot load. The dream's embedder is English-only: short
    unrelated Chinese lines score near 1.0 there, so it cannot say which bullet a Chinese fact is about."""
    if not others:
        return np.zeros(0, dtype=np.float32)
    head, text_only = _pick(RELATION_HEAD)
    if text_only:
        return None
    vectors = VECTORS.of([signals.body(text)] + [signals.body(t) for t in others], head.model)
    return vectors[1:] @ vectors[0]


def relation_probabilities(bullets: Sequence[str], lines: Sequence[str], pinned: Sequence[bool]):
    """(classes, probabilities of each relation, probability that the pair is about one thing at all)."""
    bullets, lines = [signals.body(t) for t in bullets], [signals.body(t) for t in lines]
    head, text_only = _pick(RELATION_HEAD)
    if text_only:
        head = load_head(RELATION_HEAD, True)
        x = features.pair_features(bullets, lines, None, None, pinned)
    else:
        vb = VECTORS.of(list(bullets), head.model)
        vl = VECTORS.of(list(lines), head.model)
        x = features.pair_features(bullets, lines, vb, vl, pinned)
    gate = load_head(RELATED_HEAD, text_only)
    return head.classes, head.probabilities(x), gate.probabilities(x)[:, gate.classes.index("related")]
