"""`reverie bench longmemeval FILE --mode M --out OUT.json`: session recall on LongMemEval.

Input: a LongMemEval (S) file, one JSON object a line: `question_id`,
`question_type`, `question`, `answer`, `question_date`, `haystack_session_ids`,
`haystack_dates` ("2023/05/20 (Sat) 02:21"), `haystack_sessions` (a list of
sessions, each a list of turns `{role, content, has_answer?}`) and
`answer_session_ids` (the gold sessions). Ids ending in `_abs` are abstention
questions (nothing to find) and are skipped.

Protocol: one workspace per question; each haystack date becomes a daily log
memory/YYYY-MM-DD.md; each session in it a `## Conversation at HH:MM` section;
each turn one or more lines `- [HH:MM] user: text` (a long turn is cut at
paragraph ends into lines of at most ~2,000 characters: a daily log states one
thing a line, and each piece keeps its `[HH:MM] role:` lead; the index would
also window a longer line, see core/index/lines.py, but at spaces, not at
paragraph ends). Which session and turn a line belongs to is kept outside the
indexed text (session ids such as "answer_..." must never reach the index).
Indexed by the production SearchIndex; the question is the query.

Scored: session recall_any@5/@10 (is any gold session among the sessions of the
top-k hits), turn recall@10 (fraction of `has_answer` turns with a line in the
top 10), search latency.
Last line: `longmemeval MODE recall_any@5=... recall_any@10=... turn_recall@10=... p95_ms=...`
"""
from __future__ import annotations

import datetime as dt
import json
import re
import sys
import time
from pathlib import Path

from core.bench import _evalkit as kit
from core.errors import CoreError

CHUNK_CHARS = 2_000
_DATE = re.compile(r"(\d{4})/(\d{2})/(\d{2})(?:\s*\(\w+\))?\s*(\d{1,2}:\d{2})?")


def register(sub) -> None:
    kit.register_eval(sub, "longmemeval", "session recall on LongMemEval (S) questions",
                      "a LongMemEval JSONL file (one question a line)", run)


def chunks(text: str, limit: int = CHUNK_CHARS) -> list[str]:
    """A turn cut at paragraph (then sentence) ends into pieces of at most about `limit` characters."""
    out, current = [], ""
    for para in (p.strip() for p in re.split(r"\n+", str(text))):
        if not para:
            continue
        pieces = [para] if len(para) <= limit else re.split(r"(?<=[.!?。！？])\s+", para)
        for piece in pieces:
            piece = " ".join(piece.split())
            while len(piece) > limit * 2:   # no sentence ends at all: cut hard
                out.append(piece[:limit])
                piece = piece[limit:]
            if current and len(current) + 1 + len(piece) > limit:
                out.append(current)
                current = piece
            else:
                current = f"{current} {piece}".strip()
    if current:
        out.append(current)
    return out


def write_question(item: dict, root: Path) -> dict[str, tuple[str, int]]:
    """Write the haystack as daily logs; return "path:line" -> [session id, turn index, has_answer]."""
    days: dict[str, list[str]] = {}
    where = {}
    sessions = item["haystack_sessions"]
    ids = item.get("haystack_session_ids") or [str(i) for i in range(len(sessions))]
    dates = item.get("haystack_dates") or [""] * len(sessions)
    order = sorted(range(len(sessions)), key=lambda i: str(dates[i]))
    for i in order:
        match = _DATE.search(str(dates[i]))
        day = dt.date(int(match[1]), int(match[2]), int(match[3])) if match else dt.date(2000, 1, 1)
        clock = match[4] if match and match[4] else "00:00"
        rel = f"memory/{day.isoformat()}.md"
        lines = days.setdefault(rel, [f"# {day.isoformat()}"])
        lines += ["", f"## Conversation at {clock}"]
        for t, turn in enumerate(sessions[i]):
            for piece in chunks(turn.get("content", "")):
                lines.append(f"- [{clock}] {turn.get('role', 'user')}: {piece}")
                where[f"{rel}:{len(lines)}"] = [str(ids[i]), t, bool(turn.get("has_answer"))]
    (root / "memory").mkdir(parents=True, exist_ok=True)
    (root / "MEMORY.md").write_text("# MEMORY\n", encoding="utf-8")
    for rel, lines in days.items():
        (root / rel).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return where


