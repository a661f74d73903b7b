"""`reverie bench judgment`: the learned heads, leave one domain out.

For every domain of the corpus (core/dream/judgment/corpus/) the kind and relation heads are trained
on all the other domains and tested on that one, so every score is on subjects, people and phrasings
the heads never saw. Printed: per-kind precision and recall, relation F1 per class, both confusion
matrices, figures per domain and per language, and the last line

    judgment kinds_f1=R relation_f1=R update_recall=R languages=N domains=N

(kinds_f1 and relation_f1 are macro-F1 over the pooled held-out predictions; a pair against a
pinned bullet is judged among conflict/agreement/distinct, any other among
duplicate/update/refinement/distinct). `--model` picks the sentence model (or `none`: text alone);
`--json FILE` writes every figure.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from core.bench import judgment_kinds, judgment_pools
from core.dream.judgment import dataset, features, scores, train

LANG_GROUPS = {"en": "en", "zh": "zh", "mixed": "mixed"}


def register(sub) -> None:
    p = sub.add_parser("judgment", help="the learned kind and relation heads, leave one domain out")
    p.add_argument("--model", default=train.DEFAULT_MODEL,
                   help=f"sentence model for the heads (default {train.DEFAULT_MODEL}; 'none': text alone)")
    p.add_argument("--json", type=Path, help="write every figure here")
    p.add_argument("--longmemeval", type=Path, metavar="JSONL",
                   help="also: update recall of the shipped heads on this file's knowledge-update questions")
    p.set_defaults(func=cmd_bench_judgment)


def leave_one_domain_out(model: str | None, folder: Path = dataset.CORPUS) -> dict:
    """Held-out predictions for every line and every corpus pair."""
    data = train.build(model, folder)
    line_domains = np.asarray([l.domain for l in data.lines])
    pair_domains = np.asarray([p.domain for p in data.pairs])
    kinds_pred = np.empty(len(data.lines), dtype=object)
    kind_probs = np.zeros((len(data.lines), len(dataset.KINDS)), dtype=np.float32)
    rel_pred = np.empty(len(data.pairs), dtype=object)
    gate_rejected = np.zeros(len(data.pairs), dtype=bool)
    domains = sorted(set(line_domains) | set(pair_domains))
    vectors = features.VectorStore(model) if model else None
    cosines = features.VectorStore(judgment_pools.COSINE_MODEL) if model else None
    cases = []
    for domain in domains:
        print(f"judgment: leaving out {domain}", file=sys.stderr, flush=True)
        test = (line_domains == domain) & data.line_real
        head = train.fit(data.kind_x[line_domains != domain], data.kind_y[line_domains != domain], train.KIND_C,
                         model or "")
        kinds_pred[test] = train.predict_kinds(head, data.kind_x[test])
        # columns in dataset.KINDS order, whatever kinds the fold's head was trained on
        kind_probs[np.ix_(test, [dataset.KINDS.index(k) for k in head.classes])] = head.probabilities(data.kind_x[test])
        test_pairs = (pair_domains == domain) & data.pair_real
        head, gate = train.fit_relations(data, pair_domains != domain, model)
        rel_pred[test_pairs] = train.predict_relations(head, data.pair_x[test_pairs], data.pinned[test_pairs], gate)
        cases += judgment_pools.fold_cases(domain, judgment_pools.Decider(head, gate, vectors), folder, cosines)
        unrelated = (pair_domains == domain) & ~data.pair_real
        gate_rejected[unrelated] = np.asarray(train.predict_relations(head, data.pair_x[unrelated],
                                                                      data.pinned[unrelated], gate)) == "distinct"
    for store in (vectors, cosines):
        if store:
            store.save()
    real = data.pair_real & ~data.pair_pool      # the figures stay on the corpus' pairs; pools: judgment_pools
    rows = _kind_rows(data, kind_probs)
    return {"lines": [l for l, r in zip(data.lines, data.line_real) if r], "kinds": list(kinds_pred[data.line_real]),
            "pairs": [p for p, r in zip(data.pairs, real) if r],
            "relations": list(rel_pred[real]), "domains": domains,
            "unrelated_rejected": float(gate_rejected[~data.pair_real].mean()) if (~data.pair_real).any() else 0.0,
            "decisions": judgment_pools.evaluate(cases),
            "promotion": judgment_kinds.table(*rows), "promotion_veto": judgment_kinds.veto_table(*rows)}


def _kind_rows(data, kind_probs) -> tuple[list, list, np.ndarray, tuple]:
    """The corpus' own lines (truth, text) with their held-out kind probabilities."""
    real = [l for l, r in zip(data.lines, data.line_real) if r]
    return [l.kind for l in real], [l.text for l in real], kind_probs[data.line_real], dataset.KINDS


