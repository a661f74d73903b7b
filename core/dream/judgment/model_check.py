"""`reverie models check`: is a model better than the learned heads at the dream's decisions?

The model gets the corpus' test fold (the domains in TEST_DOMAINS, a bounded sample chosen with a
fixed seed and stratified by label) in small batches with schema-constrained JSON replies, and is
scored beside heads trained without that fold. The verdict is stored per model in the user's config
folder (model-checks.json), and a dream asks the model only for the decisions where it measured
better (`trusted_for`); a model never checked is trusted for nothing.
"""
from __future__ import annotations

import datetime as dt
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from core.dream.judgment import dataset, scores

TEST_DOMAINS = ("money", "travel")          # one domain of each corpus writer
DECISIONS = ("kinds", "relations")
BATCH = 6
_KIND_HELP = ("durable: stays true and is worth keeping (preference, person, setting, rule, decision, schedule); "
              "transient: only true for now or a to-do (reminder, question, status, progress, waiting); "
              "one-off: a single event that happened once; secret: holds a password, token, key or code.")
_RELATION_HELP = ("duplicate: the same fact in other words or another language; update: the same thing with a "
                  "new value, the bullet must be replaced; refinement: the same fact with more detail, nothing "
                  "contradicted; distinct: a different fact, keep both; conflict: the bullet is a pinned rule and "
                  "the line breaks it; agreement: the bullet is a pinned rule and the line restates or obeys it.")


def checks_file() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "reverie" / "model-checks.json"


def model_key(client) -> str:
    """The name a verdict is stored under: the model id its client reports (a catalog id, a file name,
    or the model a server serves)."""
    return str(getattr(client, "model_id", "") or "unknown")


def load_checks(path: Path | None = None) -> dict:
    try:
        data = json.loads((path or checks_file()).read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def store_check(key: str, verdict: dict, path: Path | None = None) -> Path:
    path = path or checks_file()
    data = load_checks(path)
    data[key] = verdict
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1, ensure_ascii=False), encoding="utf-8")
    tmp.replace(path)
    return path


def trusted_for(key: str, path: Path | None = None) -> frozenset[str]:
    """The decisions a dream may hand to the model `key`: those its stored check measured better."""
    verdict = load_checks(path).get(key) or {}
    return frozenset(d for d in verdict.get("use_for", []) if d in DECISIONS)


def describe(verdict: dict | None) -> str:
    """The verdict in plain words, for the Settings dialog and the CLI."""
    if not verdict:
        return "not checked yet: the dream decides with its learned judgment (run `reverie models check`)"
    good = [d for d in DECISIONS if d in verdict.get("use_for", [])]
    bad = [d for d in DECISIONS if d not in good]
    parts = []
    if good:
        parts.append("good enough for " + " and ".join(good))
    if bad:
        parts.append(("not for " if good else "not good enough for ") + " or ".join(bad))
    figures = "; ".join(f"{d}: model {verdict[d]['model']:.2f} vs learned {verdict[d]['heads']:.2f}"
                        for d in DECISIONS if d in verdict)
    return f"{', '.join(parts)} ({figures}; checked {verdict.get('checked', '?')} on {verdict.get('sample', '?')})"


def model_check_words(model_id: str) -> str:
    """The stored verdict on a model (by the id its client reports, or a catalog id), in plain words."""
    return describe(load_checks().get(model_id))


def sample(items: Sequence, label: Callable, limit: int, seed: int = 26) -> list:
    """At most `limit` items, the labels in their proportions, chosen with a fixed seed."""
    if limit <= 0 or limit >= len(items):
        return list(items)
    rng = np.random.default_rng(seed)
    order = [items[i] for i in rng.permutation(len(items))]
    groups: dict[str, list] = {}
    for item in order:
        groups.setdefault(label(item), []).append(item)
    picked = []
    for name in sorted(groups):
        share = max(1, round(limit * len(groups[name]) / len(items)))
        picked += groups[name][:share]
    return picked[:limit]


@dataclass
class Fold:
    lines: list
    pairs: list


def test_fold(limit: int) -> Fold:
    lines = [l for l in dataset.load_lines() if l.domain in TEST_DOMAINS]
    pairs = [p for p in dataset.load_pairs() if p.domain in TEST_DOMAINS]
    return Fold(sample(lines, lambda l: l.kind, limit), sample(pairs, lambda p: p.relation, limit))


