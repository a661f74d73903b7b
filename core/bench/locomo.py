"""`reverie bench locomo FILE --mode M --out OUT.json`: evidence recall on LoCoMo.

Input: a LoCoMo file, a JSON list of conversations. A record's `conversation`
holds `speaker_a`, `speaker_b`, `session_N` (a list of turns `{speaker, dia_id:
"D1:3", text, blip_caption?}`) and `session_N_date_time` ("1:56 pm on 8 May,
2023"); its `qa` is a list of `{question, answer, evidence: ["D1:3", ...],
category}`, category 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop,
5 adversarial.

Protocol: one workspace per conversation; one daily log memory/YYYY-MM-DD.md
per session date, one turn per line (`- [1:56 pm] Caroline: text`, a shared
photo's caption in parentheses); the map dia_id -> (file, line) is kept outside
the indexed text. The workspace is indexed by the production SearchIndex (the
one the app uses) and each question is the query. Scored: evidence recall@5/@10/@20 (the fraction of a question's
evidence lines among the top k, averaged), all-evidence hit rate @10, MRR
(first evidence line within the top 20), search latency p50/p95.

Malformed evidence ids ("D:11:26", "D30:05", several in one string) are
normalised; ids that still do not resolve are dropped and counted.
Headline: categories 1-4; category 5 (adversarial) is reported on its own row.
Works on any file with the LoCoMo schema. Last line:
`locomo MODE recall@5=... recall@10=... p95_ms=...`
"""
from __future__ import annotations

import datetime as dt
import json
import os
import re
import sys
import time
from pathlib import Path

from core.bench import _evalkit as kit
from core.errors import CoreError

KS = (5, 10, 20)
_DATE = re.compile(r"(?P<time>\d{1,2}:\d{2}\s*[ap]m)\s+on\s+(?P<day>\d{1,2})\s+(?P<month>[A-Za-z]+),?\s+(?P<year>\d{4})",
                   re.IGNORECASE)
_EVIDENCE = re.compile(r"D:?(\d+):0*(\d+)")


def register(sub) -> None:
    kit.register_eval(sub, "locomo", "evidence recall on LoCoMo conversations",
                      "a LoCoMo JSON file (list of conversations with qa)", run)


def parse_session_date(text: str) -> tuple[dt.date, str]:
    match = _DATE.search(str(text))
    if not match:
        raise CoreError(f"cannot read the session date {text!r} (expected like '1:56 pm on 8 May, 2023')")
    day = dt.datetime.strptime(f"{match['day']} {match['month'][:3]} {match['year']}", "%d %b %Y").date()
    return day, " ".join(match["time"].split()).lower()


def normalise_evidence(raw) -> list[str]:
    items = raw if isinstance(raw, list) else [raw]
    found = []
    for item in items:
        for match in _EVIDENCE.finditer(str(item)):
            found.append(f"D{int(match.group(1))}:{int(match.group(2))}")
    return found


def write_conversation(record: dict, root: Path) -> dict[str, tuple[str, int]]:
    """Write the daily logs of one conversation; return dia_id -> (path, line)."""
    conv = record["conversation"]
    sessions = sorted((int(k.split("_")[1]), k) for k in conv
                      if re.fullmatch(r"session_\d+", k) and isinstance(conv[k], list))
    (root / "memory").mkdir(parents=True, exist_ok=True)
    (root / "MEMORY.md").write_text("# MEMORY\n", encoding="utf-8")
    where: dict[str, tuple[str, int]] = {}
    used: dict[dt.date, int] = {}
    for number, key in sessions:
        day, clock = parse_session_date(conv.get(f"{key}_date_time", ""))
        while day in used:   # the protocol says dates are distinct; keep going if a file breaks it
            day += dt.timedelta(days=1)
        used[day] = number
        rel = f"memory/{day.isoformat()}.md"
        lines = [f"# {day.isoformat()}", ""]
        for turn in conv[key]:
            text = " ".join(str(turn.get("text", "")).split())
            caption = turn.get("blip_caption")
            if caption:
                text = f"{text} (shared a photo: {' '.join(str(caption).split())})"
            lines.append(f"- [{clock}] {turn.get('speaker', '?')}: {text}")
            where[str(turn.get("dia_id"))] = (rel, len(lines))
        (root / rel).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return where


