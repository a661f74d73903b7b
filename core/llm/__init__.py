"""Local model engine: worker process, client protocol, structured output.

`open_client(settings)` is the one way in: the llama.cpp worker client for
backend "local" (settings.model is a catalog id or a GGUF path), the
OpenAI-compatible endpoint client for backend "openai" (LM Studio, Ollama,
llama-server). Both implement core.llm.protocol.LLMClient. Nothing heavy is
imported here: llama_cpp loads only inside the worker process.
"""
from __future__ import annotations

from core.config import ModelSettings
from core.errors import ConfigError
from core.llm.protocol import Completion, LLMClient, Message

BACKENDS = ("local", "openai")


def open_client(settings: ModelSettings | None = None) -> LLMClient:
    """A client for the configured model. Cheap: the model loads on the first request.

    Raises ModelNotFoundError / ModelError at once for a missing, corrupt, non-GGUF
    or too-large local file, ConfigError for an unknown backend.
    """
    settings = settings or ModelSettings()
    if settings.backend == "local":
        from core.llm.client import LocalClient

        return LocalClient(settings)
    if settings.backend == "openai":
        from core.llm.openai_client import OpenAIClient

        return OpenAIClient(settings)
    raise ConfigError(f"[model] backend must be one of {', '.join(BACKENDS)}, not {settings.backend!r}")


__all__ = ["BACKENDS", "Completion", "LLMClient", "Message", "open_client"]
