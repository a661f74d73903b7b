"""`reverie bench dream`: the cost of a dream follows the new material, and facts survive dreams.

Two workspaces, one with 10 days of daily logs and one with 365, each already
consolidated (MEMORY.md holds the recent facts up to its budget, the watermark is
set), get one new day of logs; the dream over that day is timed and its model calls
counted. The 365-day one must cost at most 1.5 times the 10-day one. Then several
dreams in a row, each over a new day of distinct planted facts, each applied; the
share of planted facts found in MEMORY.md at the end is the retention.

Last line: `dream days10_s=... days365_s=... ratio=... retained=...`.
"""
from __future__ import annotations

import datetime as dt
import os
import statistics
import tempfile
import time
from pathlib import Path

FIRST_DAY = dt.date(2025, 1, 1)
TOPICS = ("sensor", "farm", "pipeline", "alert", "export", "tenant", "deploy", "firmware")


def register(sub) -> None:
    p = sub.add_parser("dream", help="dream cost vs workspace age, and fact retention across dreams")
    p.add_argument("--model", default="", help="catalog id or GGUF path (default: the settings' model)")
    p.add_argument("--no-model", action="store_true", help="deterministic dreams, no model calls")
    p.add_argument("--small-days", type=int, default=10)
    p.add_argument("--large-days", type=int, default=365)
    p.add_argument("--facts-per-day", type=int, default=6)
    p.add_argument("--retention-dreams", type=int, default=5)
    p.add_argument("--repeat", type=int, default=2, help="timed dreams per workspace size (median is reported)")
    p.set_defaults(func=cmd_bench_dream)


SYLLABLES = ("ka", "lo", "mi", "ren", "tu", "vas", "zel", "dor", "pim", "qua")


def site_name(number: int) -> str:
    """A made-up name per fact ("Lokami"), so no two planted facts are about the same thing."""
    digits = (number % 10, number // 10 % 10, number // 100 % 10, number // 1000 % 10)
    return "".join(SYLLABLES[d] for d in digits).capitalize()


def fact(day_index: int, n: int) -> str:
    """A distinct, realistic fact with a unique ticket number to look for later. Each is about
    its own named site: two facts that differ only in their ticket number would read as one
    fact restated (a duplicate) or renumbered (an update), and a dream is right to keep one."""
    topic = TOPICS[(day_index + n) % len(TOPICS)]
    number = day_index * 100 + n
    ticket, site = f"ORCH-{number}", site_name(number)
    templates = (
        f"The {topic} check for {site} ({ticket}) runs every {5 + n} minutes on farm {day_index % 7}",
        f"Maya prefers the {site} {topic} dashboard grouped by farm ({ticket})",
        f"Decided to keep {site} {topic} data for {30 + n} days, see {ticket}",
        f"Learned that the {site} {topic} job fails when the queue exceeds {1000 + n} items ({ticket})",
        f"Project note: {ticket} moves {site} {topic} alerts to email with a daily digest",
        f"Jonas owns {ticket}, the {site} {topic} migration planned for week {1 + n}",
    )
    return templates[n % len(templates)]


def build_workspace(root: Path, days: int, facts_per_day: int):
    """A consolidated workspace of `days` daily logs: MEMORY.md holds the newest facts that fit
    (about 3,000 tokens), each citing its log line; the watermark covers every log."""
    from core.dream.state import record_dream_finished
    from core.store.memory_md import bullet_id_for
    from core.tokens import count_tokens
    from core.workspace import Workspace

    ws = Workspace.create(root)
    bullets: list[str] = []
    newest = 0.0
    base_time = time.time() - (days + 2) * 86400
    for index in range(days):
        day = FIRST_DAY + dt.timedelta(days=index)
        lines = [f"# {day.isoformat()}", "", f"## Memory Flush — {day.isoformat()}T18:00:00+00:00"]
        for n in range(facts_per_day):
            lines.append(f"- {fact(index, n)}")
            bullets.append((fact(index, n), f"memory/{day.isoformat()}.md#L{len(lines)}"))
        path = ws.paths.daily_log(day)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")   # bench fixture, not a workspace edit
        stamp = base_time + index * 86400
        os.utime(path, (stamp, stamp))
        newest = max(newest, stamp)
    sections = ("Preferences", "Decisions", "Learnings", "Projects", "User profile")
    kept, tokens, taken = {s: [] for s in sections}, 0, set()
    for n, (text, ref) in enumerate(reversed(bullets)):
        line = f"- {text}"
        cost = count_tokens(line) + 1
        if tokens + cost > 3000:
            break
        tokens += cost
        ident = bullet_id_for(text, taken)
        taken.add(ident)
        kept[sections[n % len(sections)]].insert(0, f"{line} <!-- id:{ident} src:{ref} -->")
    text = "# MEMORY\n\n" + "".join(f"## {s}\n" + "".join(b + "\n" for b in kept[s]) + "\n" for s in sections)
    snap = ws.read_memory()
    ws.write_memory(text, snap.hash, reason="bench: consolidated memory")
    record_dream_finished(ws.paths, newest, now=dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=1))
    # The dreams that wrote these bullets embedded them; a steady-state dream finds them cached.
    from core.dream.judgment.similarity import load_similarity

    similarity = load_similarity(ws.paths, ws.settings)
    if similarity.semantic:
        similarity.prepare([b.split(" <!--")[0][2:] for s in sections for b in kept[s]])
        similarity.save_cache()
    return ws


