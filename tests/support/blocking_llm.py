"""Model clients for the desktop tests that need a model to *hold* a job open (cancel, quit).

They implement core.llm.protocol.LLMClient. A dream with no model at all is a real
dream (every operation decided by rules), so most tests use `llm_factory=no_model`.
"""
from __future__ import annotations

import threading

from core.errors import ModelCancelled
from core.tokens import count_tokens


def no_model(_ws):
    return None


class BlockingLLM:
    """Every request waits until it is cancelled, like a long prompt on a slow machine."""

    model_id = "blocking-test-model"

    def __init__(self):
        self.entered = threading.Event()
        self.calls = 0

    @property
    def context_length(self) -> int:
        return 8192

    def count_tokens(self, text: str) -> int:
        return count_tokens(text)

    def complete(self, messages, *, max_tokens=512, temperature=0.2, stop=None, json_schema=None, on_token=None,
                 cancel=None):
        self.calls += 1
        self.entered.set()
        while cancel is None or not cancel.wait(0.01):
            pass
        raise ModelCancelled("cancelled while the prompt was processed")

    def close(self) -> None:
        pass


def dream_in_view(qtbot, make_controller, ws, size: tuple[int, int] | None = None):
    """A DreamView on `ws` (no model) after one dream asked for with its button; its proposal loaded."""
    return dreamed_view(qtbot, make_controller(ws, llm_factory=no_model), size)


def dreamed_view(qtbot, controller, size: tuple[int, int] | None = None):
    """A DreamView on `controller` after one dream asked for with its button; its proposal loaded.
    With `size`, the view is shown at that size first (layout is looked at)."""
    from desktop.views.dream_view import DreamView

    view = DreamView(controller)
    qtbot.addWidget(view)
    if size is not None:
        view.resize(*size)
        view.show()
    with qtbot.waitSignal(view.proposalsLoaded, timeout=10_000):
        pass
    with qtbot.waitSignal(controller.dreamFinished, timeout=120_000):
        view.dream_button.click()
    qtbot.waitUntil(lambda: view.review.proposal is not None, timeout=10_000)
    return view
