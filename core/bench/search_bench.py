"""`reverie bench search --lines N [--mode fts|hybrid]`: index build speed, search latency, reindex time.

Builds a synthetic workspace of N lines of realistic daily-log text (an
agent's notes on deploys, meetings, people, preferences; about one line in ten
Chinese), ~200 lines per daily log, and measures with the production
SearchIndex:
- build: lines indexed per second by a first sync() of an empty index;
- search: p50/p95 over 200 queries of 1-3 words drawn from the text;
- reindex: append 20 lines to the newest log, reindex_file() it (median of 5);
- cold: `reverie search WS QUERY` as an agent runs it from its shell, a new process each time:
  milliseconds from its start to its first line of output (median of 5; keyword mode: no
  model, no numpy; hybrid mode: answered by a running process over .reverie/search.sock,
  as `reverie serve` or the app would, with this index).

--mode hybrid measures hybrid search instead, query embedding included. Its
vectors must exist first: with --vectors model every line is embedded (hours
at 100k lines on a CPU); with --vectors synthetic (the default above 5,000
lines) each line's cached vector is a real MiniLM embedding of one of 2,000
sample lines plus noise, written into the index's embedding cache, so the
production worker fills hnswlib from the cache without the model. The query
is always embedded by the real model.
Last line: `search lines=N build_lps=... p50_ms=... p95_ms=... reindex_ms=... cold_ms=... load=...`
(load: the 1-minute load average when the cold processes ran).
"""
from __future__ import annotations

import datetime as dt
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path

from core.bench import _evalkit as kit

PEOPLE = ("Maya", "Chen Wei", "Priya", "Tomas", "Aiko", "Lena", "Omar", "Sofia", "Jonas", "Ravi")
PROJECTS = ("Orion", "Basalt", "Quokka", "Juniper", "Marlin", "Tundra", "Saffron", "Halcyon", "Ember", "Lattice")
THINGS = ("parser", "dashboard", "billing service", "login page", "search index", "mobile app", "data pipeline",
          "firmware", "CI runner", "backup job", "API gateway", "invoice export")
VERBS = ("fixed", "deployed", "reviewed", "refactored", "benchmarked", "rolled back", "documented", "tested",
         "migrated", "profiled")
PLACES = ("staging", "production", "the dev cluster", "eu-west-1", "the old VM", "a feature branch")
FEELINGS = ("prefers tea over coffee", "wants short status updates", "dislikes meetings before 10",
            "likes detailed code reviews", "asked for weekly summaries", "is on holiday next week")
ZH = ("陈伟确认固件 {n} 已经推送到 {p}% 的设备。", "今天开会讨论了{proj}项目的数据库迁移。",
      "{who}说下周三之前要完成{thing}的测试。", "把{thing}部署到测试环境，端口是 {port}。",
      "周末去香山爬山，天气很好。", "{proj}的发布推迟到下个月，原因是性能问题。")
WORDS = [w for w in " ".join(PROJECTS + THINGS + VERBS + PLACES + FEELINGS).lower().split() if len(w) > 3] + \
        ["固件", "数据库", "测试", "部署", "会议", "发布", "性能", "爬山"]


def register(sub) -> None:
    parser = sub.add_parser("search", help="index build speed, search latency and reindex time at N lines")
    parser.add_argument("--lines", type=int, default=100_000)
    kit.add_mode_arg(parser, default="keyword")
    parser.add_argument("--vectors", choices=("model", "synthetic"), default=None,
                        help="how lines get vectors in hybrid mode (default: model up to 5,000 lines)")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--cache", help="folder for the benchmark workspace (default ~/.cache/reverie/bench)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cold", type=int, default=5, help="cold `reverie search` processes to time (0: none)")
    parser.set_defaults(func=run)