def run(args) -> int:
    path = Path(args.file)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise CoreError(f"cannot read {path}: {exc}") from exc
    if not isinstance(data, list) or not all(isinstance(r, dict) and "conversation" in r and "qa" in r for r in data):
        raise CoreError(f"{path} is not a LoCoMo file (a list of records with 'conversation' and 'qa')")
    if args.limit:
        data = data[: args.limit]
    options, tuning = kit.overrides(args.set)
    cache = kit.cache_root(args.cache) / "locomo"
    started = time.perf_counter()
    results, dropped, latencies, cpu = [], 0, [], []
    embed_s = 0.0
    for record in data:
        key = kit.data_key(record["conversation"])
        root = cache / f"{record.get('sample_id', 'conv')}-{key}"
        built = kit.workspace(root, args.fresh, lambda r, record=record: write_conversation(record, r))
        where = {k: tuple(v) for k, v in built.items()}
        index, waited = kit.open_index(root, args.mode, options, tuning, args.model)
        embed_s += waited
        try:
            for qa in record["qa"]:
                evidence, missing = [], 0
                for ev in normalise_evidence(qa.get("evidence", [])):
                    if ev in where:
                        evidence.append(where[ev])
                    else:
                        missing += 1
                dropped += missing
                if not evidence:
                    continue
                t, c = time.perf_counter(), time.thread_time()
                # What the agent is given: the hits, then the nearby lines shown as their context.
                hits = index.search(str(qa["question"]), k=max(KS), mode=args.mode).ranked
                latencies.append((time.perf_counter() - t) * 1000)
                cpu.append((time.thread_time() - c) * 1000)   # the query's own cost, whatever else runs
                ranked = [(h.path, h.line) for h in hits]
                gold = set(evidence)
                first = next((i for i, hit in enumerate(ranked, start=1) if hit in gold), 0)
                results.append({
                    "sample_id": record.get("sample_id", ""), "question": qa["question"],
                    "category": qa.get("category"), "evidence": sorted(gold),
                    **{f"recall@{k}": len(gold & set(ranked[:k])) / len(gold) for k in KS},
                    "all@10": float(gold <= set(ranked[:10])), "rr": 1.0 / first if first else 0.0,
                    "top": [f"{p}:{n}" for p, n in ranked[:10]]})
        finally:
            index.close()
    report(results, dropped, latencies, args, time.perf_counter() - started, embed_s, cpu)
    return 0


def summarise(rows: list[dict]) -> dict:
    return {"n": len(rows), **{f"recall@{k}": kit.mean(r[f"recall@{k}"] for r in rows) for k in KS},
            "all@10": kit.mean(r["all@10"] for r in rows), "mrr": kit.mean(r["rr"] for r in rows)}


def report(results, dropped, latencies, args, seconds, embed_s, cpu) -> None:
    cats = sorted({r["category"] for r in results}, key=lambda c: (c is None, c))
    print(f"{'category':<10}{'n':>6}{'r@5':>8}{'r@10':>8}{'r@20':>8}{'all@10':>8}{'mrr':>8}")
    table = {}
    for cat in cats:
        table[str(cat)] = s = summarise([r for r in results if r["category"] == cat])
        print(f"{cat!s:<10}{s['n']:>6}{s['recall@5']:>8.3f}{s['recall@10']:>8.3f}{s['recall@20']:>8.3f}"
              f"{s['all@10']:>8.3f}{s['mrr']:>8.3f}")
    head = summarise([r for r in results if r["category"] in (1, 2, 3, 4)])
    table["1-4"] = head
    print(f"{'1-4':<10}{head['n']:>6}{head['recall@5']:>8.3f}{head['recall@10']:>8.3f}{head['recall@20']:>8.3f}"
          f"{head['all@10']:>8.3f}{head['mrr']:>8.3f}")
    print(kit.halves_line([r for r in results if r["category"] in (1, 2, 3, 4)], "question", "recall@10"))
    p50, p95 = kit.percentile(latencies, 0.5), kit.percentile(latencies, 0.95)
    print(f"evidence ids dropped (unresolvable): {dropped}; questions: {len(results)}; "
          f"search p50={p50:.1f} ms (CPU time p50={kit.percentile(cpu, 0.5):.1f} p95={kit.percentile(cpu, 0.95):.1f} ms, "
          f"load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores); "
          f"runtime {seconds:.1f} s (waiting for embeddings {embed_s:.1f} s)")
    summary = (f"locomo {args.mode} recall@5={head['recall@5']:.3f} recall@10={head['recall@10']:.3f} "
               f"p95_ms={p95:.1f}")
    if args.out:
        Path(args.out).write_text(json.dumps({"summary": summary, "mode": args.mode, "settings": args.set,
                                              "categories": table, "dropped_evidence": dropped,
                                              "p50_ms": p50, "p95_ms": p95, "runtime_s": seconds,
                                              "questions": results}, indent=1), encoding="utf-8")
    print(summary)
    sys.stdout.flush()
