"""The promotion decision of `reverie bench judgment`: which lines each kind judgment would promote,
with the kind head trained leave-one-domain-out (each line's probabilities come from the head that
never saw its domain; the word rules were never fitted to the corpus).

For the rules, the head alone and "both" (kinds.judge_both: to-do markers, CJK lines by the head,
the veto on the rest) at several veto thresholds, it prints durable
precision and recall (recall: the share of durable lines promoted) and the leaks (the share of
transient and one-off lines promoted). kinds.VETO_P was chosen on this table: the lowest threshold
of VETOES whose durable recall is at least 0.99.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from core.dream.judgment import heads, kinds, word_kinds


VETOES = (0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95)


def decisions(texts: Sequence[str], probs: np.ndarray, classes: Sequence[str]) -> dict[str, list[str]]:
    """The kind each judgment gives each line."""
    rules = [word_kinds.classify_fact(t) for t in texts]

    def both(veto_p: float) -> list[str]:
        # the dream's own decision (kinds.judge_both): markers, CJK lines by the head, the veto
        return [kinds.judge_both(t, rule, row if kinds.needs_head(t, rule) else None, classes, veto_p).kind
                for t, rule, row in zip(texts, rules, probs)]

    out = {"rules": [r.kind for r in rules], "head": [classes[heads.decide_kind(classes, row)] for row in probs]}
    for veto_p in sorted(set(VETOES) | {kinds.VETO_P}):
        out[f"both, veto p>={veto_p}" + (" (shipped)" if veto_p == kinds.VETO_P else "")] = both(veto_p)
    return out


def promotion(truth: Sequence[str], predicted: Sequence[str]) -> dict[str, float]:
    truth, predicted = np.asarray(truth), np.asarray(predicted)
    promoted, durable = predicted == kinds.DURABLE, truth == kinds.DURABLE

    def leak(kind: str) -> float:
        return float((promoted & (truth == kind)).sum() / max((truth == kind).sum(), 1))

    hits = float((promoted & durable).sum())
    return {"durable_precision": hits / max(promoted.sum(), 1), "durable_recall": hits / max(durable.sum(), 1),
            "transient_leak": leak(kinds.TRANSIENT), "one_off_leak": leak(kinds.ONE_OFF)}


def table(truth: Sequence[str], texts: Sequence[str], probs: np.ndarray, classes: Sequence[str]) -> dict:
    return {name: promotion(truth, predicted) for name, predicted in decisions(texts, probs, classes).items()}


def report(figures: dict) -> str:
    out = ["## promotion (kind judgments, kind head left out by domain)",
           "| judgment | durable precision | durable recall | transient_leak | one_off_leak |", "|---|---|---|---|---|"]
    out += [f"| {name} | {v['durable_precision']:.3f} | {v['durable_recall']:.3f} | {v['transient_leak']:.3f} | "
            f"{v['one_off_leak']:.3f} |" for name, v in figures.items()]
    return "\n".join(out) + "\n"
