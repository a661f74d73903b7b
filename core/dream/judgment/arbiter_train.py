"""Train the arbiter (arbiter.py) from the rows of the labelled cases in corpus/cases and write its weights.

    python -m core.dream.judgment.arbiter_train [--cases DIR] [--out DIR]

The rows (corpus/cases/rows.jsonl.gz) are what the real dream saw on each case and what the case's
labels say was right; `reverie bench arbiter --collect` makes them again (core/bench/arbiter_bench.py:
the dream is a layer above this module). Two models are fitted from them (deterministic: the same rows
give the same weights), leave one case out first to choose each threshold and report how they do on
cases they were not fitted on, then on every row for the weights that ship.

A row's label: for a kind, whether the line is lasting (durable, duplicate, update, pinned conflict)
or not (transient, one-off); for a relation, what the fact is to each candidate bullet: the one
holding a duplicate's keywords is repeated, the one holding an update's old keywords updated, the
pin a conflict names broken, any other none of its business. A durable line is about no bullet, and
so is a to-do or an event the kinds let through (taking it as a repeat or update of one is wrong: a
status line replacing a person's setting). Rows whose item is a secret, or whose right bullet is
not among the candidates, teach nothing and are left out.
"""
from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path
from typing import Sequence

import numpy as np

from core.dream.judgment import arbiter, dataset
from core.dream.judgment.heads import Head

CASES = dataset.CORPUS / "cases"
ROWS = "rows.jsonl.gz"
C = 1.0
LASTING = {"durable", "duplicate", "update", "pinned_conflict"}
PASSING = {"transient", "one_off"}
# The kind threshold: a lasting fact lost costs the memory, a to-do kept costs a review click, so the
# threshold is the highest on the grid that keeps at least KEEP_RECALL of the lasting lines, leave one
# case out. The relation threshold: the lowest at which the head's answers the arbiter takes are right
# at least TAKE_PRECISION of the time, leave one case out (a wrong take loses a bullet or a fact).
KEEP_RECALL = 0.97
TAKE_PRECISION = 0.9
TASKS = ("kinds", "relations")
# The relation decision is a small MLP: it reads interactions a linear model cannot (a change cue matters
# on the bullet the head finds updated, not on its neighbours). Leave one case out, at the same precision of
# its takes, it found 92 updates against a linear model's 78 (docs/benchmarks.md).
HIDDEN, ALPHA, SEED = 32, 1.0, 0
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


def _gold(item: dict, bullets: Sequence[str], pinned: Sequence[bool]) -> list[str] | None:
    """What the fact is to each candidate (arbiter.RELATION_CLASSES); None when the bullet it repeats,
    updates or breaks is not among them (nothing to learn there)."""
    gold = ["none"] * len(bullets)
    if item["kind"] in ("durable", "transient", "one_off"):
        return gold
    if item["kind"] == "pinned_conflict":
        pin = _norm(item.get("pinned", ""))
        marks = [i for i, b in enumerate(bullets) if pinned[i] and pin and (_norm(b) in pin or pin in _norm(b))]
        kind = "conflict"
    else:
        keys = item.get("old") if item["kind"] == "update" else item.get("expect")
        marks = [i for i, b in enumerate(bullets) if not pinned[i] and _holds(b, keys or ())]
        kind = item["kind"]
    for i in marks:
        gold[i] = kind
    return gold if marks else None


def right(take: tuple[int, str] | None, gold: Sequence[str]) -> bool:
    """Whether a take (or None: the fact is new) is right: new for a fact about nothing there, else its
    relation to the bullet it has (an update of a bullet the fact only repeats is wrong: the person's
    words give way to the fact's)."""
    if take is None:
        return all(g == "none" for g in gold)
    index, kind = take
    return gold[index] != "none" and kind == gold[index]


def label_rows(case: str, records: Sequence[tuple[str, dict]], labels: dict) -> list[dict]:
    """Training rows from one dream's recorded evidence and the case's labels (the last judgment of a
    fact stands: gather's rescue of held lines comes before consolidate)."""
    items, seen = labels["items"], {}
    for what, evidence in records:
        item = _item_of(evidence["text"], items)
        if item is None or item["kind"] == "secret":
            continue
        if what == "kind":
            if item["kind"] in LASTING | PASSING:
                seen[("kind", evidence["text"])] = {"case": case, "task": "kinds", "x": evidence["x"],
                                                    "y": int(item["kind"] in LASTING), "item": item["kind"]}
            continue
        gold = _gold(item, evidence["bullets"], evidence["pinned"])
        if gold is not None:
            seen[("relation", evidence["text"])] = {"case": case, "task": "relations", "x": evidence["x"],
                                                    "gold": gold, "pinned": evidence["pinned"], "item": item["kind"]}
    return list(seen.values())