def cold_first_output_ms(root: Path, query: str, mode: str, runs: int) -> tuple[list[float], list[float]]:
    """Milliseconds from starting `reverie search` in a new process to its first line of output, and the
    CPU time each process used (what it costs whatever else the cores are doing)."""
    import resource

    times, cpu = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        with subprocess.Popen([sys.executable, "-m", "core", "search", str(root), query, "--mode", mode, "-k", "10"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True) as proc:
            proc.stdout.readline()
            times.append((time.perf_counter() - started) * 1000)
            proc.stdout.read()
        if proc.returncode != 0:
            raise RuntimeError(f"reverie search failed (exit {proc.returncode})")
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append((after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000)
    return times, cpu


def line_text(rng: random.Random, minute: int) -> str:
    clock = f"[{minute // 60 % 24:02d}:{minute % 60:02d}]"
    who, proj, thing = rng.choice(PEOPLE), rng.choice(PROJECTS), rng.choice(THINGS)
    roll = rng.random()
    if roll < 0.1:
        text = rng.choice(ZH).format(n=f"{rng.randint(1, 4)}.{rng.randint(0, 9)}", p=rng.randint(5, 95), proj=proj,
                                     who=who, thing=thing, port=rng.randint(3000, 9999))
    elif roll < 0.25:
        text = f"{who} {rng.choice(FEELINGS)}."
    elif roll < 0.6:
        text = f"{rng.choice(VERBS).capitalize()} the {thing} of {proj} on {rng.choice(PLACES)}; build {rng.randint(1000, 99999)}."
    elif roll < 0.8:
        text = (f"Meeting with {who} about {proj}: agreed to ship the {thing} by "
                f"{rng.choice(('Monday', 'Friday', 'the end of the month', 'next sprint'))}.")
    else:
        text = (f"The {thing} on {rng.choice(PLACES)} {rng.choice(('timed out', 'ran out of memory', 'passed', 'got slower'))} "
                f"after {rng.randint(2, 500)} requests; {who} is looking into it (ticket {proj[:3].upper()}-{rng.randint(1, 9999)}).")
    return f"- {clock} {text}"


def build_workspace(root: Path, lines: int, seed: int) -> Path:
    rng = random.Random(seed)
    (root / "memory").mkdir(parents=True, exist_ok=True)
    (root / ".reverie").mkdir(exist_ok=True)
    (root / "MEMORY.md").write_text("# MEMORY\n\n## Preferences\n- Maya prefers tea over coffee\n", encoding="utf-8")
    day, written, newest = dt.date(2024, 1, 1), 0, None
    while written < lines:
        count = min(200, lines - written)
        minute = 8 * 60
        body = [f"# {day.isoformat()}", ""]
        for _ in range(count):
            minute += rng.randint(1, 4)
            body.append(line_text(rng, minute))
        newest = root / "memory" / f"{day.isoformat()}.md"
        newest.write_text("\n".join(body) + "\n", encoding="utf-8")
        written += count
        day += dt.timedelta(days=1)
    return newest


def synthetic_vectors(db: Path, rng: random.Random) -> int:
    """Give every line a cached vector near a real embedding (see the module docstring)."""
    import numpy as np

    from core.index.embedding import default_embedder

    embedder = default_embedder()
    sample = [line_text(rng, 600 + i) for i in range(2000)]
    base = embedder.embed_batch(sample)
    conn = sqlite3.connect(db)
    hashes = [h for (h,) in conn.execute("SELECT DISTINCT ehash FROM lines")]
    gen = np.random.default_rng(7)
    for start in range(0, len(hashes), 5000):
        chunk = hashes[start:start + 5000]
        vecs = base[gen.integers(0, len(base), len(chunk))] + gen.normal(0, 0.03, (len(chunk), base.shape[1]))
        vecs = (vecs / np.linalg.norm(vecs, axis=1, keepdims=True)).astype(np.float32)
        conn.executemany("INSERT OR IGNORE INTO embeddings(hash, vector) VALUES(?, ?)",
                         [(h, v.tobytes()) for h, v in zip(chunk, vecs)])
        conn.commit()
    # The model's id too: an index opened with a model it has no record of drops the cache as stale.
    conn.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)",
                     [("embedding_dim", str(base.shape[1])), ("embedding_model", embedder.model_id)])
    conn.commit()
    conn.close()
    return len(hashes)