def _ask(client, system: str, user: str, enum: Sequence[str], n: int) -> list[str]:
    schema = {"type": "object", "properties": {"answers": {"type": "array", "minItems": n, "maxItems": n,
                                                             "items": {"type": "string", "enum": list(enum)}}},
              "required": ["answers"]}
    reply = client.complete([{"role": "system", "content": system}, {"role": "user", "content": user}],
                            max_tokens=12 * n + 24, temperature=0.0, json_schema=schema)
    answers = list((reply.parsed or {}).get("answers", []))
    return (answers + ["?"] * n)[:n]


def model_kinds(client, lines: Sequence[dataset.Line], progress=None) -> list[str]:
    out = []
    for start in range(0, len(lines), BATCH):
        batch = lines[start:start + BATCH]
        user = "Classify each daily-log line.\n" + "\n".join(f"{i}. {l.text}" for i, l in enumerate(batch, 1))
        out += _ask(client, "You sort an agent's daily-log lines. Kinds: " + _KIND_HELP +
                    " Answer with one kind per line, in order.", user, dataset.KINDS, len(batch))
        if progress:
            progress(len(out), len(lines))
    return out


def model_relations(client, pairs: Sequence[dataset.Pair], progress=None) -> list[str]:
    out = []
    for start in range(0, len(pairs), BATCH):
        batch = pairs[start:start + BATCH]
        user = "For each pair, how does the new line relate to the memory bullet?\n" + "\n".join(
            f"{i}. bullet{' (pinned rule)' if p.pinned else ''}: {p.bullet}\n   new line: {p.line}"
            for i, p in enumerate(batch, 1))
        out += _ask(client, "You keep an agent's MEMORY.md. Relations: " + _RELATION_HELP +
                    " Answer with one relation per pair, in order.", user, dataset.RELATIONS, len(batch))
        if progress:
            progress(len(out), len(pairs))
    return out


def heads_without_fold(fold: Fold, model: str | None) -> tuple[list[str], list[str]]:
    """Predictions of heads trained on every domain but the test fold's (scikit-learn, as train.py)."""
    from core.dream.judgment import features, train

    data = train.build(model)
    keep_l = np.asarray([l.domain not in TEST_DOMAINS for l in data.lines])         # pair lines too
    keep_p = np.asarray([p.domain not in TEST_DOMAINS for p in data.pairs])
    kind_head = train.fit(data.kind_x[keep_l], data.kind_y[keep_l], train.KIND_C, model or "")
    rel_head, gate = train.fit_relations(data, keep_p, model)
    store = features.VectorStore(model) if model else None
    lv = store.get([l.text for l in fold.lines]) if store else None
    vb = store.get([p.bullet for p in fold.pairs]) if store else None
    vl = store.get([p.line for p in fold.pairs]) if store else None
    kinds = train.predict_kinds(kind_head, features.line_features([l.text for l in fold.lines], lv))
    x = features.pair_features([p.bullet for p in fold.pairs], [p.line for p in fold.pairs], vb, vl,
                               [p.pinned for p in fold.pairs])
    return kinds, train.predict_relations(rel_head, x, np.asarray([p.pinned for p in fold.pairs]), gate)


def _legal(relation: str, pinned: bool) -> str:
    from core.dream.judgment.heads import allowed_classes

    return relation if relation in allowed_classes(pinned) else "distinct"


def verdict(fold: Fold, model_k: list[str], model_r: list[str], heads_k: list[str], heads_r: list[str]) -> dict:
    k_truth, r_truth = [l.kind for l in fold.lines], [p.relation for p in fold.pairs]
    model_r = [_legal(r, p.pinned) for r, p in zip(model_r, fold.pairs)]
    out = {"checked": dt.date.today().isoformat(),
           "sample": f"{len(fold.lines)} lines and {len(fold.pairs)} pairs of {', '.join(TEST_DOMAINS)}",
           "kinds": {"model": scores.macro_f1(k_truth, model_k, dataset.KINDS),
                     "heads": scores.macro_f1(k_truth, heads_k, dataset.KINDS)},
           "relations": {"model": scores.macro_f1(r_truth, model_r, dataset.RELATIONS),
                         "heads": scores.macro_f1(r_truth, heads_r, dataset.RELATIONS)},
           "update_recall": {"model": scores.per_class(r_truth, model_r, dataset.RELATIONS)["update"]["recall"],
                             "heads": scores.per_class(r_truth, heads_r, dataset.RELATIONS)["update"]["recall"]}}
    out["use_for"] = [d for d in DECISIONS if out[d]["model"] > out[d]["heads"]]
    return out
