"""Calling the model from harness pipelines: token counting, JSON replies, errors as values.

A pipeline (compaction, flush, session summary) must finish even when the model
fails or writes nonsense, so a failed call here is a value the caller falls back
from, never an exception, except for the two a caller must see: cancellation,
and a context overflow (the caller shrinks its prompt and retries).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Callable

from core.cancel import CancelToken
from core.errors import ContextOverflowError, ModelCancelled, ModelError
from core.harness.messages import Message, as_plain_chat
from core.tokens import count_tokens

_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def counter_for(llm) -> Callable[[str], int]:
    """Exact counts from the loaded model's tokenizer; cl100k_base without a model."""
    if llm is None:
        return count_tokens
    def count(text: str) -> int:
        try:
            return llm.count_tokens(text)
        except ModelError:
            return count_tokens(text)
    return count


def context_length(llm, default: int = 8192) -> int:
    if llm is None:
        return default
    try:
        return int(llm.context_length) or default
    except (ModelError, TypeError, ValueError):
        return default


@dataclass(frozen=True)
class ModelReply:
    text: str = ""
    parsed: Any = None
    error: str = ""           # why there is no usable reply ("" when there is one)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.error


def parse_json_object(text: str) -> Any:
    """The first JSON object in `text`, or None (small models wrap JSON in prose or fences)."""
    text = text.strip()
    for candidate in (text, *(m.group(0) for m in [_OBJECT.search(text)] if m)):
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


def ask(llm, messages: list[Message], *, max_tokens: int, json_schema: dict | None = None,
        temperature: float = 0.2, cancel: CancelToken | None = None) -> ModelReply:
    """One completion. Raises only ModelCancelled and ContextOverflowError."""
    try:
        completion = llm.complete(as_plain_chat(messages), max_tokens=max_tokens, temperature=temperature,
                                  json_schema=json_schema, cancel=cancel)
    except (ModelCancelled, ContextOverflowError):
        raise
    except ModelError as exc:
        return ModelReply(error=f"model failed: {exc}")
    except ValueError as exc:  # a client that could not decode the model's JSON
        return ModelReply(error=f"the model's reply could not be read: {exc}")
    parsed = completion.parsed
    if json_schema is not None and not isinstance(parsed, dict):
        parsed = parse_json_object(completion.text)
    reply = ModelReply(text=completion.text, parsed=parsed, prompt_tokens=completion.prompt_tokens,
                       completion_tokens=completion.completion_tokens, seconds=completion.seconds)
    if json_schema is not None and parsed is None:
        return ModelReply(text=completion.text, error="the model's reply was not a JSON object",
                          prompt_tokens=completion.prompt_tokens, completion_tokens=completion.completion_tokens,
                          seconds=completion.seconds)
    return reply
