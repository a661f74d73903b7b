"""`reverie bench NAME ...`: every module in core/bench/ with `register(subparsers)` adds one benchmark."""
from __future__ import annotations

import importlib
import pkgutil


def register(sub) -> None:
    import core.bench as bench_pkg

    parser = sub.add_parser("bench", help="run a benchmark and print its figures")
    bench_sub = parser.add_subparsers(dest="bench", metavar="BENCHMARK")
    bench_sub.required = True
    for info in sorted(pkgutil.iter_modules(bench_pkg.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"core.bench.{info.name}")
        if hasattr(module, "register"):
            module.register(bench_sub)
