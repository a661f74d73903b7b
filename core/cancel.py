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
