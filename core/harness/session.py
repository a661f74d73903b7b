"""The end of a session: nothing said in it is lost, and the dream hears of it.

Flushes what was not flushed yet, offloads every message not yet in the
session log, writes the session's summary to `sessions/cache.jsonl` (the last
10 are kept) and counts the session toward the dream gates. Shared by the
HarnessAgent, the CLI and the retention benchmark.

An app that is quitting ends a session without the model (`use_model=False`): no flush
and a summary read off the messages, so quitting takes a moment, not a model's minute,
and nothing writes after the window is gone. Nothing is lost by it: every message is in
the session log, and the next dream reads session logs (core/dream/session_facts.py).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.dream.state import record_session_ended
from core.harness.messages import Message, is_summary
from core.harness.summary import SummaryData, render


@dataclass
class SessionEnd:
    summary: str
    offloaded: int
    data: SummaryData | None = None
    flush: Any = None
    cache_entry: dict | None = None
    summary_error: str = ""


def end_session(workspace, history: list[Message], compactor, *, flusher=None,
                flush: bool = True, use_model: bool = True) -> SessionEnd:
    originals = [m for m in history if not is_summary(m)]
    if not history:
        return SessionEnd(summary="", offloaded=0)
    flushed = None
    if flush and use_model and flusher is not None and originals:
        flushed = flusher.flush(originals, session_id=compactor.session_id)
    offloaded = compactor.offloader.offload(history)
    data, error = compactor.summarise(history, use_model=use_model)
    text = render(data)
    llm = compactor.llm
    entry = workspace.session_cache.add(compactor.session_id, text, messages=data.compacted_messages,
                                        model=getattr(llm, "model_id", "") if llm is not None else "",
                                        log=compactor.offloader.rel_path)
    record_session_ended(workspace.paths)
    return SessionEnd(summary=text, offloaded=offloaded, data=data, flush=flushed, cache_entry=entry,
                      summary_error=error)
