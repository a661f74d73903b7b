"""The promotion decision of `reverie bench judgment`: which lines each kind judgment would promote,
with the kind head trained leave-one-domain-out (each line's probabilities come from the head that
never saw its domain; the word rules were never fitted to the corpus).

For the rules, the head alone and "both" (kinds.judge_both: to-do markers, CJK lines by the head,
the veto on the rest) at several veto thresholds, it prints durable
precision and recall (recall: the share of durable lines promoted) and the leaks (the share of
transient and one-off lines promoted), on all lines and on the lines where the veto decides.
kinds.VETO_P was chosen on the second table (chosen_veto): the lowest threshold of VETOES whose
durable recall there is within RECALL_COST of the word rules' own.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from core.dream.judgment import heads, kinds, signals, word_kinds


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


def veto_table(truth: Sequence[str], texts: Sequence[str], probs: np.ndarray, classes: Sequence[str]) -> dict:
    """The table on the lines where the veto decides: those the word rules can read (a mostly-CJK line
    is the head's alone, whatever the veto) and that carry no to-do marker."""
    keep = [i for i, t in enumerate(texts) if not signals.rules_unread(t) and not kinds.marked_todo(t)]
    return table([truth[i] for i in keep], [texts[i] for i in keep], np.asarray(probs)[keep], classes)


# kinds.VETO_P's rule: the veto may cost at most this much durable recall, leave one domain out, against
# the word rules alone on the lines it decides (a fact lost costs the memory, one kept a review click).
RECALL_COST = 0.01


def chosen_veto(read: dict) -> float | None:
    """The lowest veto threshold of VETOES whose durable recall on the lines the veto decides (veto_table)
    is within RECALL_COST of the rules' own there; None when none is."""
    floor = read["rules"]["durable_recall"] - RECALL_COST
    for veto_p in sorted(VETOES):
        name = next(n for n in read if n.startswith(f"both, veto p>={veto_p}"))
        if read[name]["durable_recall"] >= floor - 1e-9:
            return veto_p
    return None


def _rows(figures: dict) -> list[str]:
    out = ["| judgment | durable precision | durable recall | transient_leak | one_off_leak |", "|---|---|---|---|---|"]
    return out + [f"| {name} | {v['durable_precision']:.3f} | {v['durable_recall']:.3f} | {v['transient_leak']:.3f} | "
                  f"{v['one_off_leak']:.3f} |" for name, v in figures.items()]


def report(figures: dict, read: dict | None = None) -> str:
    out = ["## promotion (kind judgments, kind head left out by domain)"] + _rows(figures)
    if read:
        out += ["", "## promotion on the lines where the veto decides (the rules read them, no to-do marker)"]
        out += _rows(read)
        out.append(f"veto rule (durable recall within {RECALL_COST} of the rules' there): p>={chosen_veto(read)}; "
                   f"shipped p>={kinds.VETO_P}")
    return "\n".join(out) + "\n"