def run(args) -> int:
    path = Path(args.file)
    try:
        items = [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]
    except (OSError, json.JSONDecodeError) as exc:
        raise CoreError(f"cannot read {path}: {exc}") from exc
    if not all(isinstance(i, dict) and "haystack_sessions" in i and "question" in i for i in items):
        raise CoreError(f"{path} is not a LongMemEval file (JSON lines with 'question' and 'haystack_sessions')")
    items = [i for i in items if not str(i.get("question_id", "")).endswith("_abs")]
    if args.limit:
        items = items[: args.limit]
    options, tuning = kit.overrides(args.set)
    cache = kit.cache_root(args.cache) / "longmemeval"
    started = time.perf_counter()
    results, latencies, embed_s = [], [], 0.0
    for number, item in enumerate(items, start=1):
        root = cache / f"{item.get('question_id', number)}-{kit.data_key(item['haystack_sessions'])}"
        where = kit.workspace(root, args.fresh, lambda r, item=item: write_question(item, r))
        index, waited = kit.open_index(root, args.mode, options, tuning, args.model)
        embed_s += waited
        try:
            t = time.perf_counter()
            hits = index.search(str(item["question"]), k=10, mode=args.mode).ranked   # hits, then nearby
            latencies.append((time.perf_counter() - t) * 1000)
        finally:
            index.close()
        found = [where.get(f"{h.path}:{h.line}") for h in hits]
        gold = set(map(str, item.get("answer_session_ids") or []))
        answer_turns = {(s, t) for s, t, has in where.values() if has}
        hit_turns = {(f[0], f[1]) for f in found if f}
        sessions_at = lambda k: {f[0] for f in found[:k] if f}   # noqa: E731
        results.append({
            "question_id": item.get("question_id"), "type": item.get("question_type"), "question": item["question"],
            "recall_any@5": float(bool(gold & sessions_at(5))), "recall_any@10": float(bool(gold & sessions_at(10))),
            "turn_recall@10": len(answer_turns & hit_turns) / len(answer_turns) if answer_turns else None,
            "top": [f"{h.path}:{h.line}" for h in hits]})
        print(f"[{number}/{len(items)}] {item.get('question_id')} any@5={results[-1]['recall_any@5']:.0f} "
              f"({time.perf_counter() - started:.0f} s)", file=sys.stderr)
    report(results, latencies, args, time.perf_counter() - started, embed_s)
    return 0


def summarise(rows: list[dict]) -> dict:
    turns = [r["turn_recall@10"] for r in rows if r["turn_recall@10"] is not None]
    return {"n": len(rows), "recall_any@5": kit.mean(r["recall_any@5"] for r in rows),
            "recall_any@10": kit.mean(r["recall_any@10"] for r in rows), "turn_recall@10": kit.mean(turns)}


def report(results, latencies, args, seconds, embed_s) -> None:
    print(f"{'type':<28}{'n':>5}{'any@5':>8}{'any@10':>8}{'turn@10':>9}")
    table = {}
    for kind in sorted({str(r["type"]) for r in results}):
        table[kind] = s = summarise([r for r in results if str(r["type"]) == kind])
        print(f"{kind:<28}{s['n']:>5}{s['recall_any@5']:>8.3f}{s['recall_any@10']:>8.3f}{s['turn_recall@10']:>9.3f}")
    total = table["all"] = summarise(results)
    print(f"{'all':<28}{total['n']:>5}{total['recall_any@5']:>8.3f}{total['recall_any@10']:>8.3f}"
          f"{total['turn_recall@10']:>9.3f}")
    print(kit.halves_line(results, "question_id", "recall_any@5"))
    p50, p95 = kit.percentile(latencies, 0.5), kit.percentile(latencies, 0.95)
    print(f"questions: {len(results)}; search p50={p50:.1f} ms; runtime {seconds:.1f} s "
          f"(waiting for embeddings {embed_s:.1f} s)")
    summary = (f"longmemeval {args.mode} recall_any@5={total['recall_any@5']:.3f} "
               f"recall_any@10={total['recall_any@10']:.3f} turn_recall@10={total['turn_recall@10']:.3f} p95_ms={p95:.1f}")
    if args.out:
        Path(args.out).write_text(json.dumps({"summary": summary, "mode": args.mode, "settings": args.set,
                                              "types": table, "p50_ms": p50, "p95_ms": p95, "runtime_s": seconds,
                                              "questions": results}, indent=1), encoding="utf-8")
    print(summary)
    sys.stdout.flush()