def run(args) -> int:
    from core.config import SearchSettings
    from core.index import SearchIndex

    rng = random.Random(args.seed)
    root = kit.fresh_dir(kit.cache_root(args.cache) / f"search-{args.lines}-{args.seed}")
    newest = build_workspace(root, args.lines, args.seed)
    db = root / ".reverie" / "index.db"
    vectors = args.vectors or ("model" if args.lines <= 5000 else "synthetic")
    hybrid = args.mode != "keyword"
    index = SearchIndex(root, db, SearchSettings(), embedder=None if hybrid and vectors == "model" else False)
    t = time.perf_counter()
    report = index.sync()
    build_s = time.perf_counter() - t
    lines = index.status().lines
    print(f"built: {lines} lines in {len(report.added)} files, {build_s:.1f} s ({lines / build_s:.0f} lines/s)")
    if hybrid:
        if vectors == "synthetic":
            index.close()
            t = time.perf_counter()
            n = synthetic_vectors(db, rng)
            index = SearchIndex(root, db, SearchSettings())
            index.wait_embeddings()
            print(f"vectors: {n} synthetic (near real MiniLM embeddings), loaded into hnswlib in {time.perf_counter() - t:.1f} s")
        else:
            t = time.perf_counter()
            index.wait_embeddings()
            print(f"vectors: {index.status().vectors} embedded by the model in {time.perf_counter() - t:.1f} s")
        index.search("warm up the model", mode=args.mode)
    queries = [" ".join(rng.sample(WORDS, rng.randint(1, 3))) for _ in range(args.queries)]
    latencies, cpu, empty = [], [], 0
    for query in queries:
        t, c = time.perf_counter(), time.thread_time()
        results = index.search(query, k=10, mode=args.mode)
        latencies.append((time.perf_counter() - t) * 1000)
        cpu.append((time.thread_time() - c) * 1000)   # what the query cost, whatever else the cores were doing
        empty += not results.hits
    if args.mode != "keyword":
        # Keyword search on the same index with the vectors loaded: the vectors must not slow it down.
        keyword = []
        for query in queries:
            t = time.perf_counter()
            index.search(query, k=10, mode="keyword")
            keyword.append((time.perf_counter() - t) * 1000)
        print(f"mode=fts on the same index, vectors loaded: p50={kit.percentile(keyword, 0.5):.2f} ms "
              f"p95={kit.percentile(keyword, 0.95):.2f} ms")
    cold, cold_cpu = [], []
    load = os.getloadavg()[0]
    if args.cold:
        from core.index.search_socket import SearchServer, index_answer

        server = SearchServer(root / ".reverie", index_answer(index), by="serve") if hybrid else None
        if server is not None and not server.start():
            raise RuntimeError("could not listen on .reverie/search.sock")
        try:
            cold, cold_cpu = cold_first_output_ms(root, rng.choice(WORDS), args.mode, args.cold)
        finally:
            if server is not None:
                server.close()
        load = os.getloadavg()[0]    # a cold start is what a busy machine slows most: say how busy it was
        how = "answered by a running process" if hybrid else "no model, no numpy"
        print(f"cold `reverie search --mode {args.mode}` ({how}): first output after "
              f"{', '.join(f'{t:.0f}' for t in cold)} ms (CPU time {', '.join(f'{t:.0f}' for t in cold_cpu)} ms; "
              f"load {load:.1f} on {os.cpu_count()} cores)")
    reindex, reindex_cpu = [], []
    for round_ in range(5):
        with open(newest, "a", encoding="utf-8") as handle:
            handle.write("".join(line_text(rng, 1200 + round_ * 20 + i) + "\n" for i in range(20)))
        t, c = time.perf_counter(), time.thread_time()
        index.reindex_file(newest.relative_to(root).as_posix())
        reindex.append((time.perf_counter() - t) * 1000)
        reindex_cpu.append((time.thread_time() - c) * 1000)
    index.close()
    p50, p95 = kit.percentile(latencies, 0.5), kit.percentile(latencies, 0.95)
    print(f"mode={args.mode}: {len(queries)} queries of 1-3 words, {empty} without hits; "
          f"p50={p50:.2f} ms p95={p95:.2f} ms max={max(latencies):.1f} ms; "
          f"CPU time p50={kit.percentile(cpu, 0.5):.2f} ms p95={kit.percentile(cpu, 0.95):.2f} ms")
    print(f"machine load while measuring: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"reindex after appending 20 lines: {', '.join(f'{r:.1f}' for r in reindex)} ms "
          f"(CPU time median {statistics.median(reindex_cpu):.1f} ms)")
    print(f"search lines={lines} build_lps={lines / build_s:.0f} p50_ms={p50:.2f} p95_ms={p95:.2f} "
          f"reindex_ms={statistics.median(reindex):.1f} cold_ms={statistics.median(cold) if cold else 0:.0f} "
          f"load={load:.1f}")
    sys.stdout.flush()
    return 0
