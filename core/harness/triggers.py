"""Tier 4 triggers: when a context has gone bad even though it still fits.

The memory-engineering article restarts an agent from what is on disk not only when
compaction cannot fit the window (core/harness/policy.py) but also when:

- it has drifted: the anchor's goal no longer shares meaning with any of the last
  `drift_steps` steps (cosine under `drift_threshold` with all-MiniLM-L6-v2; word
  overlap when the embedding model cannot load);
- its context is polluted by a wrong assumption: the same error came back
  `error_repeats` times (a tool error, or an invalid action);
- the task has run more than `max_hours` since it started or last restarted.

`check` names the first trigger that fires ("" for none); the agent then restarts
(HarnessAgent.restart) and calls `reset`.
"""
from __future__ import annotations

import time
from collections import Counter, deque
from typing import Callable

from core.config import RestartSettings
from core.dream.judgment.similarity import lexical

Score = Callable[[str, str], float]


def embedding_score(model: str = "") -> Score:
    """Cosine of two texts with the shared embedder; word overlap when it cannot load."""
    try:
        from core.index.embedding import default_embedder

        embedder = default_embedder(model)
    except Exception:   # not installed, model files missing, torch broken: words instead
        return lexical
    cache: dict[str, object] = {}

    def score(a: str, b: str) -> float:
        todo = [t for t in dict.fromkeys((a, b)) if t not in cache]
        if todo:
            for text, vector in zip(todo, embedder.embed_batch(todo)):
                cache[text] = vector
        if len(cache) > 512:
            cache.clear()
            return score(a, b)
        return float(cache[a].dot(cache[b]))
    return score


def normalise_error(error: str) -> str:
    return " ".join(error.lower().split())[:300]


class RestartTriggers:
    def __init__(self, settings: RestartSettings, *, score: Score | None = None,
                 clock: Callable[[], float] = time.monotonic):
        self.settings = settings
        self.clock = clock
        self._score = score
        self.started = clock()
        self.steps: deque[str] = deque(maxlen=max(1, settings.drift_steps))
        self.errors: Counter[str] = Counter()

    @property
    def score(self) -> Score:
        if self._score is None:
            self._score = embedding_score()
        return self._score

    def record(self, step: str, error: str = "") -> None:
        """One step of the agent: what it worked on and did, and the error it met ("" for none)."""
        if step.strip():
            self.steps.append(" ".join(step.split())[:600])
        if error.strip():
            self.errors[normalise_error(error)] += 1

    def check(self, goal: str) -> str:
        """Why the agent must restart now ("" when it need not)."""
        s = self.settings
        hours = (self.clock() - self.started) / 3600
        if s.max_hours and hours > s.max_hours:
            return f"elapsed: the task has run {hours:.1f} h, over {s.max_hours:g} h"
        if s.error_repeats:
            error, times = next(iter(self.errors.most_common(1)), ("", 0))
            if times >= s.error_repeats:
                return f"pollution: the same error {times} times ({error[:160]})"
        if goal.strip() and s.drift_steps and len(self.steps) >= s.drift_steps:
            best = max(self.score(goal, step) for step in self.steps)
            if best < s.drift_threshold:
                return (f"drift: none of the last {len(self.steps)} steps shares meaning with the goal "
                        f"({goal[:120]}); best cosine {best:.2f} < {s.drift_threshold:g}")
        return ""

    def reset(self) -> None:
        self.started = self.clock()
        self.steps.clear()
        self.errors.clear()
