"""The model worker process: `python -m core.llm.worker FD CONFIG_JSON`.

It owns the llama_cpp.Llama object (not thread-safe; a Metal or model-file
fault kills the process, and killing it is the only sure way to stop a long
prompt). It talks to core/llm/client.py over one socket (a multiprocessing
Connection on the inherited file descriptor FD): requests in, events out.

Requests: {"op": "complete" | "count" | "render" | "info" | "cancel" | "shutdown", ...}
Events:   {"ev": "tok", "text"} while streaming, then {"ev": "done", ...} or
          {"ev": "error", "kind": "overflow" | "model" | "grammar", "message", ...}.
The model loads on the first request; after `idle_unload_s` without one the
process exits, which frees everything (the client starts a new one lazily).
"""
from __future__ import annotations

import json
import os
import sys
import time
import traceback
from dataclasses import asdict


def _gbnf(schema: dict, cache: dict) -> str:
    key = json.dumps(schema, sort_keys=True)
    if key not in cache:
        from llama_cpp.llama_grammar import json_schema_to_gbnf

        cache[key] = json_schema_to_gbnf(json.dumps(schema))
    return cache[key]


class Worker:
    def __init__(self, conn, config: dict):
        from core.llm.engine import EngineConfig

        self.conn = conn
        self.idle_unload_s = float(config.pop("idle_unload_s", 0) or 0)
        self.config = EngineConfig(**config)
        self.engine = None
        self.grammars: dict[str, str] = {}

    def _engine(self) -> tuple[object, float]:
        """The engine, loaded on first use; returns (engine, seconds spent loading now)."""
        if self.engine is not None:
            return self.engine, 0.0
        from core.llm.engine import Engine

        self.engine = Engine(self.config)
        return self.engine, self.engine.load_seconds

    def serve(self) -> None:
        while True:
            if not self.conn.poll(self.idle_unload_s or None):
                return                                   # idle: exit and free the model
            try:
                request = self.conn.recv()
            except (EOFError, OSError):
                return                                   # the client went away
            op = request.get("op")
            if op == "shutdown":
                return
            if op == "cancel":                           # arrived after its request finished
                continue
            try:
                self.conn.send(self.handle(op, request))
            except (BrokenPipeError, OSError):
                return
            except Exception as exc:   # report every engine failure to the caller as an error event
                self.conn.send({"ev": "error", "kind": "model", "message": f"{type(exc).__name__}: {exc}",
                                "trace": traceback.format_exc(limit=4)})

    def handle(self, op: str, request: dict) -> dict:
        engine, load_seconds = self._engine()
        if op == "info":
            return {"ev": "done", "n_ctx": engine.n_ctx, "template": engine.template_name,
                    "load_seconds": load_seconds, "n_vocab": engine.n_vocab, "pid": os.getpid()}
        if op == "count":
            return {"ev": "done", "counts": [engine.count(text) for text in request["texts"]]}
        prompt = engine.render(request["messages"])
        if op == "render":
            tokens = engine.prompt_tokens(prompt)
            return {"ev": "done", "prompt": prompt, "prompt_tokens": len(tokens), "head": tokens[:4]}
        if op == "complete":
            return self.complete(engine, prompt, request, load_seconds)
        return {"ev": "error", "kind": "model", "message": f"unknown request {op!r}"}

    def complete(self, engine, prompt: str, request: dict, load_seconds: float) -> dict:
        tokens = engine.prompt_tokens(prompt)
        max_tokens = int(request.get("max_tokens", 512))
        if len(tokens) + max_tokens > engine.n_ctx:
            return {"ev": "error", "kind": "overflow", "prompt_tokens": len(tokens), "context_length": engine.n_ctx,
                    "message": f"the prompt has {len(tokens)} tokens and up to {max_tokens} more were asked for; "
                               f"the model's context holds {engine.n_ctx}"}
        gbnf = None
        if request.get("json_schema") is not None:
            try:
                gbnf = _gbnf(request["json_schema"], self.grammars)
            except Exception as exc:   # an unsupported schema feature: say so, do not crash
                return {"ev": "error", "kind": "grammar", "message": f"cannot build a grammar for the schema: {exc}"}
        conn = self.conn
        cancelled = False

        def should_stop() -> bool:
            nonlocal cancelled
            while not cancelled and conn.poll(0):
                if conn.recv().get("op") in ("cancel", "shutdown"):
                    cancelled = True
            return cancelled

        emit = (lambda text: conn.send({"ev": "tok", "text": text})) if request.get("stream") else None
        started = time.perf_counter()
        result = engine.generate(tokens, max_tokens=max_tokens, temperature=float(request.get("temperature", 0.2)),
                                 stop=request.get("stop"), gbnf=gbnf, emit=emit, should_stop=should_stop)
        reply = {"ev": "done", **asdict(result), "load_seconds": load_seconds,
                 "worker_seconds": time.perf_counter() - started}
        if request.get("want_prompt"):
            reply["prompt"] = prompt
        return reply


def main(argv: list[str]) -> int:
    from core.childproc import parent_connection

    fd, config = int(argv[0]), json.loads(argv[1])
    conn = parent_connection(fd, int(config.pop("nice", 0) or 0))
    try:
        Worker(conn, config).serve()
    finally:
        conn.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
