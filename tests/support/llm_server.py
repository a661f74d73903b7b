"""A real OpenAI-compatible model server for tests: llama-cpp-python's server on a free port.

`running_server(model_path, log_path, n_ctx=...)` starts tests/support/server_launcher.py (llama_cpp.server
with the engine's llama.cpp defaults), waits until /v1/models answers, yields the base URL and stops
the server afterwards. Shared by the OpenAI client tests and the CLI --backend tests.
"""
from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Iterator

from tests.support.processes import python_env



def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def running_server(model_path, log_path: Path, *, n_ctx: int = 2048, alias: str = "smollm2",
                   timeout_s: float = 180.0, procs: list | None = None) -> Iterator[str]:
    """Start the server, yield its base URL, stop it afterwards. `procs`, when given, receives the
    server's Popen (a test that kills it mid-reply)."""
    from core.llm.engine import LLAMA_ENV

    port = free_port()
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "tests.support.server_launcher", "--model", str(model_path), "--host", "127.0.0.1",
                                 "--port", str(port), "--n_ctx", str(n_ctx), "--model_alias", alias],
                                stdout=log, stderr=subprocess.STDOUT, env=python_env(**LLAMA_ENV))
        base = f"http://127.0.0.1:{port}/v1"
        if procs is not None:
            procs.append(proc)
        try:
            deadline = time.monotonic() + timeout_s
            while True:
                if proc.poll() is not None:
                    raise RuntimeError(f"llama_cpp.server exited ({proc.returncode}); see {log_path}")
                try:
                    with urllib.request.urlopen(f"{base}/models", timeout=2) as response:
                        json.loads(response.read())
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"llama_cpp.server did not start within {timeout_s:.0f} s") from None
                    time.sleep(0.5)
            yield base
        finally:
            proc.terminate()      # (a server a test killed already: terminate and wait return at once)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)