def add_day(ws, index: int, facts: list[str]) -> None:
    day = FIRST_DAY + dt.timedelta(days=index)
    lines = [f"# {day.isoformat()}", "", f"## Memory Flush — {day.isoformat()}T18:00:00+00:00"]
    lines += [f"- {text}" for text in facts]
    ws.paths.daily_log(day).write_text("\n".join(lines) + "\n", encoding="utf-8")


def timed_dream(root: Path, days: int, facts_per_day: int, llm) -> dict:
    from core.dream.pipeline.consolidator import run_dream

    ws = build_workspace(root, days, facts_per_day)
    new = [fact(days, n) for n in range(facts_per_day)]
    add_day(ws, days, new)
    started = time.perf_counter()
    result = run_dream(ws, llm)
    seconds = time.perf_counter() - started
    stats = result.stats
    summary = result.proposal.summary if result.proposal else {}
    return {"seconds": seconds, "model_calls": stats.get("model_calls", 0), "status": result.status,
            "embedded": summary.get("embedded", 0),
            "files_seen": summary.get("files_seen", 0), "files_read": len(summary.get("files_read", [])),
            "bytes_read": summary.get("bytes_read", 0), "bullets": summary.get("bullets_before", 0)}


def retention(root: Path, dreams: int, facts_per_day: int, small_days: int, llm) -> tuple[int, int]:
    """Plant distinct facts over `dreams` new days, dream and apply after each; count survivors."""
    from core.dream.review.apply import apply_proposal
    from core.dream.pipeline.consolidator import run_dream

    ws = build_workspace(root, small_days, facts_per_day)
    planted: list[str] = []
    moment = dt.datetime.now(dt.timezone.utc)
    for d in range(dreams):
        index = small_days + 1 + d
        facts = [fact(index, n) for n in range(facts_per_day)]
        planted += [f"ORCH-{index * 100 + n}" for n in range(facts_per_day)]
        add_day(ws, index, facts)
        moment += dt.timedelta(days=1)
        result = run_dream(ws, llm, now=moment)
        if result.proposal is not None:
            apply_proposal(ws, result.proposal.id, reviewed=True, now=moment)
    text = ws.read_memory().text
    return sum(1 for ticket in planted if ticket in text), len(planted)


def cmd_bench_dream(args) -> int:
    from core.config import Settings

    llm = None
    model_id = "none"
    if not args.no_model:
        from core.llm import open_client

        settings = Settings().model
        if args.model:
            settings = Settings().replace("model", model=args.model).model
        llm = open_client(settings)
        model_id = getattr(llm, "model_id", settings.model)
    print(f"dream bench: model={model_id} facts_per_day={args.facts_per_day} "
          f"sizes={args.small_days}/{args.large_days} days, repeat={args.repeat}")
    try:
        with tempfile.TemporaryDirectory(prefix="reverie-dream-bench-") as tmp:
            base = Path(tmp)
            if llm is not None:   # load the model and the embedder outside the timings
                llm.complete([{"role": "user", "content": "hi"}], max_tokens=1)
            from core.dream.judgment.similarity import load_similarity
            from core.workspace import Workspace

            load_similarity(Workspace.create(base / "warm").paths, Settings()).prepare(["warm up"])
            timings: dict[int, list[dict]] = {args.small_days: [], args.large_days: []}
            for r in range(max(1, args.repeat)):
                for days in (args.small_days, args.large_days):
                    run = timed_dream(base / f"ws-{days}-{r}", days, args.facts_per_day, llm)
                    timings[days].append(run)
                    print(f"days={days:<4} run={r + 1} seconds={run['seconds']:.2f} model_calls={run['model_calls']} "
                          f"files_seen={run['files_seen']} files_read={run['files_read']} "
                          f"bytes_read={run['bytes_read']} bullets={run['bullets']} embedded={run['embedded']} "
                          f"status={run['status']}")
            small = statistics.median(run["seconds"] for run in timings[args.small_days])
            large = statistics.median(run["seconds"] for run in timings[args.large_days])
            found, planted = retention(base / "retention", args.retention_dreams, args.facts_per_day,
                                       args.small_days, llm)
            print(f"retention: {found} of {planted} planted facts in MEMORY.md after {args.retention_dreams} dreams")
    finally:
        if llm is not None:
            llm.close()
    ratio = large / small if small > 0 else float("inf")
    print(f"dream days{args.small_days}_s={small:.3f} days{args.large_days}_s={large:.3f} "
          f"ratio={ratio:.2f} retained={found / planted if planted else 0.0:.2f}")
    return 0
