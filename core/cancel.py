"""Cooperative cancellation shared by every pipeline.

Pipelines check the token between steps; the model worker checks it between
tokens. Cancelling never interrupts a write half-way.
"""
from __future__ import annotations

import threading

from core.errors import ModelCancelled


class Cancelled(ModelCancelled):
    """Raised by CancelToken.raise_if_cancelled()."""


class CancelToken:
    def __init__(self) -> None:
        self._event = threading.Event()
        self.reason = ""

    def cancel(self, reason: str = "cancelled") -> None:
        self.reason = reason
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def raise_if_cancelled(self) -> None:
        if self._event.is_set():
            raise Cancelled(self.reason or "cancelled")

    def wait(self, seconds: float) -> bool:
        """Sleep up to `seconds`, waking early on cancel. True if cancelled."""
        return self._event.wait(seconds)


NEVER = CancelToken()  # a token nobody cancels, for callers that do not care


class JobContext:
    """What a background job sees: its CancelToken and a progress channel.

    `progress(value)` also raises Cancelled once the token is cancelled, so a pipeline's
    progress callback doubles as its cancellation point. The app's task pool
    (desktop/tasks.py) and a job in a child process (core/jobproc.py) both hand jobs one.
    """

    def __init__(self, token: CancelToken, emit):
        self.token = token
        self._emit = emit

    @property
    def cancelled(self) -> bool:
        return self.token.cancelled

    def check(self) -> None:
        self.token.raise_if_cancelled()

    def progress(self, value: object = None) -> None:
        self.token.raise_if_cancelled()
        self._emit(value)
