"""One model client for the whole app, opened on first use on a worker thread.

The dream and the chat panel share it: the model runs in one worker process
(core/llm), and its requests are serialised here, so a chat turn waits for the
dream's current model call instead of loading a second copy of the model. The
state (not loaded, loading, ready, busy, unavailable) goes to the status bar.
Nothing here runs on the main thread except `state` and `close()`.
"""
from __future__ import annotations

import dataclasses
import threading
from typing import Any, Callable

from core.errors import CoreError, ModelCancelled, ModelError


# The model process runs at this niceness at least: a dream filling every core must leave the
# app's own threads (and through the GIL the window) first call on the CPU. 10, like the index
# and dream processes: at 5 a GIL holder of the app lost its core to them often enough to stall
# the window (GUI benchmark: 104-135 ms stalls at 5, none over 50 ms after the open at 10). On an
# idle machine the model still gets every cycle it can use.
APP_MODEL_NICE = 10


def default_factory(ws):
    try:
        from core.llm import open_client
    except ImportError as exc:
        raise ModelError(f"the local model engine is not available ({exc})") from exc
    settings = ws.settings.model
    return open_client(dataclasses.replace(settings, nice=max(settings.nice, APP_MODEL_NICE)))


class _Serialised:
    """The LLMClient protocol, one request at a time."""

    def __init__(self, client, call_lock: threading.Lock, on_state: Callable[[str], None]):
        self._client = client
        self._call_lock = call_lock
        self._on_state = on_state
        self.model_id = getattr(client, "model_id", "model")

    @property
    def context_length(self) -> int:
        return self._client.context_length

    def complete(self, messages, **options):
        with self._call_lock:
            self._on_state(f"model: {self.model_id} (busy)")
            try:
                reply = self._client.complete(messages, **options)
            except ModelCancelled:
                self._on_state(f"model: {self.model_id} (ready)")
                raise
            except Exception as exc:     # the status says it failed, not "ready" (the caller handles the error)
                self._on_state(f"model: {self.model_id} (failed: {str(exc)[:70]})")
                raise
            self._on_state(f"model: {self.model_id} (ready)")
            return reply

    def count_tokens(self, text: str) -> int:
        return self._client.count_tokens(text)

    def close(self) -> None:       # the shared client is closed by SharedModel only
        pass

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


class SharedModel:
    def __init__(self, ws, factory: Callable[[Any], Any] | None = None,
                 on_state: Callable[[str], None] | None = None):
        self.ws = ws
        self.factory = factory or default_factory
        self.on_state = on_state or (lambda text: None)
        self._client = None
        self._proxy: _Serialised | None = None
        self._open_lock = threading.Lock()
        self._call_lock = threading.Lock()
        self.error = ""
        self.state = f"model: {ws.settings.model.model} (not loaded)"

    def _set(self, text: str) -> None:
        self.state = text
        self.on_state(text)

    def client(self) -> _Serialised:
        """The shared client (opened now if needed). ModelError when it cannot be opened."""
        with self._open_lock:
            if self._proxy is None:
                self._set(f"model: {self.ws.settings.model.model} (loading…)")
                try:
                    client = self.factory(self.ws)
                except CoreError as exc:
                    self.error = str(exc)
                    self._set(f"model: unavailable ({exc})")
                    raise
                if client is None:
                    self.error = "no model configured"
                    self._set("model: none")
                    raise ModelError("no model configured")
                self._client = client
                self._proxy = _Serialised(client, self._call_lock, self._set)
                self._set(f"model: {self._proxy.model_id} (ready)")
            return self._proxy

    def client_or_none(self):
        """For pipelines that work without a model (a dream decides by rules then)."""
        try:
            return self.client()
        except CoreError:
            return None

    @property
    def loaded(self) -> bool:
        return self._proxy is not None

    def close(self) -> None:
        with self._open_lock:
            client, self._client, self._proxy = self._client, None, None
        if client is not None:
            try:
                client.close()
            except Exception:   # the worker may already be gone; closing must not fail a quit
                pass
            self._set(f"model: {self.ws.settings.model.model} (not loaded)")

    def reset(self) -> None:
        """The model setting changed: the next request opens the new one, and the status bar names it now
        (not the model chosen before, which it kept showing until the first request)."""
        self.close()
        self.error = ""
        self._set(f"model: {self.ws.settings.model.model} (not loaded)")
