"""The status bar: model state, index state (pending embeddings), agent idle time, the next scheduled dream."""
from __future__ import annotations

import datetime as dt
import math

from PySide6.QtWidgets import QLabel, QSizePolicy, QStatusBar

from core.errors import ModelCancelled
from core.service.status import ago

MAINTENANCE = "maintenance tick"     # the reason a maintenance job gives: it dreams only if a dream is due


def idle_time(seconds: float) -> str:
    """How long an agent has been idle, in words: "active now", "idle 12 min", "idle 3.5 h"."""
    if seconds < 60:
        return "active now"
    minutes = seconds / 60
    if minutes < 120:
        return f"idle {minutes:.0f} min"
    return f"idle {minutes / 60:.1f} h"


def describe_idle(seconds: float) -> str:
    if math.isinf(seconds):
        return "agent: no activity seen"
    when = idle_time(seconds)
    return f"agent: {when}" if seconds < 60 else f"agent {when}"


def describe_agents(agents) -> str:
    """The agent seen last and when ("claude-code: idle 3 min"), then how many others there are."""
    if not agents:
        return ""
    name, seconds = agents[0]
    more = f" (+{len(agents) - 1} more)" if len(agents) > 1 else ""
    return f"{name}: {idle_time(seconds)}{more}"


def _minutes_to_go(seconds: float) -> str:
    return f"{math.ceil(max(0.0, seconds) / 60):.0f} min to go"


def describe_next_dream(status, now: dt.datetime, dreaming: bool = False) -> str:
    """The gate that holds the next dream, in words that are true now: "dreaming…" only while a dream
    runs; a due dream waits for idle time (or, after a failed run, for its retry); one not due waits
    for the sessions gate or the time gate, whichever opens first."""
    if dreaming:
        return "dreaming…"
    if status.elsewhere:
        # Named only as the lock's holder says, and only while that process lives: a window still
        # closing down is not `reverie serve`.
        return f"dreams: scheduled by {getattr(status, 'holder', '') or 'another process'}"
    if status.busy:
        return "maintenance running…"
    if status.dream_due:
        if status.retry_in_s > 0:
            return f"next dream: retried after a failed run ({_minutes_to_go(status.retry_in_s)})"
        if status.idle:
            return "dream due now"
        needed = status.idle_needed_s / 60
        return f"next dream: after {needed:.0f} min idle ({_minutes_to_go(status.idle_needed_s - status.idle_for_s)})"
    if status.next_dream_at is None:
        return "next dream: when idle"
    left = (status.next_dream_at - now).total_seconds()
    when = f"{status.next_dream_at.astimezone():%a %H:%M} (in {left / 3600:.1f} h)"
    sessions = status.sessions_to_go
    if sessions:
        return f"next dream: waits for {sessions} more session{'s' if sessions != 1 else ''} or until {when}"
    return f"next dream: {when}"


def describe_dream_end(outcome) -> str:
    """What a finished dream or maintenance job did, in a few words (the status line; the dream view
    says the same, and more about a dream that ran)."""
    if isinstance(outcome, ModelCancelled):
        return "Dream cancelled; nothing was written."
    if isinstance(outcome, Exception):
        return f"The dream failed: {outcome}"
    dream = getattr(outcome, "dream", outcome)      # a maintenance report carries its dream, if any
    if dream is None:
        notes = "; ".join(getattr(outcome, "notes", []) or [])
        return "Maintenance ran (no dream was due)." + (f" {notes}" if notes else "")
    proposal = getattr(dream, "proposal", None)
    return "Dream finished: " + (f"{len(proposal.changes)} change(s) proposed" if proposal is not None
                                 else "nothing new to propose")


class StatusBar(QStatusBar):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.model = QLabel("model: –")
        self.index = QLabel("index: –")
        self.idle = QLabel("agent: –")
        self.next_dream = QLabel("next dream: –")
        for label in (self.model, self.index, self.idle, self.next_dream):
            label.setContentsMargins(6, 0, 6, 0)
            # Long states ("next dream: waits for 2 more sessions or until …") must not set the window's
            # minimum width: a label may shrink (its full text stays in its tooltip).
            label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
            label.setMinimumWidth(60)
            self.addPermanentWidget(label, 1)

    def dream_started(self, why: str) -> None:
        """Shown for as long as the job runs (dream_ended replaces it), never longer."""
        self.showMessage("Maintenance tick…" if why == MAINTENANCE else f"Dreaming ({why})…")

    def dream_ended(self, outcome) -> None:
        self.showMessage(describe_dream_end(outcome), 8000)

    def show_schedule(self, status, now: dt.datetime, dreaming: bool = False) -> None:
        if status.error:
            self.next_dream.setText(status.error[:80])
            return
        self.idle.setText(describe_idle(status.idle_for_s))
        agents = status.agents
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
