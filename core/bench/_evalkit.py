"""Shared pieces of the retrieval benchmarks (locomo, longmemeval, search, vectors).

Benchmark workspaces live in a persistent cache folder (default
~/.cache/reverie/bench, or $REVERIE_BENCH_CACHE, or --cache), keyed by a hash
of the data they were built from, so a second run opens the same workspaces:
nothing is re-read, re-indexed or re-embedded (the index's own content-hash
embedding cache does the rest).
"""
from __future__ import annotations

import dataclasses
import hashlib
import os
import shutil
import time
from pathlib import Path
from typing import Any, Iterable

from core.errors import CoreError


def cache_root(explicit: str | None) -> Path:
    base = explicit or os.environ.get("REVERIE_BENCH_CACHE") or str(Path.home() / ".cache" / "reverie" / "bench")
    root = Path(base).expanduser()
    root.mkdir(parents=True, exist_ok=True)
    return root


def data_key(*parts: Any) -> str:
    h = hashlib.blake2b(digest_size=8)
    for part in parts:
        h.update(repr(part).encode("utf-8"))
        h.update(b"\x00")
    return h.hexdigest()


def fresh_dir(path: Path) -> Path:
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    return path


def percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def mean(values: Iterable[float]) -> float:
    values = list(values)
    return sum(values) / len(values) if values else 0.0


def add_mode_arg(parser, default: str = "hybrid") -> None:
    """--mode with the search modes' one set of names (keyword, meaning, hybrid); older names are accepted."""
    import argparse

    from core.index.results import MODES, SearchModeError, canonical_mode

    def mode(name: str) -> str:
        try:
            return canonical_mode(name)
        except SearchModeError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from exc

    parser.add_argument("--mode", type=mode, choices=MODES, default=default,
                        help="keyword, meaning or hybrid (the older names fts and vector are accepted)")


def add_common_args(parser) -> None:
    add_mode_arg(parser)
    parser.add_argument("--out", help="write per-question results and the summary as JSON here")
    parser.add_argument("--cache", help="folder for the benchmark workspaces (default ~/.cache/reverie/bench)")
    parser.add_argument("--fresh", action="store_true", help="rebuild the workspaces and their indexes from scratch")
    parser.add_argument("--limit", type=int, default=0, help="use only the first N records (a quick look)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override an index option or search tuning knob (for ablations), e.g. rrf_k=30")
    parser.add_argument("--model", default="", help="search.embedding_model (default: the bundled MiniLM); "
                                                     "e.g. multilingual-e5-small, use-multilingual-v3")


def register_eval(sub, name: str, help: str, file_help: str, run) -> None:
    """`reverie bench NAME FILE --mode ... --out ...`: the shape every retrieval evaluation shares."""
    parser = sub.add_parser(name, help=help)
    parser.add_argument("file", help=file_help)
    add_common_args(parser)
    parser.set_defaults(func=run)


def workspace(root: Path, fresh: bool, build) -> Any:
    """The map `build(root)` returned when it wrote the workspace at `root` (built once, then cached)."""
    import json

    marker = root / ".bench-ready.json"
    if fresh or not marker.exists():
        fresh_dir(root)
        marker.write_text(json.dumps(build(root)), encoding="utf-8")
    return json.loads(marker.read_text(encoding="utf-8"))


def index_db(root: Path, model: str = "") -> Path:
    """The index file of a benchmark workspace for a model: one per model, so that comparing models
    does not throw away each other's embedding cache (an index drops it when its model changes)."""
    name = "".join(c if c.isalnum() or c in "-._" else "_" for c in model.strip())
    return root / ".reverie" / (f"index-{name}.db" if name else "index.db")


def open_index(root: Path, mode: str, options, tuning, model: str = "", index_root: Path | None = None):
    """The production SearchIndex of a benchmark workspace, synced and (unless keyword-only) fully embedded.
    `index_root`: where its index files go when not in the workspace (a workspace that is not ours to write in).

    Returns (index, seconds spent waiting for embeddings); the caller closes the index.
    """
    from core.config import SearchSettings
    from core.index import SearchIndex

    index = SearchIndex(root, index_db(index_root or root, model), SearchSettings(embedding_model=model),
                        embedder=False if mode == "keyword" else None, options=options, tuning=tuning)
    try:
        index.sync()
        started = time.perf_counter()
        if mode != "keyword" and not index.wait_embeddings(timeout=3600):
            raise CoreError(f"embedding did not finish: {index.status().problems}")
    except BaseException:
        index.close()
        raise
    return index, time.perf_counter() - started


def overrides(pairs: list[str]):
    """--set key=value pairs split into IndexOptions and Tuning replacements."""
    from core.index.hybrid import Tuning
    from core.index.lines import IndexOptions

    options, tuning = IndexOptions(), Tuning()
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        key = key.strip()
        target = options if key in {f.name for f in dataclasses.fields(IndexOptions)} else tuning
        if not sep or key not in {f.name for f in dataclasses.fields(target)}:
            raise CoreError(f"--set {pair!r}: not KEY=VALUE with a known key "
                            f"({', '.join(f.name for f in dataclasses.fields(IndexOptions) + dataclasses.fields(Tuning))})")
        current = getattr(target, key)
        value: Any
        if isinstance(current, bool):
            value = raw.strip().lower() in ("1", "true", "yes", "on")
        elif isinstance(current, int):
            value = int(raw)
        elif isinstance(current, float):
            value = float(raw)
        else:
            value = raw
        if target is options:
            options = dataclasses.replace(options, **{key: value})
        else:
            tuning = dataclasses.replace(tuning, **{key: value})
    return options, tuning


def half_of(key: str) -> int:
    """0 or 1: which half of a development split a question falls in (sha1 of its id or text).

    Every tuning knob is measured on both halves and kept only when it helps both
    (core/index/hybrid.py): a knob that helps one half only fits those questions,
    not the task.
    """
    return int(hashlib.sha1(str(key).encode("utf-8")).hexdigest(), 16) % 2


def halves_line(rows: list[dict], key: str, metric: str) -> str:
    """`halves: H0 metric=... (n) H1 metric=... (n)` for the rows, split by half_of(row[key])."""
    parts = []
    for half in (0, 1):
        values = [r[metric] for r in rows if half_of(r[key]) == half and r[metric] is not None]
        parts.append(f"H{half} {metric}={mean(values):.3f} ({len(values)})")
    return "halves: " + " ".join(parts)


class Timer:
    def __init__(self):
        self.start = time.perf_counter()

    @property
    def seconds(self) -> float:
        return time.perf_counter() - self.start
