"""`reverie bench gui --lines N`: the desktop app's responsiveness on a big workspace while it works.

Builds a workspace of N daily-log lines (the bundled demo plus synthetic logs of
realistic text, ~200 lines each, some Chinese), then runs the real app in a
subprocess (`python -m desktop.bench_gui`, offscreen unless --visible): core
never imports Qt, so the app side lives in desktop/. The app opens the
workspace, builds its index from scratch (keyword rows, then embeddings in the
background) and dreams, while a person's use is simulated (searches, opening
logs, switching views). A 10 ms heartbeat on the main thread measures the
longest stall; the first window time runs from the launch of the process to
the first paint. Targets: first window <= 1.5 s, longest stall <= 50 ms.

Last line: `gui first_window_s=... max_stall_ms=...`
"""
from __future__ import annotations

import datetime as dt
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def register(sub) -> None:
    parser = sub.add_parser("gui", help="first-window time and longest main-thread stall of the app at N lines")
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--seconds", type=float, default=20.0, help="how long to measure while the jobs run")
    parser.add_argument("--no-model", action="store_true", help="dream without a model (rules only)")
    parser.add_argument("--visible", action="store_true", help="use the real display instead of offscreen")
    parser.add_argument("--keep", help="build the workspace in this folder and keep it")
    parser.set_defaults(func=run)


def build_workspace(root: Path, lines: int, seed: int = 7) -> int:
    """The demo workspace plus synthetic daily logs before it, `lines` daily-log lines in all."""
    from core.bench.search_bench import line_text
    from core.demo import write_demo
    from core.store.paths import WorkspacePaths

    write_demo(root)
    paths = WorkspacePaths(root)
    have = sum(path.read_text(encoding="utf-8").count("\n") for path in paths.memory_dir.glob("*.md"))
    rng = random.Random(seed)
    day = min(dt.date.fromisoformat(p.stem) for p in paths.memory_dir.glob("*.md")) - dt.timedelta(days=1)
    written = have
    while written < lines:
        count = min(200, lines - written)
        minute = 8 * 60
        body = [f"# {day.isoformat()}", ""]
        for _ in range(count - 2):
            minute += rng.randint(1, 4)
            body.append(line_text(rng, minute))
        (paths.memory_dir / f"{day.isoformat()}.md").write_text("\n".join(body) + "\n", encoding="utf-8")
        written += count
        day -= dt.timedelta(days=1)
    return written


def run(args) -> int:
    from core.errors import CoreError

    if args.lines < 100:
        raise CoreError("--lines must be at least 100")
    holder = None
    if args.keep:
        root = Path(args.keep).expanduser().resolve()
        if root.exists() and any(root.iterdir()):
            raise CoreError(f"{root} is not empty; --keep needs a new folder (the index must be built fresh)")
    else:
        holder = tempfile.TemporaryDirectory(prefix="reverie-bench-gui-")
        root = Path(holder.name) / "workspace"
    try:
        started = time.perf_counter()
        lines = build_workspace(root, args.lines)
        print(f"workspace: {lines:,} daily-log lines in {root} (built in {time.perf_counter() - started:.1f} s)")
        sys.stdout.flush()
        env = dict(os.environ)
        if not args.visible:
            env["QT_QPA_PLATFORM"] = "offscreen"
        env.setdefault("HF_HUB_OFFLINE", "1")
        env.setdefault("TRANSFORMERS_OFFLINE", "1")
        env.setdefault("TOKENIZERS_PARALLELISM", "false")
        command = [sys.executable, "-m", "desktop.bench_gui", str(root), "--seconds", str(args.seconds)]
        if args.no_model:
            command.append("--no-model")
        command += ["--t0", repr(time.time())]
        child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        last = ""
        assert child.stdout is not None
        for line in child.stdout:
            sys.stdout.write(line)
            sys.stdout.flush()
            if line.strip():
                last = line.strip()
        code = child.wait()
        if code != 0 or not last.startswith("gui first_window_s="):
            raise CoreError(f"the app side of the benchmark failed (exit status {code}); see its output above")
        return 0
    finally:
        if holder is not None:
            holder.cleanup()
