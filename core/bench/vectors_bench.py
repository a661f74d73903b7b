"""`reverie bench vectors --n N`: hnswlib recall@10 against exact search, and query latency.

Embeds N distinct daily-log lines (the generator of `bench search`) with the
real model (cached in the benchmark folder after the first run), builds the
production VectorIndex (M, ef_construction, and ef as it grows with the index:
core/index/vectors.py), and
for 200 held-out query lines compares its top 10 with exact cosine search
(numpy). With --scale M > N it also adds M - N vectors near the real ones
(a real embedding plus Gaussian noise, renormalised: harder for hnswlib than
real data, whose neighbours cluster more) to show recall and latency at M.
Last line: `vectors n=N recall@10=... p50_ms=... p95_ms=...`
"""
from __future__ import annotations

import random
import sys
import time

from core.bench import _evalkit as kit


def register(sub) -> None:
    parser = sub.add_parser("vectors", help="vector index recall@10 against exact search, and latency")
    parser.add_argument("--n", type=int, default=5000, help="real embeddings to index")
    parser.add_argument("--scale", type=int, default=0, help="pad to this many vectors with noisy copies")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--ef", type=int, default=0, help="search ef (default: the production value)")
    parser.add_argument("--cache", help="folder for cached embeddings (default ~/.cache/reverie/bench)")
    parser.set_defaults(func=run)


def run(args) -> int:
    import numpy as np

    from core.bench.search_bench import line_text
    from core.index.embedding import default_embedder
    from core.index.vectors import EF_CONSTRUCTION, M, VectorIndex, ef_for

    embedder = default_embedder()
    rng = random.Random(11)
    texts = list(dict.fromkeys(line_text(rng, 480 + i) for i in range((args.n + args.queries) * 2)))
    texts = texts[: args.n + args.queries]
    folder = kit.cache_root(args.cache) / "vectors"
    folder.mkdir(exist_ok=True)
    cached = folder / f"{kit.data_key(texts, embedder.model_id)}.npy"
    t = time.perf_counter()
    if cached.exists():
        vectors = np.load(cached)
        print(f"embeddings: {len(texts)} from the cache")
    else:
        vectors = embedder.embed_batch(texts)
        np.save(cached, vectors)
        print(f"embeddings: {len(texts)} lines in {time.perf_counter() - t:.1f} s "
              f"({len(texts) / (time.perf_counter() - t):.0f} lines/s)")
    base, queries = vectors[: args.n], vectors[args.n:]
    if args.scale > args.n:
        gen = np.random.default_rng(5)
        extra = base[gen.integers(0, len(base), args.scale - args.n)] + gen.normal(0, 0.03, (args.scale - args.n, base.shape[1]))
        base = np.vstack([base, (extra / np.linalg.norm(extra, axis=1, keepdims=True)).astype(np.float32)])
    index = VectorIndex(folder / "bench.hnsw", base.shape[1], embedder.model_id, ef=args.ef or None)
    t = time.perf_counter()
    index.open(set(), lambda ids: iter(()))
    for start in range(0, len(base), 5000):
        index.add(list(range(start, min(start + 5000, len(base)))), base[start:start + 5000])
    build_s = time.perf_counter() - t
    exact = np.argsort(-(queries @ base.T), axis=1)[:, :10]
    recalls, latencies = [], []
    for q, truth in zip(queries, exact):
        t = time.perf_counter()
        found = index.query(q, 10)
        latencies.append((time.perf_counter() - t) * 1000)
        recalls.append(len({i for i, _ in found} & set(truth.tolist())) / 10)
    p50, p95 = kit.percentile(latencies, 0.5), kit.percentile(latencies, 0.95)
    recall = kit.mean(recalls)
    print(f"hnswlib M={M} ef_construction={EF_CONSTRUCTION} ef={args.ef or ef_for(len(base))}: {len(base)} vectors "
          f"({args.n} real) built in {build_s:.1f} s; {len(queries)} held-out real queries")
    print(f"vectors n={len(base)} recall@10={recall:.3f} p50_ms={p50:.3f} p95_ms={p95:.3f}")
    sys.stdout.flush()
    return 0
