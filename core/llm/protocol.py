"""The one interface every model client implements.

Pipelines (compaction, flush, dreaming, the agent) depend on this protocol
only: the llama.cpp worker client, the OpenAI-compatible endpoint client and
the scripted client used by unit tests all sit behind it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Protocol, runtime_checkable

from core.cancel import CancelToken

Message = dict[str, Any]  # OpenAI chat shape: {"role": ..., "content": ..., ["tool_calls"], ["tool_call_id"]}
TokenCallback = Callable[[str], None]


@dataclass(frozen=True)
class Completion:
    text: str
    prompt_tokens: int
    completion_tokens: int
    seconds: float                 # wall time of the whole request
    ttft_seconds: float = 0.0      # time to first token
    finish_reason: str = "stop"    # "stop" | "length" | "cancelled"
    model: str = ""
    parsed: Any = None             # the validated JSON value when json_schema was given
    extra: dict = field(default_factory=dict)

    @property
    def decode_tps(self) -> float:
        decode = self.seconds - self.ttft_seconds
        return self.completion_tokens / decode if decode > 0 else 0.0


@runtime_checkable
class LLMClient(Protocol):
    model_id: str

    @property
    def context_length(self) -> int: ...

    def complete(
        self,
        messages: list[Message],
        *,
        max_tokens: int = 512,
        temperature: float = 0.2,
        stop: list[str] | None = None,
        json_schema: dict | None = None,
        on_token: TokenCallback | None = None,
        cancel: CancelToken | None = None,
    ) -> Completion:
        """Run one chat completion.

        Raises ContextOverflowError before generation when the prompt cannot fit,
        ModelCancelled when `cancel` fires, ModelWorkerCrashed when the engine dies.
        With json_schema the reply is valid JSON for that schema (`parsed` holds it).
        """
        ...

    def count_tokens(self, text: str) -> int: ...

    def close(self) -> None: ...