def write_rows(path: Path, rows: Sequence[dict]) -> None:
    """The rows as gzipped JSON lines, byte for byte the same for the same rows (no time stamp)."""
    data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8")
    path.write_bytes(gzip.compress(data, mtime=0))


def read_rows(path: Path) -> list[dict]:
    if not path.exists():
        raise dataset.CorpusError(f"{path}: no rows; run reverie bench arbiter --collect")
    try:
        text = gzip.decompress(path.read_bytes()).decode("utf-8")
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise dataset.CorpusError(f"{path}: not gzipped UTF-8 JSON lines ({exc})") from exc
    rows = []
    for number, raw in enumerate(text.splitlines(), 1):
        if raw.strip():
            try:
                rows.append(json.loads(raw))
            except json.JSONDecodeError as exc:
                raise dataset.CorpusError(f"{path}:{number}: not JSON ({exc.msg})") from exc
    return rows


def _standardisation(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(mean, scale) of each feature; a constant feature keeps scale 1 (folded into the weights later)."""
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0
    return mean, scale


def fit(x: np.ndarray, y: np.ndarray, classes: Sequence[str] = ("no", "yes")) -> Head:
    """A logistic model over `classes` (y: indices into them) with the standardisation folded into its
    weights; a class absent from y gets no probability."""
    from sklearn.linear_model import LogisticRegression

    mean, scale = _standardisation(x)
    model = LogisticRegression(C=C, max_iter=3000).fit((x - mean) / scale, y)
    present = [int(c) for c in model.classes_]
    weights = model.coef_ if len(present) > 2 else np.vstack([-model.coef_[0] / 2, model.coef_[0] / 2])
    bias = model.intercept_ if len(present) > 2 else np.asarray([-model.intercept_[0] / 2, model.intercept_[0] / 2])
    coef = np.zeros((len(classes), x.shape[1]))
    intercept = np.full(len(classes), -1e4)
    for row, c in enumerate(present):
        coef[c] = weights[row] / scale
        intercept[c] = bias[row] - float(coef[c] @ mean)
    return Head(tuple(classes), coef.astype(np.float32), intercept.astype(np.float32), "")


def _matrix(task: str, rows: Sequence[dict]) -> tuple[np.ndarray, np.ndarray]:
    """(features, class indices): one row per line for kinds, one per candidate bullet for relations."""
    if task == "kinds":
        return np.asarray([r["x"] for r in rows], dtype=np.float64), np.asarray([r["y"] for r in rows])
    x = np.asarray([c for r in rows for c in r["x"]], dtype=np.float64)
    return x, np.asarray([arbiter.RELATION_CLASSES.index(g) for r in rows for g in r["gold"]])


def fit_network(x: np.ndarray, y: np.ndarray, classes: Sequence[str]) -> arbiter.Network:
    """A small MLP (HIDDEN units, L2 weight ALPHA, a fixed seed: the same rows give the same weights)
    with the standardisation folded into its first layer."""
    from sklearn.neural_network import MLPClassifier

    mean, scale = _standardisation(x)
    model = MLPClassifier((HIDDEN,), alpha=ALPHA, max_iter=2000, random_state=SEED).fit((x - mean) / scale, y)
    hidden = model.coefs_[0] / scale[:, None]
    hidden_bias = model.intercepts_[0] - mean @ hidden
    present = [int(c) for c in model.classes_]
    out = np.zeros((HIDDEN, len(classes)))
    out_bias = np.full(len(classes), -1e4)
    last, last_bias = model.coefs_[1], model.intercepts_[1]
    if len(present) == 2:        # one logistic output: as a softmax over (first, second) with logits 0 and z
        last, last_bias = np.hstack([np.zeros_like(last), last]), np.concatenate([[0.0], last_bias])
    for column, c in enumerate(present):
        out[:, c], out_bias[c] = last[:, column], last_bias[column]
    return arbiter.Network(tuple(classes), hidden.astype(np.float32), hidden_bias.astype(np.float32),
                           out.astype(np.float32), out_bias.astype(np.float32))


def _classes(task: str) -> tuple[str, ...]:
    return ("no", "yes") if task == "kinds" else arbiter.RELATION_CLASSES


def _fitted(task: str, rows: Sequence[dict]):
    return (fit_network if task == "relations" else fit)(*_matrix(task, rows), _classes(task))


def scores(task: str, head: Head, rows: Sequence[dict]) -> list:
    """Per row: the probability of "lasting" (kinds), or the arbiter's take (candidate, relation,
    probability) or None (relations)."""
    if task == "kinds":
        return list(head.probabilities(_matrix(task, rows)[0])[:, 1])
    return [arbiter.pick(head.classes, head.probabilities(np.asarray(r["x"], dtype=np.float64)), r["pinned"])
            for r in rows]


def out_of_case(task: str, rows: Sequence[dict]) -> list:
    """Each row's score from a model fitted on the other cases' rows."""
    out: list = [None] * len(rows)
    for case in sorted({r["case"] for r in rows}):
        held = [i for i, r in enumerate(rows) if r["case"] == case]
        head = _fitted(task, [r for r in rows if r["case"] != case])
        for i, score in zip(held, scores(task, head, [rows[i] for i in held])):
            out[i] = score
    return out


def kind_threshold(y: np.ndarray, p: np.ndarray) -> float:
    """The highest threshold of GRID that keeps at least KEEP_RECALL of the lasting lines."""
    lasting = y == 1
    ok = [t for t in GRID if (p[lasting] >= t).mean() >= KEEP_RECALL]
    return max(ok) if ok else GRID[0]


def _taken(take, threshold: float) -> tuple[int, str] | None:
    return (take[0], take[1]) if take is not None and take[2] >= threshold else None


def relation_threshold(rows: Sequence[dict], takes: Sequence) -> float:
    """The lowest threshold of GRID at which the arbiter's takes are right at least TAKE_PRECISION."""
    for t in GRID:
        taken = [(r, _taken(k, t)) for r, k in zip(rows, takes) if _taken(k, t) is not None]
        if len(taken) >= 5 and sum(right(k, r["gold"]) for r, k in taken) / len(taken) >= TAKE_PRECISION:
            return t
    return 1.01


