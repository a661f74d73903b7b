"""Start llama-cpp-python's OpenAI-compatible server with the engine's llama.cpp defaults.

`python -m tests.support.server_launcher --model X --port N ...` is `python -m llama_cpp.server`
with core.llm.engine.llama_defaults() applied, so the server runs where the worker runs
(weight repacking off on CPUs whose AMX matmul faults). Used by test_openai_client.py.
"""
from __future__ import annotations

import runpy
import sys

from core.llm.engine import llama_defaults

if __name__ == "__main__":
    sys.argv = ["llama_cpp.server", *sys.argv[1:]]
    with llama_defaults():
        runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
