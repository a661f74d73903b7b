"""`reverie bench questions FILE [--root DIR] [--mode M] [--split S]`: search questions over real workspaces.

Input: JSON lines, one question each:
    {"workspace": NAME, "lang": "zh"|"en"|..., "question": "...", "answers": ["substring", ...],
     "split": "tune"|"check"}
NAME is a workspace folder under --root (default: the folder holding FILE, joined with "ws"). An
answer is a substring (case-insensitive) of a line that answers the question; a hit answers when
its text holds any of them.

Protocol: each workspace is indexed as it is, by the production SearchIndex, with its index files in
the benchmark cache (the workspaces are read, never written: they may be someone's data). Each
question is the query (k=10); what is scored is the list an agent is given: the hits, then the
nearby lines shown as their context. Scored per question: hit@1, hit@5 (an answer among the
first 1 / 5 lines), reciprocal rank of the first answering line within 10, and the search latency.
Reported per workspace, per language and per split (tune on "tune", check on "check": a knob
chosen on one split is judged on the other). `--why`: each miss explained (question_misses.py).
Last line:
`questions n=N hit@5=R hit@1=R mrr=R p95_ms=R`
"""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from core.bench import _evalkit as kit
from core.bench import question_misses as misses
from core.errors import CoreError

K = 10


def register(sub) -> None:
    parser = sub.add_parser("questions", help="hit@1/@5 and MRR of search questions over real workspaces")
    parser.add_argument("file", help="JSON lines: workspace, lang, question, answers, split")
    parser.add_argument("--root", help="the folder holding the workspaces (default: FILE's folder / ws)")
    parser.add_argument("--split", default="", help="only questions of this split (tune or check)")
    parser.add_argument("--workspace", action="append", default=[], metavar="NAME",
                        help="only questions over this workspace (repeat for several)")
    parser.add_argument("--why", action="store_true",
                        help="for each question missed in the top 5: its answer's rank deeper down, in keyword "
                             "and meaning search alone, and the shape of the answering line (question_misses.py)")
    kit.add_common_args(parser)
    parser.set_defaults(func=run)


def load(path: Path) -> list[dict]:
    try:
        lines = path.read_text(encoding="utf-8").split("\n")
    except OSError as exc:
        raise CoreError(f"cannot read {path}: {exc.strerror or exc}") from exc
    items = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise CoreError(f"{path}:{number}: not valid JSON ({exc.msg})") from None
        answers = item.get("answers") if isinstance(item, dict) else None
        if not (isinstance(item, dict) and item.get("workspace") and item.get("question")
                and isinstance(answers, list) and answers and all(isinstance(a, str) and a for a in answers)):
            raise CoreError(f"{path}:{number}: needs workspace, question and a list of answer substrings")
        items.append(item)
    return items


def run(args) -> int:
    path = Path(args.file)
    items = load(path)
    if args.split:
        items = [i for i in items if str(i.get("split", "")) == args.split]
    if args.workspace:
        items = [i for i in items if i["workspace"] in args.workspace]
    if args.limit:
        items = items[: args.limit]
    if not items:
        raise CoreError(f"{path}: no questions of that split or workspace")
    root = Path(args.root) if args.root else path.parent / "ws"
    options, tuning = kit.overrides(args.set)
    cache = kit.cache_root(args.cache) / "questions"
    started = time.perf_counter()
    results, latencies, embed_s = [], [], 0.0
    whys: list[dict] = []
    for name in dict.fromkeys(i["workspace"] for i in items):
        folder = (root / name).resolve()
        if not folder.is_dir():
            raise CoreError(f"no workspace {name!r} under {root}")
        index_root = cache / f"{name}-{kit.data_key(str(folder))}"
        if args.fresh:
            kit.fresh_dir(index_root)
        t = time.perf_counter()
        index, waited = kit.open_index(folder, args.mode, options, tuning, args.model, index_root=index_root)
        embed_s += waited
        print(f"{name}: {index.status().lines:,} lines indexed in {time.perf_counter() - t:.1f} s", file=sys.stderr)
        try:
            for item in (i for i in items if i["workspace"] == name):
                t = time.perf_counter()
                ranked = index.search(str(item["question"]), k=K, mode=args.mode).ranked
                latencies.append((time.perf_counter() - t) * 1000)
                first = misses.first_rank(ranked, item["answers"])
                why = None
                if args.why and not 0 < first <= 5:
                    why = misses.explain(index, item, args.mode)
                    whys.append(why)
                    print(misses.report_line(item, why))
                results.append({"workspace": name, "lang": str(item.get("lang", "")),
                                "split": str(item.get("split", "")), "question": item["question"],
                                "hit@1": float(first == 1), "hit@5": float(0 < first <= 5),
                                "rr": 1.0 / first if first else 0.0,
                                "top": [f"{h.path}:{h.line}" for h in ranked[:5]], **({"why": why} if why else {})})
        finally:
            index.close()
    if args.why:
        print(misses.summary_line(whys))
    report(results, latencies, args, time.perf_counter() - started, embed_s)
    return 0


def summarise(rows: list[dict]) -> dict:
    return {"n": len(rows), "hit@1": kit.mean(r["hit@1"] for r in rows), "hit@5": kit.mean(r["hit@5"] for r in rows),
            "mrr": kit.mean(r["rr"] for r in rows)}


def _row(label: str, s: dict) -> str:
    return f"{label:<44}{s['n']:>4}{s['hit@1']:>8.3f}{s['hit@5']:>8.3f}{s['mrr']:>8.3f}"


def report(results: list[dict], latencies: list[float], args, seconds: float, embed_s: float) -> None:
    table: dict[str, dict] = {}
    print(f"{'workspace / language / split':<44}{'n':>4}{'hit@1':>8}{'hit@5':>8}{'mrr':>8}")
    for key, label in (("workspace", "{}"), ("lang", "lang {}"), ("split", "split {}")):
        for value in sorted({r[key] for r in results}):
            table[label.format(value)] = s = summarise([r for r in results if r[key] == value])
            print(_row(label.format(value), s))
    for split in sorted({r["split"] for r in results}):
        for lang in sorted({r["lang"] for r in results}):
            rows = [r for r in results if r["split"] == split and r["lang"] == lang]
            if rows:
                table[f"split {split} lang {lang}"] = s = summarise(rows)
                print(_row(f"split {split}, lang {lang}", s))
    total = table["all"] = summarise(results)
    p95 = kit.percentile(latencies, 0.95)
    print(f"search p50={kit.percentile(latencies, 0.5):.1f} ms; runtime {seconds:.1f} s (waiting for embeddings "
          f"{embed_s:.1f} s); load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    summary = (f"questions n={total['n']} hit@5={total['hit@5']:.3f} hit@1={total['hit@1']:.3f} "
               f"mrr={total['mrr']:.3f} p95_ms={p95:.1f}")
    if args.out:
        Path(args.out).write_text(json.dumps({"summary": summary, "mode": args.mode, "model": args.model,
                                              "settings": args.set, "table": table, "p95_ms": p95,
                                              "questions": results}, ensure_ascii=False, indent=1),
                                  encoding="utf-8")
    print(summary)
    sys.stdout.flush()
