"""Whole replies only: a client wrapper for callers that store what the model says as complete.

A reply that stops at its token limit (finish_reason "length") ends mid-sentence ("...staging
cluster in Frankf"); the streaming clients already refuse a reply the server broke off
(TruncatedReplyError). Wrapped in `WholeReplies`, a client also refuses the length-cut one with
ReplyAtLimitError, a TruncatedReplyError, so the caller's cut-reply path handles both. The
error carries the lines of the reply that ended before the cut (the flush keeps those bullets;
the cut line is never stored).
"""
from __future__ import annotations

from typing import Any

from core.errors import ReplyAtLimitError
from core.llm.protocol import Completion


def lines_before_the_cut(text: str) -> str:
    """The lines of a cut reply that ended with a newline; the unfinished last line is left out."""
    end = text.rfind("\n")
    return text[:end + 1] if end >= 0 else ""


def require_whole(completion: Completion, max_tokens: int) -> Completion:
    """`completion` when it ended by itself; ReplyAtLimitError when it stopped at its token limit."""
    if completion.finish_reason == "length":
        whole = lines_before_the_cut(completion.text)
        kept = (f"only its {whole.count(chr(10))} whole line(s) before the cut may be used" if whole.strip()
                else "nothing of it was used")
        raise ReplyAtLimitError(f"the reply stopped at its limit of {max_tokens} token(s) (finish_reason "
                                f"\"length\") after {len(completion.text):,} characters, mid-way; {kept}",
                                whole_lines=whole)
    return completion


class WholeReplies:
    """An LLMClient whose complete() returns only replies that ended by themselves."""

    def __init__(self, llm):
        self._llm = llm

    def complete(self, messages, *, max_tokens: int = 512, **kwargs) -> Completion:
        return require_whole(self._llm.complete(messages, max_tokens=max_tokens, **kwargs), max_tokens)

    def __getattr__(self, name: str) -> Any:     # model_id, context_length, count_tokens, close, ...
        return getattr(self._llm, name)
