"""A scripted LLM for unit tests that need a fixed reply.

It implements core.llm.protocol.LLMClient exactly; every pipeline that uses it
in a unit test also has a test with a real GGUF model.
"""
from __future__ import annotations

import json
import threading
from typing import Callable

from core.cancel import CancelToken
from core.errors import ContextOverflowError
from core.llm.protocol import Completion, Message
from core.tokens import count_tokens


class ScriptedLLM:
    """Replies from a list (or a function of the messages), in order."""

    def __init__(self, replies: list[str] | Callable[[list[Message]], str], *, context_length: int = 8192,
                 overflow_times: int = 0):
        self._replies = replies
        self._context_length = context_length
        self.model_id = "scripted"
        self.calls: list[list[Message]] = []
        self._overflow_left = overflow_times

    @property
    def context_length(self) -> int:
        return self._context_length

    def count_tokens(self, text: str) -> int:
        return count_tokens(text)

    def complete(self, messages, *, max_tokens=512, temperature=0.2, stop=None, json_schema=None,
                 on_token=None, cancel: CancelToken | None = None) -> Completion:
        self.calls.append([dict(m) for m in messages])
        prompt_tokens = sum(self.count_tokens(str(m.get("content") or "")) for m in messages)
        if self._overflow_left > 0:
            self._overflow_left -= 1
            raise ContextOverflowError("scripted overflow", prompt_tokens=prompt_tokens,
                                       context_length=self._context_length)
        if prompt_tokens > self._context_length:
            raise ContextOverflowError(f"prompt of {prompt_tokens} tokens exceeds {self._context_length}",
                                       prompt_tokens=prompt_tokens, context_length=self._context_length)
        if callable(self._replies):
            text = self._replies(messages)
        else:
            if not self._replies:
                raise AssertionError("ScriptedLLM ran out of replies")
            text = self._replies.pop(0)
        if on_token:
            for piece in text.split(" "):
                on_token(piece + " ")
        parsed = json.loads(text) if json_schema is not None else None
        return Completion(text=text, prompt_tokens=prompt_tokens, completion_tokens=self.count_tokens(text),
                          seconds=0.001, ttft_seconds=0.0005, model=self.model_id, parsed=parsed)

    def close(self) -> None:
        pass


def session_llm(threads: list[str] | None = None) -> ScriptedLLM:
    """A chat session: answers a turn ("Maya drinks tea."), the flush and the summary of its end.

    `threads` records the name of the thread each request came from."""
    from core.harness.flush import FLUSH_REQUEST

    def reply(messages):
        if threads is not None:
            threads.append(threading.current_thread().name)
        if messages[0]["content"].startswith("You summarise"):
            return json.dumps({"intent": "learn Maya's drink", "achieved": ["found Maya drinks tea"], "pending": [],
                               "decisions": [], "artifacts": [], "failed_attempts": [], "next_steps": []})
        if messages[-1]["content"].endswith(FLUSH_REQUEST):
            return "- Maya drinks green tea in the afternoon"
        return json.dumps({"tool": "answer", "input": "Maya drinks tea."})
    return ScriptedLLM(reply)