def figures(result: dict) -> dict:
    lines, kinds, pairs, relations = result["lines"], result["kinds"], result["pairs"], result["relations"]
    k_truth, r_truth = [l.kind for l in lines], [p.relation for p in pairs]

    def slice_scores(line_mask, pair_mask) -> dict:
        kt = [t for t, m in zip(k_truth, line_mask) if m]
        kp = [p for p, m in zip(kinds, line_mask) if m]
        rt = [t for t, m in zip(r_truth, pair_mask) if m]
        rp = [p for p, m in zip(relations, pair_mask) if m]
        update = scores.per_class(rt, rp, dataset.RELATIONS)["update"]
        return {"lines": len(kt), "pairs": len(rt),
                "kinds_f1": scores.macro_f1(kt, kp, dataset.KINDS),
                "kinds_accuracy": sum(a == b for a, b in zip(kt, kp)) / max(len(kt), 1),
                "relation_f1": scores.macro_f1(rt, rp, dataset.RELATIONS),
                "update_recall": update["recall"] if update["support"] else None}

    by_lang = {}
    for lang in sorted({l.lang for l in lines} | {p.lang for p in pairs}):
        group = LANG_GROUPS.get(lang, lang)
        by_lang[group] = slice_scores([l.lang == lang for l in lines], [p.lang == lang for p in pairs])
    by_lang["other (de, fr, es, ja, pt, it)"] = slice_scores([l.lang not in LANG_GROUPS for l in lines],
                                                             [p.lang not in LANG_GROUPS for p in pairs])
    return {
        "all": slice_scores([True] * len(lines), [True] * len(pairs)),
        "kinds": scores.per_class(k_truth, kinds, dataset.KINDS),
        "relations": scores.per_class(r_truth, relations, dataset.RELATIONS),
        "kinds_confusion": scores.confusion_table(k_truth, kinds, dataset.KINDS),
        "relations_confusion": scores.confusion_table(r_truth, relations, dataset.RELATIONS),
        "domains": {d: slice_scores([l.domain == d for l in lines], [p.domain == d for p in pairs])
                    for d in result["domains"]},
        "languages": by_lang,
        "language_count": len({l.lang for l in lines} | {p.lang for p in pairs}),
        "domain_count": len(result["domains"]),
        "unrelated_rejected": result["unrelated_rejected"],
    }


def _fmt(value) -> str:
    return "—" if value is None else f"{value:.3f}"


def report(fig: dict) -> str:
    out = ["## kinds (per-kind precision / recall / F1, held-out domain)", "| kind | precision | recall | F1 | n |",
           "|---|---|---|---|---|"]
    out += [f"| {k} | {v['precision']:.3f} | {v['recall']:.3f} | {v['f1']:.3f} | {v['support']} |"
            for k, v in fig["kinds"].items()]
    out += ["", fig["kinds_confusion"], "", "## relations", "| relation | precision | recall | F1 | n |",
            "|---|---|---|---|---|"]
    out += [f"| {k} | {v['precision']:.3f} | {v['recall']:.3f} | {v['f1']:.3f} | {v['support']} |"
            for k, v in fig["relations"].items()]
    out += ["", fig["relations_confusion"], "",
            f"Unrelated pairs (each bullet beside another pair's line) read as distinct: {fig['unrelated_rejected']:.3f}",
            ""]
    for title, table in (("domain (left out)", fig["domains"]), ("language", fig["languages"])):
        out += [f"| {title} | lines | kinds_f1 | pairs | relation_f1 | update_recall |", "|---|---|---|---|---|---|"]
        out += [f"| {name} | {v['lines']} | {_fmt(v['kinds_f1'])} | {v['pairs']} | {_fmt(v['relation_f1'])} | "
                f"{_fmt(v['update_recall'])} |" for name, v in table.items()]
        out.append("")
    return "\n".join(out)


def summary_line(fig: dict) -> str:
    a = fig["all"]
    return (f"judgment kinds_f1={a['kinds_f1']:.3f} relation_f1={a['relation_f1']:.3f} "
            f"update_recall={a['update_recall']:.3f} languages={fig['language_count']} domains={fig['domain_count']}")


def cmd_bench_judgment(args) -> int:
    model = None if args.model in ("none", "") else args.model
    result = leave_one_domain_out(model)
    fig = figures(result)
    print(report(fig))
    print(judgment_pools.report(result["decisions"]))
    print(judgment_kinds.report(result["promotion"], result["promotion_veto"]))
    if args.longmemeval:
        from core.bench._knowledge_updates import WAYS, update_recall

        for way in WAYS:
            replaced, total, missed = update_recall(args.longmemeval, way)
            print(f"longmemeval knowledge-update decided_by={way} pairs={total} "
                  f"update_recall={replaced / max(total, 1):.3f}" + (f" missed={','.join(missed)}" if missed else ""))
    if args.json:
        args.json.write_text(json.dumps(fig | {"decisions": result["decisions"], "promotion": result["promotion"],
                                                "promotion_veto": result["promotion_veto"]}, indent=1, ensure_ascii=False),
                             encoding="utf-8")
    print(judgment_pools.summary_line(result["decisions"]))
    print(summary_line(fig))
    return 0