def report(task: str, rows: Sequence[dict], out: Sequence, threshold: float) -> list[str]:
    """Leave-one-case-out figures at the threshold."""
    lines = [f"arbiter {task}: {len(rows)} rows from {len({r['case'] for r in rows})} cases, "
             f"threshold {threshold:.2f} (leave one case out)"]
    items = sorted({r["item"] for r in rows})
    for kind in items:
        mine = [(r, o) for r, o in zip(rows, out) if r["item"] == kind]
        if task == "kinds":
            kept = sum(o >= threshold for _r, o in mine) / len(mine)
            lines.append(f"  {kind:16s} n={len(mine):4d} kept={kept:.3f}")
        else:
            ok = sum(right(_taken(o, threshold), r["gold"]) for r, o in mine) / len(mine)
            lines.append(f"  {kind:16s} n={len(mine):4d} right={ok:.3f}")
    if task == "relations":
        taken = [(r, _taken(o, threshold)) for r, o in zip(rows, out) if _taken(o, threshold) is not None]
        good = sum(right(k, r["gold"]) for r, k in taken)
        lines.append(f"  taken {len(taken)}, right {good / max(len(taken), 1):.3f}")
    return lines


def _threshold(task: str, rows: Sequence[dict], out: Sequence) -> float:
    if task == "kinds":
        return kind_threshold(np.asarray([r["y"] for r in rows]), np.asarray(out, dtype=np.float64))
    return relation_threshold(rows, out)


def fit_decisions(rows: Sequence[dict]) -> tuple[dict[str, arbiter.Decision], list[str]]:
    """Both decisions fitted on `rows`, each threshold chosen leave one case out among them, and the report."""
    decisions, lines = {}, []
    for task in TASKS:
        mine = _rows_of(task, rows)
        out = out_of_case(task, mine)
        threshold = _threshold(task, mine, out)
        lines += report(task, mine, out, threshold)
        decisions[task] = arbiter.Decision(_fitted(task, mine), threshold)
    return decisions, lines


def folds(rows: Sequence[dict]):
    """(case, decisions fitted without it) for every case: a benchmark's folds. The threshold of each
    comes from the leave-one-case-out scores of the other cases (scored once, by models that did see the
    case held out here: one number learned with it, to keep 20 folds to seconds rather than minutes)."""
    scored = {task: (_rows_of(task, rows), out_of_case(task, _rows_of(task, rows))) for task in TASKS}
    for case in sorted({r["case"] for r in rows}):
        decisions = {}
        for task, (mine, out) in scored.items():
            kept = [i for i, r in enumerate(mine) if r["case"] != case]
            threshold = _threshold(task, [mine[i] for i in kept], [out[i] for i in kept])
            decisions[task] = arbiter.Decision(_fitted(task, [mine[i] for i in kept]), threshold)
        yield case, decisions


def _rows_of(task: str, rows: Sequence[dict]) -> list[dict]:
    mine = [r for r in rows if r["task"] == task]
    if not mine:
        raise dataset.CorpusError(f"no {task} rows to learn from")
    return mine


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
    parser.add_argument("--cases", type=Path, default=CASES)
    parser.add_argument("--out", type=Path, default=arbiter.WEIGHTS)
    args = parser.parse_args(argv)
    path = args.cases / ROWS
    for line in train(read_rows(path), args.out):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
