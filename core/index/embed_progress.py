"""Progress of background embedding, as `reverie index` and `reverie serve` print it.

Keyword search answers as soon as the rows are written (seconds, even for ~70k
lines); the vectors fill in behind. A person waiting on a big workspace wants to
know how far that is and how long is left, not a silent minute.
"""
from __future__ import annotations

import time
from typing import Callable

REPORT_EVERY_S = 30.0


def describe(done: int, total: int, seconds: float) -> str:
    """'embedded 12,000 of 70,000 lines (17%), about 6 min left' (no estimate before a rate is known)."""
    share = f" ({100 * done // total}%)" if total else ""
    rate = done / seconds if seconds > 0 and done else 0.0
    left = (total - done) / rate if rate else 0.0
    eta = f", about {max(1, round(left / 60))} min left" if rate and total > done else ""
    return f"embedded {done:,} of {total:,} lines{share}{eta}"


def wait_with_progress(index, say: Callable[[str], None], *, every_s: float = REPORT_EVERY_S,
                       timeout: float | None = None, stop: Callable[[], bool] = lambda: False) -> bool:
    """Wait for `index` to embed what is pending, saying how far it got every `every_s` seconds.
    True once nothing is pending; False on timeout, on `stop()`, or when embedding cannot run."""
    started = time.monotonic()
    first = index.status().pending_embeddings
    if not first:
        return True
    while True:
        slice_s = every_s if timeout is None else min(every_s, max(0.0, started + timeout - time.monotonic()))
        if index.wait_embeddings(timeout=slice_s):
            say(describe(first, first, time.monotonic() - started))
            return True
        pending = index.status().pending_embeddings
        done = max(0, first - pending)
        if stop() or (timeout is not None and time.monotonic() - started >= timeout) or not index.worker.alive:
            return False
        say(describe(done, first, time.monotonic() - started))


def watch_embedding(sync: Callable[[], object], index, say: Callable[[str], None], cancel) -> None:
    """`reverie serve`: bring the index up to date, then report embedding progress whenever lines are pending."""
    try:
        sync()
        if index.embedder is not None:
            index.search("warm up", k=1, mode="hybrid")     # the model loads now, not in the first query
            say("index: up to date; the embedding model is loaded, searches are answered at once")
    except Exception as exc:   # noqa: BLE001 - a background helper: say it, keyword search still answers
        say(f"index: not brought up to date ({exc})")
        return
    while not cancel.cancelled:
        if index.status().pending_embeddings:
            wait_with_progress(index, lambda line: say(f"index: {line}"), stop=lambda: cancel.cancelled)
        cancel.wait(REPORT_EVERY_S)
