"""The status bar: model state, index state (pending embeddings), agent idle time, the next scheduled dream."""
from __future__ import annotations

import datetime as dt
import math

from PySide6.QtWidgets import QLabel, QStatusBar

from core.service.status import ago

MAINTENANCE = "maintenance tick"     # the reason a maintenance job gives: it dreams only if a dream is due


def describe_idle(seconds: float) -> str:
    if math.isinf(seconds):
        return "agent: no activity seen"
    if seconds < 60:
        return "agent: active now"
    minutes = seconds / 60
    if minutes < 120:
        return f"agent idle {minutes:.0f} min"
    return f"agent idle {minutes / 60:.1f} h"


def describe_agents(agents) -> str:
    """The agent seen last and when ("claude-code: 3 min ago"), then how many others there are."""
    if not agents:
        return ""
    name, seconds = agents[0]
    when = "active now" if seconds < 60 else describe_idle(seconds).replace("agent idle ", "idle ")
    more = f" (+{len(agents) - 1} more)" if len(agents) > 1 else ""
    return f"{name}: {when}{more}"


def describe_next_dream(status, now: dt.datetime, dreaming: bool = False) -> str:
    """What holds the next dream, in words that are true now: "dreaming…" only while a dream runs."""
    if dreaming:
        return "dreaming…"
    if getattr(status, "elsewhere", False):
        return "dreams: scheduled by reverie serve"
    if status.busy:
        return "maintenance running…"
    if status.dream_due:
        if status.idle:
            return "dream due now"
        needed = status.idle_needed_s / 60
        left = max(0.0, status.idle_needed_s - status.idle_for_s) / 60
        return f"next dream: after {needed:.0f} min idle ({math.ceil(left):.0f} min to go)"
    if status.next_dream_at is None:
        return "next dream: when idle"
    left = (status.next_dream_at - now).total_seconds()
    when = status.next_dream_at.astimezone().strftime("%a %H:%M")
    return f"next dream: {when} (in {left / 3600:.1f} h) or sooner after sessions"


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

    def show_schedule(self, status, now: dt.datetime, dreaming: bool = False) -> None:
        if status.error:
            self.next_dream.setText(status.error[:80])
            return
        self.idle.setText(describe_idle(status.idle_for_s))
        agents = getattr(status, "agents", ())
        self.idle.setToolTip("\n".join(f"{name}: last seen {ago(seconds)}" for name, seconds in agents)
                             or "no agent has been seen yet")
        if agents:
            self.idle.setText(f"agent {describe_agents(agents)}")
        self.next_dream.setText(describe_next_dream(status, now, dreaming))

    def reset(self) -> None:
        self.model.setText("model: –")
        self.index.setText("index: –")
        self.idle.setText("agent: –")
        self.next_dream.setText("next dream: –")
