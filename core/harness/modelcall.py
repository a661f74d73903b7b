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
from core.errors import ContextOverflowError, ModelCancelled, ModelError, TruncatedReplyError
from core.harness.messages import Message, as_plain_chat
from core.tokens import count_tokens

_OBJECT = re.compile(r"\{.*\}", re.DOTALL)
LOOP_MIN_CHARS = 96      # a stretch this long repeating one short pattern (3+ times) is a loop, not text
LOOP_MAX_PERIOD = 80


def looping(text: str) -> bool:
    """The text ends in one pattern of at most LOOP_MAX_PERIOD characters repeated over LOOP_MIN_CHARS.

    A small model that starts repeating itself ("# \n# \n# ...", the same bullet again and again)
    never stops on its own: it runs to max_tokens, which at a few tokens a second is the slowest
    part of a long compaction, and everything it writes after the first copy is thrown away.
    """
    n = len(text)
    if n < LOOP_MIN_CHARS:
        return False
    for period in range(1, LOOP_MAX_PERIOD + 1):
        times = max(3, -(-LOOP_MIN_CHARS // period))
        span = period * times
        if span > n:
            break
        if text[-span:] == text[-period:] * times:
            return True
    return False


class _Looped(ModelCancelled):
    """Raised from the token callback to stop a model that repeats itself (caught in ask).

    A ModelCancelled, so the worker client treats it as a cancel (the model stops, the worker
    lives on) rather than as a bug in the callback (which would restart the worker).
    """


class _LoopWatch:
    def __init__(self):
        self.pieces: list[str] = []
        self.size = 0
        self.since_check = 0

    def __call__(self, piece: str) -> None:
        self.pieces.append(piece)
        self.size += len(piece)
        self.since_check += len(piece)
        if self.since_check >= 16:       # checking every few tokens is plenty, and cheap
            self.since_check = 0
            if looping("".join(self.pieces)[-(LOOP_MAX_PERIOD * 3 + LOOP_MIN_CHARS):]):
                raise _Looped()

    @property
    def text(self) -> str:
        return "".join(self.pieces)


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
    cut: bool = False         # the reply was cut off mid-way (TruncatedReplyError); `text` holds only the
                              # lines that ended before a token-limit cut ("" when the server broke off)

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
    """One completion. Raises only ModelCancelled and ContextOverflowError.

    A reply that falls into a loop is stopped there; its text up to the loop is the reply
    (what came before is often usable: a few bullets, then the same one over and over).
    """
    watch = _LoopWatch()
    try:
        completion = llm.complete(as_plain_chat(messages), max_tokens=max_tokens, temperature=temperature,
                                  json_schema=json_schema, on_token=watch, cancel=cancel)
    except _Looped:
        return _looped_reply(watch.text, len(watch.pieces), json_schema is not None)
    except (ModelCancelled, ContextOverflowError):
        raise
    except TruncatedReplyError as exc:
        return ModelReply(text=exc.whole_lines, error=f"model reply cut off: {exc}", cut=True)
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


def _looped_reply(text: str, pieces: int, wants_json: bool) -> ModelReply:
    parsed = parse_json_object(text) if wants_json else None
    if wants_json and parsed is None:
        return ModelReply(text=text, error="the model's reply fell into a loop before its JSON was complete",
                          completion_tokens=pieces)
    return ModelReply(text=text, parsed=parsed, completion_tokens=pieces)
