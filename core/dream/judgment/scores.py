"""Scores of predicted labels against the corpus' labels: precision, recall, F1, confusion."""
from __future__ import annotations

from collections import Counter
from typing import Sequence


def per_class(truth: Sequence[str], predicted: Sequence[str], classes: Sequence[str]) -> dict[str, dict[str, float]]:
    out = {}
    for c in classes:
        tp = sum(t == c and p == c for t, p in zip(truth, predicted))
        fp = sum(t != c and p == c for t, p in zip(truth, predicted))
        fn = sum(t == c and p != c for t, p in zip(truth, predicted))
        precision = tp / (tp + fp) if tp + fp else 0.0
        recall = tp / (tp + fn) if tp + fn else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        out[c] = {"precision": precision, "recall": recall, "f1": f1, "support": tp + fn}
    return out


def macro_f1(truth: Sequence[str], predicted: Sequence[str], classes: Sequence[str]) -> float:
    """Mean F1 over the classes that occur in `truth` (a class absent from a slice does not count)."""
    scores = per_class(truth, predicted, classes)
    present = [c for c in classes if scores[c]["support"]]
    return sum(scores[c]["f1"] for c in present) / len(present) if present else 0.0


def confusion(truth: Sequence[str], predicted: Sequence[str], classes: Sequence[str]) -> list[list[int]]:
    counts = Counter(zip(truth, predicted))
    return [[counts[(t, p)] for p in classes] for t in classes]


def confusion_table(truth: Sequence[str], predicted: Sequence[str], classes: Sequence[str]) -> str:
    """A markdown table: rows are the labels, columns what was predicted."""
    rows = ["| label \\ predicted | " + " | ".join(classes) + " |", "|---" * (len(classes) + 1) + "|"]
    for c, counts in zip(classes, confusion(truth, predicted, classes)):
        rows.append(f"| {c} | " + " | ".join(str(n) for n in counts) + " |")
    return "\n".join(rows)
