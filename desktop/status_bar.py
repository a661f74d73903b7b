"""The status bar: model state, index state (pending embeddings), agent idle time, the next scheduled dream."""
from __future__ import annotations

import datetime as dt
import math

from PySide6.QtWidgets import QLabel, QStatusBar


def describe_idle(seconds: float) -> str:
    if math.isinf(seconds):
        return "agent: no activity seen"
    if seconds < 60:
        return "agent: active now"
    minutes = seconds / 60
    if minutes < 120:
        return f"agent idle {minutes:.0f} min"
    return f"agent idle {minutes / 60:.1f} h"


def describe_next_dream(status, now: dt.datetime) -> str:
    if status.busy:
        return "dreaming…"
    if status.dream_due:
        return "dream due: waits for idle" if not status.idle else "dream due now"
    if status.next_dream_at is None:
        return "next dream: when idle"
    left = (status.next_dream_at - now).total_seconds()
    when = status.next_dream_at.astimezone().strftime("%a %H:%M")
    return f"next dream {when} (in {left / 3600:.1f} h) or sooner after sessions"


class StatusBar(QStatusBar):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.model = QLabel("model: –")
        self.index = QLabel("index: –")
        self.idle = QLabel("agent: –")
        self.next_dream = QLabel("next dream: –")
        for label in (self.model, self.index, self.idle, self.next_dream):
            label.setContentsMargins(6, 0, 6, 0)
            self.addPermanentWidget(label)

    def show_schedule(self, status, now: dt.datetime) -> None:
        if status.error:
            self.next_dream.setText(status.error[:80])
            return
        self.idle.setText(describe_idle(status.idle_for_s))
        self.next_dream.setText(describe_next_dream(status, now))

    def reset(self) -> None:
        self.model.setText("model: –")
        self.index.setText("index: –")
        self.idle.setText("agent: –")
        self.next_dream.setText("next dream: –")
