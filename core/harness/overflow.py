"""Context-overflow recovery: compact with trigger 1 and retry exactly once.

The model engine raises ContextOverflowError before generating; a server the
person runs reports an overflow as error text instead ("context_length_exceeded",
"maximum context", ...). Either way the conversation is compacted at once
(trigger 1) and the call is retried one time. A second overflow, or an overflow
with compaction switched off, reaches the caller.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from core.config import OverflowSettings
from core.errors import ContextOverflowError
from core.harness.messages import Message


def is_overflow(exc: BaseException, settings: OverflowSettings | None = None) -> bool:
    if isinstance(exc, ContextOverflowError):
        return True
    patterns = (settings or OverflowSettings()).patterns
    text = str(exc).lower()
    return any(p.lower() in text for p in patterns)


def as_overflow_error(exc: BaseException, note: str = "") -> ContextOverflowError:
    if isinstance(exc, ContextOverflowError) and not note:
        return exc
    err = ContextOverflowError(f"{exc}{note}", prompt_tokens=getattr(exc, "prompt_tokens", 0),
                               context_length=getattr(exc, "context_length", 0))
    err.__cause__ = exc
    return err


@dataclass
class Recovered:
    value: Any
    messages: list[Message]
    recovered: bool = False
    compaction: Any = None      # the CompactionResult of the forced compaction


class OverflowRecovery:
    def __init__(self, compactor, settings: OverflowSettings | None = None):
        self.compactor = compactor
        self.settings = settings or OverflowSettings()
        self.recoveries = 0       # how many times a forced compaction + retry ran

    def call(self, fn: Callable[[list[Message]], Any], messages: list[Message], *,
             keep_tokens: int | None = None) -> Recovered:
        try:
            return Recovered(fn(messages), messages)
        except Exception as exc:  # noqa: BLE001 - servers report overflows with any exception type
            if not is_overflow(exc, self.settings):
                raise
            if not self.settings.enabled or self.compactor is None:
                raise as_overflow_error(exc, " (overflow recovery needs compaction, which is not configured)") \
                    from exc
            first = exc
        compaction = self.compactor.compact(messages, trigger_messages=1, keep_tokens=keep_tokens,
                                            reason="context overflow")
        if not compaction.compacted:
            raise as_overflow_error(first, f" (nothing left to compact: {compaction.reason})")
        self.recoveries += 1
        try:
            value = fn(compaction.messages)
        except Exception as exc:  # noqa: BLE001
            if is_overflow(exc, self.settings):
                raise as_overflow_error(exc, " (still too long after compacting; retried once)") from exc
            raise
        return Recovered(value, compaction.messages, True, compaction)
