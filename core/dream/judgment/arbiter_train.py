"""Train the arbiter (arbiter.py) from the labelled cases in corpus/cases and write its weights.

    python -m core.dream.judgment.arbiter_train [--collect] [--cases DIR] [--out DIR]

Two steps. `--collect` runs the real dream ("both", no model) over every case with the arbiter's
decisions off, records the evidence of every kind decision and every disagreement between the word
rules and the relation head (arbiter.RECORDER), labels each from the case's labels.json, and writes
the rows to corpus/cases/rows.jsonl (minutes: one dream per case). Without it the rows already
there are read. Then two logistic models are fitted (deterministic: the same rows give the same
weights), leave one case out first to choose each threshold and report how they do on cases they
were not fitted on, then on every row for the weights that ship.

A row's label: for a kind, whether the line is lasting (durable, duplicate, update, pinned conflict)
or not (transient, one-off); for a relation, whether the head's answer is the right one where the
two differ (where both are wrong, taking the head's is no better: it replaces or hides a bullet
for nothing, so the row says no) (a duplicate: the bullet that holds the item's keywords, repeated or
rewritten; an update: the bullet holding the old keywords, replaced; a durable line: new; a pinned
conflict: a conflict). Rows whose item is a secret, or whose right bullet is not among the candidates,
teach nothing and are left out.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Sequence

import numpy as np

from core.dream.judgment import arbiter, dataset
from core.dream.judgment.heads import Head

CASES = dataset.CORPUS / "cases"
ROWS = "rows.jsonl"
C = 1.0
LASTING = {"durable", "duplicate", "update", "pinned_conflict"}
PASSING = {"transient", "one_off"}
# The kind threshold: a lasting fact lost costs the memory, a to-do kept costs a review click, so the
# threshold is the highest on the grid that keeps at least KEEP_RECALL of the lasting lines, leave one
# case out. The relation threshold: the lowest at which the head's answers the arbiter takes are right
# at least TAKE_PRECISION of the time, leave one case out (a wrong take loses a bullet or a fact).
KEEP_RECALL = 0.97
TAKE_PRECISION = 0.9
GRID = tuple(round(x, 2) for x in np.arange(0.05, 0.96, 0.05))


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def _item_of(text: str, items: Sequence[dict]) -> dict | None:
    said = _norm(text)
    for item in items:
        own = _norm(item["text"])
        if own and (own in said or said in own):
            return item
    return None


def _holds(bullet: str, keywords: Sequence[str]) -> bool:
    bullet = _norm(bullet)
    return bool(keywords) and all(k.casefold() in bullet for k in keywords)


def _right(answer: tuple[str, int | None], item: dict, bullets: Sequence[str]) -> bool | None:
    """Whether (relation, candidate index) is right for the item; None when no answer can be (the
    right bullet is not among the candidates)."""
    kind, index = answer
    if item["kind"] == "durable":
        return kind == "new"
    if item["kind"] == "pinned_conflict":
        return kind == "conflict"
    keys = item.get("old") if item["kind"] == "update" else item.get("expect")
    gold = {i for i, b in enumerate(bullets) if _holds(b, keys or ())}
    if not gold:
        return None
    if item["kind"] == "update":
        return kind == "update" and index in gold
    return kind in ("duplicate", "update") and index in gold


def label_rows(case: str, records: Sequence[tuple[str, dict]], labels: dict) -> list[dict]:
    """Training rows from one dream's recorded evidence and the case's labels."""
    items, rows, seen = labels["items"], [], {}
    for what, evidence in records:
        item = _item_of(evidence["text"], items)
        if item is None or item["kind"] == "secret":
            continue
        if what == "kind":
            if item["kind"] in LASTING | PASSING:
                seen[("kind", evidence["text"])] = {"case": case, "task": "kinds", "x": evidence["x"],
                                                    "y": int(item["kind"] in LASTING), "item": item["kind"]}
            continue
        head = _right(tuple(evidence["head"]), item, evidence["bullets"])
        rule = _right(tuple(evidence["rule"]), item, evidence["bullets"])
        if head is None or rule is None or (head and rule):
            continue
        # the last judgment of a fact stands (gather's rescue of held lines comes before consolidate's)
        seen[("relation", evidence["text"])] = {"case": case, "task": "relations", "x": evidence["x"],
                                                "y": int(head), "item": item["kind"]}
    rows.extend(seen.values())
    return rows


def collect(cases: Sequence[Path]) -> list[dict]:
    """Run the dream over each case, recording and labelling its evidence."""
    from core.bench._consolidation_dream import case_clock, dream_case

    rows: list[dict] = []
    for case in cases:
        labels = json.loads((case / "labels.json").read_text(encoding="utf-8"))
        records: list[tuple[str, dict]] = []
        with arbiter.recording(lambda what, evidence: records.append((what, evidence))), \
                tempfile.TemporaryDirectory() as tmp:
            run = dream_case(case, Path(tmp) / "MEMORY.md", None, case_clock(labels["now"]), judgment="both")
        if not run.ok:
            raise dataset.CorpusError(f"{case.name}: the dream failed: {run.error}")
        found = label_rows(case.name, records, labels)
        print(f"{case.name}: {sum(r['task'] == 'kinds' for r in found)} kind rows, "
              f"{sum(r['task'] == 'relations' for r in found)} relation rows", file=sys.stderr)
        rows.extend(found)
    return rows


def read_rows(path: Path) -> list[dict]:
    rows = []
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if raw.strip():
            try:
                rows.append(json.loads(raw))
            except json.JSONDecodeError as exc:
                raise dataset.CorpusError(f"{path}:{number}: not JSON ({exc.msg})") from exc
    return rows


def fit(x: np.ndarray, y: np.ndarray) -> Head:
    """A logistic model with the standardisation folded into its weights (classes "no", "yes")."""
    from sklearn.linear_model import LogisticRegression

    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0
    model = LogisticRegression(C=C, max_iter=2000).fit((x - mean) / scale, y)
    coef = model.coef_[0] / scale
    intercept = model.intercept_[0] - float(coef @ mean)
    # two classes as a softmax over (no, yes): logits 0 and w.x + b
    return Head(("no", "yes"), np.stack([np.zeros_like(coef), coef]).astype(np.float32),
                np.asarray([0.0, intercept], dtype=np.float32), "")


def out_of_case(rows: Sequence[dict]) -> np.ndarray:
    """Each row's probability of "yes" from a model fitted on the other cases' rows."""
    cases = np.asarray([r["case"] for r in rows])
    x = np.asarray([r["x"] for r in rows], dtype=np.float64)
    y = np.asarray([r["y"] for r in rows])
    p = np.zeros(len(rows))
    for case in sorted(set(cases)):
        held = cases == case
        if len(set(y[~held])) < 2:
            p[held] = y[~held].mean() if (~held).any() else 0.5
            continue
        p[held] = fit(x[~held], y[~held]).probabilities(x[held])[:, 1]
    return p


def kind_threshold(y: np.ndarray, p: np.ndarray) -> float:
    """The highest threshold of GRID that keeps at least KEEP_RECALL of the lasting lines."""
    lasting = y == 1
    ok = [t for t in GRID if (p[lasting] >= t).mean() >= KEEP_RECALL]
    return max(ok) if ok else GRID[0]


def relation_threshold(y: np.ndarray, p: np.ndarray) -> float:
    """The lowest threshold of GRID at which the answers taken are right at least TAKE_PRECISION."""
    for t in GRID:
        taken = p >= t
        if taken.sum() >= 5 and y[taken].mean() >= TAKE_PRECISION:
            return t
    return 1.01


def report(task: str, rows: Sequence[dict], p: np.ndarray, threshold: float) -> list[str]:
    """Leave-one-case-out figures at the threshold, beside what the rules alone and the head alone give."""
    y = np.asarray([r["y"] for r in rows])
    yes = p >= threshold
    lines = [f"arbiter {task}: {len(rows)} rows from {len({r['case'] for r in rows})} cases, "
             f"threshold {threshold:.2f} (leave one case out)"]
    if task == "kinds":
        items = np.asarray([r["item"] for r in rows])
        for kind in sorted(set(items)):
            mine = items == kind
            lines.append(f"  {kind:16s} n={mine.sum():4d} kept={yes[mine].mean():.3f}")
    else:
        lines.append(f"  head right {y.mean():.3f} of the disagreements; taken {yes.sum()} "
                     f"(right {y[yes].mean() if yes.any() else 0:.3f}); left to the rules {(~yes).sum()} "
                     f"(rules right {1 - y[~yes].mean() if (~yes).any() else 0:.3f})")
        lines.append(f"  decisions right: arbiter {(yes == (y == 1)).mean():.3f}, rules alone {1 - y.mean():.3f}, "
                     f"head alone {y.mean():.3f}")
    return lines


def fit_decisions(rows: Sequence[dict]) -> tuple[dict[str, arbiter.Decision], list[str]]:
    """Both decisions fitted on `rows`, each threshold chosen leave one case out among them, and the report."""
    decisions, lines = {}, []
    for task, choose in (("kinds", kind_threshold), ("relations", relation_threshold)):
        mine = [r for r in rows if r["task"] == task]
        if not mine:
            raise dataset.CorpusError(f"no {task} rows to learn from")
        y = np.asarray([r["y"] for r in mine])
        p = out_of_case(mine)
        threshold = choose(y, p)
        lines += report(task, mine, p, threshold)
        decisions[task] = arbiter.Decision(fit(np.asarray([r["x"] for r in mine], dtype=np.float64), y), threshold)
    return decisions, lines


def train(rows: Sequence[dict], out: Path) -> list[str]:
    """Fit both decisions, write them to `out`, and return the report."""
    decisions, lines = fit_decisions(rows)
    for task, decision in decisions.items():
        decision.save(arbiter.decision_path(task, out))
    arbiter._shipped.cache_clear()
    return lines


def case_folders(cases: Path = CASES) -> list[Path]:
    return sorted(p for p in cases.iterdir() if (p / "labels.json").exists())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.dream.judgment.arbiter_train", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--collect", action="store_true", help="run the dream over the cases first (minutes)")
    parser.add_argument("--cases", type=Path, default=CASES)
    parser.add_argument("--out", type=Path, default=arbiter.WEIGHTS)
    args = parser.parse_args(argv)
    path = args.cases / ROWS
    if args.collect:
        rows = collect(case_folders(args.cases))
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    for line in train(read_rows(path), args.out):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
