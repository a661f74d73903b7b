"""The chat panel: talk to the local HarnessAgent, the in-app agent whose idleness the scheduler tracks.

Each turn runs on the task pool (the model, tool calls, compaction and flush all
happen there); tool calls and the answer arrive as progress events and are shown
as they come. Every turn tells the idle monitor the agent is active, so no
scheduled dream starts during a conversation. "Stop" cancels the turn between
steps; "End session" offloads and flushes the conversation and counts the
session toward the dream gates. Closing the workspace or quitting the app ends an
unfinished session too (`finish_session`), without the model: a turn still running
is stopped, the conversation goes to its session log with a summary read off the
messages, and no flush runs, so quitting takes a moment and nothing writes after the
window is gone. Nothing is lost: the next dream reads the session log.
"""
from __future__ import annotations

import html
import time

from PySide6.QtCore import QEventLoop, QTimer, Signal
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import (QHBoxLayout, QLabel, QLineEdit, QPushButton, QSizePolicy, QTextBrowser,
                               QVBoxLayout, QWidget)

from core.errors import ModelCancelled
from desktop import theme
from desktop.operations import Outcome


class ChatPanel(QWidget):
    turnFinished = Signal(object)     # TurnResult, or the exception
    sessionEnded = Signal(object)

    def __init__(self, controller, parent=None):
        super().__init__(parent)
        self.controller = controller
        self.agent = None
        self.turn = None
        self.transcript = QTextBrowser()
        self.transcript.setOpenExternalLinks(False)
        self.input = QLineEdit()
        self.input.setPlaceholderText("Ask the agent (it reads and writes this workspace's memory)…")
        self.input.returnPressed.connect(self.send)
        self.send_button = QPushButton("Send")
        self.send_button.clicked.connect(self.send)
        self.stop_button = QPushButton("Stop")
        self.stop_button.setEnabled(False)
        self.stop_button.clicked.connect(self.stop)
        self.end_button = QPushButton("End session")
        self.end_button.setToolTip("Flush what is worth keeping into today's log and start a new session")
        self.end_button.setEnabled(False)
        self.end_button.clicked.connect(self.end_session)
        self.status = QLabel("")
        # A label asks for the width of its text: a long status would widen the dock, and the window with it.
        self.status.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.input.setMinimumWidth(120)
        row = QHBoxLayout()
        row.addWidget(self.input, 1)
        row.addWidget(self.send_button)
        row.addWidget(self.stop_button)
        buttons = QHBoxLayout()
        buttons.addWidget(self.status, 1)
        buttons.addWidget(self.end_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.transcript, 1)
        layout.addLayout(row)
        layout.addLayout(buttons)

    # ----- showing -------------------------------------------------------------------------------
    def _append(self, role: str, text: str, *, small: bool = False) -> None:
        c = theme.colors()
        colour = {"you": c.user, "agent": c.assistant, "tool": c.tool}.get(role, c.system)
        body = html.escape(text).replace("\n", "<br>")
        size = " style='font-size:small'" if small else ""
        self.transcript.append(f"<p{size}><b style='color:{colour}'>{html.escape(role)}</b> {body}</p>")
        self.transcript.moveCursor(QTextCursor.MoveOperation.End)

    def _event(self, event) -> None:
        kind, data = event
        if kind == "tool":
            error = f" — error: {data.get('error')}" if data.get("error") else ""
            result = str(data.get("result") or "")
            self._append("tool", f"{data.get('name')}({data.get('arguments')}){error}\n"
                                 f"{result[:400] + ('…' if len(result) > 400 else '')}", small=True)
        elif kind == "recall" and data.get("lines"):
            self._append("memory", f"recalled {', '.join(data['lines'])}", small=True)
        elif kind == "refused":
            self._append("harness", f"refused {data.get('name')}({data.get('input')!r}): it copies the "
                                    "tool's description", small=True)
        elif kind in ("policy", "overflow", "restart"):
            self._append("harness", f"{kind}: {data}", small=True)

    # ----- a turn ----------------------------------------------------------------------------------
    @property
    def busy(self) -> bool:
        return self.turn is not None and not self.turn.done

    def send(self, text: str | None = None):
        text = (text if isinstance(text, str) else self.input.text()).strip()
        if not text or self.busy:
            return None
        self.input.clear()
        self._append("you", text)
        self._set_busy(True, "thinking…")
        self.controller.note_agent_turn()
        controller = self.controller

        def job(ctx):
            if self.agent is None:
                from core.harness.agent import HarnessAgent
                from core.harness.recall import Recaller

                # The recall brings the index up to date first (incremental: a stat of each file), so a
                # chat that starts before the app's first index build finished still finds memory.
                self.agent = HarnessAgent(controller.ws, controller.model.client(), recaller=Recaller(controller.ws))
            agent = self.agent
            # This turn's token reaches every model call the agent, its compactor and its flusher make.
            agent.cancel = agent.compactor.cancel = agent.flusher.cancel = ctx.token
            agent.on_event = lambda kind, data: ctx.progress((kind, data))
            return agent.run_turn(text)

        self.turn = controller.submit(job, name="chat turn", on_progress=self._event, on_finished=self._answered,
                                      on_failed=self._failed)
        return self.turn

    def _answered(self, result) -> None:
        source = {"memory": " · quoted from memory", "none": " · no answer"}.get(getattr(result, "source", ""), "")
        self._set_busy(False, f"{result.steps} step(s){source}")
        self.status.setToolTip(result.forced)
        self._append("agent", result.answer)
        self.controller.note_agent_turn()
        self.end_button.setEnabled(True)
        self.turnFinished.emit(result)

    def _failed(self, exc) -> None:
        self._set_busy(False, "")
        self._append("harness", "stopped." if isinstance(exc, ModelCancelled) else f"the turn failed: {exc}")
        self.turnFinished.emit(exc)

    def stop(self) -> None:
        if self.busy:
            self.turn.cancel("stopped by the person")

    def _set_busy(self, on: bool, status: str) -> None:
        self.send_button.setEnabled(not on)
        self.input.setEnabled(not on)
        self.stop_button.setEnabled(on)
        self.end_button.setEnabled(not on and self.agent is not None)
        self.status.setText(status)

    def end_session(self, *, use_model: bool = True):
        agent = self.agent
        if agent is None or self.busy:
            return None
        self._set_busy(True, "ending the session (flush, offload)…" if use_model else "saving the session…")
        ws = self.controller.ws

        def job(ctx):
            agent.cancel = agent.compactor.cancel = agent.flusher.cancel = ctx.token
            # Its log, the session cache and today's daily log (the flush) changed: the operation tells the views.
            return Outcome(ws.session_end_changes(), agent.end_session(use_model=use_model))

        def done(outcome: Outcome) -> None:
            result = outcome.value
            self.agent = None
            self._set_busy(False, "session ended")
            self._append("harness", f"session ended: {result.summary[:300]}", small=True)
            self.controller.note_session_ended()
            self.sessionEnded.emit(result)
        self.turn = self.controller.run_op(job, name="end session", on_success=done, on_failed=self._failed,
                                           by_person=False)      # the in-app agent's writes: agent activity
        return self.turn

    # ----- closing ---------------------------------------------------------------------------------
    @property
    def has_open_session(self) -> bool:
        return self.agent is not None and not getattr(self.agent, "ended", False)

    def finish_session(self, timeout_s: float = 1.5) -> bool:
        """End an unfinished session before the workspace closes, without the model: offload, a summary
        read off the messages, the dream gates' count (core/harness/session.py).

        The work runs on the task pool, as "End session" does; the main thread only
        waits for it with its event loop running (the window is hidden by then). A
        turn still running is stopped first (the model stops at its next token). False
        when it did not finish in time (the controller's shutdown then cancels it).
        """
        deadline = time.monotonic() + timeout_s
        if self.busy:
            self.turn.cancel("the workspace is closing")
            if not _wait_done(self.turn, deadline):
                return False
        if not self.has_open_session:
            return True
        self._append("harness", "saving the session before closing…", small=True)
        handle = self.end_session(use_model=False)
        return handle is None or _wait_done(handle, deadline)


def _wait_done(handle, deadline: float) -> bool:
    """Run the event loop until the task has settled (its callbacks ran) or the deadline passes."""
    loop = QEventLoop()
    timer = QTimer()
    timer.setInterval(20)
    timer.timeout.connect(lambda: (handle.done or time.monotonic() >= deadline) and loop.quit())
    timer.start()
    if not handle.done and time.monotonic() < deadline:
        loop.exec()
    timer.stop()
    return handle.done
