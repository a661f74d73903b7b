"""Model choice on any command line: `--model`, `--backend`, `--base-url`, `--server-model`, `--api-key`.

A command group adds them with `add_model_arguments(parser)` and turns them into
ModelSettings with `model_settings(args, base)`, so "use the server I already
run" is one flag everywhere: `--backend openai --base-url http://127.0.0.1:1234/v1`.
"""
from __future__ import annotations

import dataclasses

from core.config import ModelSettings

FLAGS = {"model": "model", "backend": "backend", "base_url": "base_url", "server_model": "server_model",
         "api_key": "api_key", "context": "context_length"}


def add_model_arguments(parser, *, with_model: bool = True) -> None:
    group = parser.add_argument_group("model")
    if with_model:
        group.add_argument("--model", default=None, help="catalog id or .gguf path (default: settings)")
    group.add_argument("--backend", choices=("local", "openai"), default=None,
                       help="local: llama.cpp here; openai: a server you run (LM Studio, Ollama, llama-server)")
    group.add_argument("--base-url", dest="base_url", default=None, help="the server's OpenAI-compatible URL")
    group.add_argument("--server-model", dest="server_model", default=None, help="model name on the server")
    group.add_argument("--api-key", dest="api_key", default=None)
    group.add_argument("--context", type=int, default=None, help="context length in tokens")


def model_settings(args, base: ModelSettings | None = None) -> ModelSettings:
    """`base` (the workspace's settings, or the defaults) with whatever flags were given."""
    changes = {field: getattr(args, flag) for flag, field in FLAGS.items() if getattr(args, flag, None) is not None}
    return dataclasses.replace(base or ModelSettings(), **changes)
