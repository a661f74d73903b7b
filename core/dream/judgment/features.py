"""Feature vectors for the learned heads (core/dream/judgment/heads.py), and the sentence vectors
they are built from, cached by content hash so training and the bench embed each text once.

A line's features: its sentence vector, its hashed character n-grams, its shape signals and the
word rules' evidence (word_kinds.rule_signals: leave one domain out, the head with them keeps more
durable lines and lets fewer transient ones through; docs/benchmarks.md).
A pair's features: [u, v, |u−v|, u·v] of the two sentence vectors, their cosine, the
language-independent pair signals, those of the clause of the line that shares the bullet's subject
and whether the two name different subjects (pair_focus.py), and the hashed n-grams the line has and the bullet lacks
(what is new in the line: a change word, a new value) and the other way round; and, for a pinned
bullet only, the rule's polarity crossed with the line's (polarity.py: zeros for a free bullet, so
they move only the conflict / agreement / distinct decision).
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from core.dream.judgment import pair_focus, polarity, signals, word_kinds

PAIR_SLOTS = 1024
Embed = Callable[[list[str]], np.ndarray]


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "reverie" / "judgment"


def text_key(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


class VectorStore:
    """Sentence vectors of one model, keyed by the sha1 of the text, in an npz file."""

    def __init__(self, model: str, embed: Embed | None = None, path: Path | None = None):
        self.model = model
        self.embed = embed
        self.path = path or cache_dir() / f"vectors-{model}.npz"
        self.vectors: dict[str, np.ndarray] = {}
        self.dirty = False
        try:
            with np.load(self.path, allow_pickle=False) as data:
                self.vectors = dict(zip((str(k) for k in data["keys"]), data["vectors"]))
        except (FileNotFoundError, OSError, KeyError, ValueError):
            self.vectors = {}

    def get(self, texts: Sequence[str]) -> np.ndarray:
        todo = list(dict.fromkeys(t for t in texts if text_key(t) not in self.vectors))
        if todo:
            if self.embed is None:
                from core.index.embedders import in_process_embedder

                self.embed = in_process_embedder(self.model).embed_batch
            for start in range(0, len(todo), 256):
                chunk = todo[start:start + 256]
                for text, vector in zip(chunk, np.asarray(self.embed(chunk), dtype=np.float32)):
                    self.vectors[text_key(text)] = vector
            self.dirty = True
        return np.asarray([self.vectors[text_key(t)] for t in texts], dtype=np.float32)

    def save(self) -> None:
        if not self.dirty:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        keys = sorted(self.vectors)
        tmp = self.path.with_suffix(".tmp.npz")
        np.savez(tmp, keys=np.asarray(keys), vectors=np.asarray([self.vectors[k] for k in keys], dtype=np.float32))
        tmp.replace(self.path)
        self.dirty = False


def line_features(texts: Sequence[str], vectors: np.ndarray | None) -> np.ndarray:
    rows = []
    for i, text in enumerate(texts):
        parts = [signals.hashed(signals.ngrams(text.strip())), signals.line_signals(text),
                 np.asarray(word_kinds.rule_signals(text), dtype=np.float32)]
        if vectors is not None:
            parts.insert(0, vectors[i])
        rows.append(np.concatenate(parts))
    return np.asarray(rows, dtype=np.float32)


def pair_features(bullets: Sequence[str], lines: Sequence[str], vb: np.ndarray | None,
                  vl: np.ndarray | None, pinned: Sequence[bool] | None = None) -> np.ndarray:
    rows = []
    for i, (bullet, line) in enumerate(zip(bullets, lines)):
        # A log line's own clock stamp is no value of its fact (the dream's extraction drops it too).
        bullet, line = signals.unstamped(bullet), signals.unstamped(line)
        gb, gl = signals.ngrams(bullet), signals.ngrams(line)
        pin = np.asarray([float(bool(pinned[i])) if pinned is not None else 0.0], dtype=np.float32)
        parts = [pin, signals.pair_signals(bullet, line), pair_focus.focus_signals(bullet, line),
                 signals.hashed(gl - gb, PAIR_SLOTS), signals.hashed(gb - gl, PAIR_SLOTS),
                 polarity.pair_polarity(bullet, line) * pin[0]]
        if vb is not None and vl is not None:
            u, v = vb[i], vl[i]
            parts = [u, v, np.abs(u - v), u * v, np.asarray([float(u @ v)], dtype=np.float32)] + parts
        rows.append(np.concatenate(parts))
    return np.asarray(rows, dtype=np.float32)
