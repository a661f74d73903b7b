"""HarnessAgent: a tool-using agent loop on the local model, inside the memory harness.

Each step: the context policy keeps the history in budget (evict, compact,
restart); the context builder puts MEMORY.md, recent sessions and the anchor
in the system prompt; the model proposes one action as JSON (a tool and its
input, or the answer); code validates it, runs the tool, and records the call
and its result in the OpenAI shape. A context overflow compacts and retries
once. Weak models loop or ramble: a repeated action and the step limit both
end the turn with an answer, so a turn always ends. Before each step the tier-4
triggers (core/harness/triggers.py: drift from the anchor's goal, the same error
again and again, more than 2 hours) may restart the context from what is on disk.
An agent given peers can hand its task to one of them (the `hand_off` tool).

A session's end offloads the rest of the conversation, flushes what was not
flushed, writes the session's summary to the session cache and counts the
session toward the dream gates.
"""
from __future__ import annotations

import datetime as dt
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable

from core.cancel import CancelToken
from core.config import Settings
from core.errors import CoreError
from core.harness import messages as msgs
from core.harness.anchor import AnchorStore
from core.harness.checkpointing import Checkpointer
from core.harness.compactor import ConversationCompactor
from core.harness.context import ContextBuilder
from core.harness.eviction import ToolResultEvictor
from core.harness.flush import MemoryFlushManager
from core.harness.flush import is_question
from core.harness.grounding import content_words
from core.harness.handoff import hand_off as write_hand_off
from core.harness.modelcall import ask, context_length, counter_for
from core.harness.overflow import OverflowRecovery
from core.harness.policy import ContextPolicy
from core.harness.recall import Recaller, Recalled, answer_from, answer_in_words, cite, echoes, render
from core.harness.restart import FreshStart, fresh_restart
from core.harness.session import SessionEnd, end_session
from core.harness.tools import Tool, ToolBox
from core.harness.triggers import RestartTriggers, Score
from core.store.activity import record_activity

BASE_PROMPT = "You are a helpful assistant with a long-term memory. Use the tools when they help."
ANSWER = "answer"
ACTION_MAX_TOKENS = 200
PROTOCOL = (
    "Reply with one JSON object: {\"tool\": NAME, \"input\": TEXT}. NAME is one of the tools below, "
    "or \"answer\" with your final answer to the user as TEXT.\nTools:\n"
)


def new_session_id() -> str:
    return f"s-{dt.datetime.now().strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}"


@dataclass
class TurnResult:
    answer: str
    steps: int
    tool_calls: list[dict[str, Any]] = field(default_factory=list)   # {"name", "arguments", "error"}
    forced: str = ""          # why the answer was forced ("" when the model chose to answer)
    actions: list[str] = field(default_factory=list)                  # what the context policy did
    recalled: list[Recalled] = field(default_factory=list)           # memory lines put in the context
    source: str = "model"     # who wrote the answer: "model", "memory" (recalled lines quoted), "none"

    @property
    def failed(self) -> bool:
        """No answer at all: nothing the model said and nothing memory holds for the message."""
        return self.source == "none"


class HarnessAgent:
    def __init__(self, workspace, llm, *, session_id: str | None = None, base_prompt: str = BASE_PROMPT,
                 settings: Settings | None = None, max_steps: int = 6, cancel: CancelToken | None = None,
                 on_event: Callable[[str, dict], None] | None = None, name: str = "harness",
                 peers: tuple[str, ...] = (), clock: Callable[[], float] = time.monotonic,
                 score: Score | None = None, recaller: Recaller | None = None):
        self.ws = workspace
        self.name = name                 # in hand-offs and in the shared activity log
        self.peers = tuple(p for p in peers if p and p != name)
        self.llm = llm
        self.settings = settings or workspace.settings
        self.session_id = session_id or new_session_id()
        self.max_steps = max_steps
        self.cancel = cancel
        self.on_event = on_event or (lambda kind, data: None)
        self.count = counter_for(llm)
        self.window = context_length(llm, self.settings.model.context_length)
        self.history: list[msgs.Message] = []
        self.step = 0
        self.ended = False
        self.anchor = AnchorStore(workspace)
        self.checkpointer = Checkpointer(workspace, self.session_id)
        extra = (Tool("hand_off", "hand this task to another agent (" + ", ".join(self.peers) + "); input: "
                      "AGENT: why", "input", self._hand_off_tool, side_effect=True),) if self.peers else ()
        self.tools = ToolBox(workspace, self.checkpointer, self.anchor, extra=extra)
        self.triggers = RestartTriggers(self.settings.restart, score=score, clock=clock)
        self.restarts: list[str] = []        # why each restart of this session happened
        self.flusher = MemoryFlushManager(workspace, llm, settings=self.settings, cancel=cancel)
        self.compactor = ConversationCompactor(workspace.paths, llm, self.session_id,
                                               settings=self.settings.compaction, flusher=self.flusher, cancel=cancel)
        self.evictor = ToolResultEvictor(workspace.paths, self.session_id, self.settings.eviction, count=self.count)
        self.policy = ContextPolicy(self.settings, self.evictor, self.compactor, self.count)
        self.recovery = OverflowRecovery(self.compactor, self.settings.overflow)
        self.instructions = base_prompt + "\n\n" + PROTOCOL + self.tools.describe()
        self.wording = base_prompt + "\n" + PROTOCOL + self.tools.wording()     # what a copy would repeat
        self.builder = ContextBuilder(workspace, self.instructions, settings=self.settings, count=self.count,
                                      window=self.window)
        self.recaller = recaller or Recaller(workspace)
        self.recalled: list[Recalled] = []     # the current turn's memory lines (in every step's context)

    # ----- one model step ------------------------------------------------------------------------
    def _schema(self, allowed: list[str]) -> dict:
        return {"type": "object", "properties": {"tool": {"type": "string", "enum": allowed},
                                                 "input": {"type": "string", "maxLength": 600}},
                "required": ["tool", "input"]}

    def _usable(self, anchor) -> int:
        fixed = self.count(self.builder.system_prompt(anchor)) + self.count(render(self.recalled))
        return max(256, self.window - ACTION_MAX_TOKENS - fixed - 64)

    def _propose(self, allowed: list[str], turn: TurnResult) -> dict[str, str]:
        anchor = self.anchor.load()
        outcome = self.policy.apply(self.history, self._usable(anchor))
        self.history = outcome.messages
        turn.actions.extend(outcome.actions)
        for action in outcome.actions:
            self.on_event("policy", {"action": action})
        if outcome.restart_needed:
            self.restart("the context does not fit the window even after compaction")

        def call(history):
            reply = ask(self.llm, self.builder.build(history, step=self.step, anchor=anchor,
                                                     recall=render(self.recalled)),
                        max_tokens=ACTION_MAX_TOKENS, json_schema=self._schema(allowed), cancel=self.cancel)
            return reply

        result = self.recovery.call(call, self.history, keep_tokens=self._usable(anchor) // 2)
        if result.recovered:
            self.history = result.messages
            turn.actions.append("overflow: compacted and retried once")
            self.on_event("overflow", {"compacted": result.compaction.compacted_count})
        reply = result.value
        if not reply.ok:
            return {"tool": "", "input": "", "error": reply.error}
        tool, text = reply.parsed.get("tool"), reply.parsed.get("input")
        if tool not in allowed or not isinstance(text, str):
            return {"tool": "", "input": "", "error": f"invalid action {reply.parsed!r}"}
        return {"tool": tool, "input": text, "error": ""}

    def restart(self, reason: str = "asked for") -> FreshStart:
        """Tier 4: drop the context and start over from what is saved on disk (the conversation
        so far goes to the session log, and a checkpoint records where the task stood)."""
        last_user = next((m for m in reversed(self.history) if m.get("role") == "user"
                          and not msgs.is_summary(m) and m.get("kind") != "harness"), None)
        self.compactor.offloader.offload(self.history)
        self.checkpointer.last_action = f"fresh restart: {reason}"
        self.checkpointer.save(f"before a fresh restart ({reason})")
        fresh = fresh_restart(self.ws, session_id=self.session_id, budget_tokens=self.window // 3, count=self.count)
        opening = msgs.user(fresh.text + f"\n\n[Why the restart: {reason}. Do not repeat what led to it.]")
        self.history = [opening] + ([last_user] if last_user else [])
        self.triggers.reset()
        self.restarts.append(reason)
        self.on_event("restart", {"reason": reason, "sections": list(fresh.sections)})
        return fresh

    # ----- hand-offs -----------------------------------------------------------------------------
    def hand_off(self, to_agent: str, why: str, **details) -> dict[str, Any]:
        """Hand this task to another agent: a packet from the checkpointer, the anchor and the last
        summary (core/harness/handoff.py); a packet that would loop is refused (HandoffLoopError)."""
        record = write_hand_off(self, to_agent=to_agent, why=why, from_agent=self.name, **details)
        self.on_event("handoff", {"id": record["id"], "to": to_agent, "hop": record["hop"]})
        return record

    def _hand_off_tool(self, args: dict[str, Any]) -> str:
        to_agent, _, why = str(args.get("input") or "").partition(":")
        to_agent = to_agent.strip()
        if to_agent not in self.peers:
            raise CoreError(f"no agent {to_agent!r} to hand off to; write AGENT: why, AGENT one of "
                            f"{', '.join(self.peers)}")
        record = self.hand_off(to_agent, why.strip() or "the task needs another agent")
        return f"handed off to {to_agent} as {record['id']} (hop {record['hop']})"

    def _run_tool(self, name: str, text: str, turn: TurnResult, request: str = "") -> tuple[str, str]:
        args = self.tools.arguments_for(name, text)
        call = msgs.tool_call(name, args, call_id=f"call_{uuid.uuid4().hex[:12]}")
        self.history.append(msgs.assistant("", [call]))
        self.checkpointer.before_tool(name, args)
        result, error = self.tools.call(name, args)
        self.checkpointer.after_tool(name, args, error=error)
        self.history.append(self.policy.on_tool_result(msgs.tool_result(call["id"], result, name), name))
        turn.tool_calls.append({"name": name, "arguments": args, "error": error})
        self.triggers.record(f"{request} -> {name} {text}", error)
        self.on_event("tool", {"name": name, "arguments": args, "error": error, "result": result})
        return result, error

    # ----- a turn --------------------------------------------------------------------------------
    def run_turn(self, user_text: str) -> TurnResult:
        if self.ended:
            raise RuntimeError("this session has ended; start a new HarnessAgent")
        record_activity(self.ws.paths, self.name, "turn", self.session_id)   # not idle: no dream starts
        own_log = self.compactor.offloader.rel_path
        self.recalled = self.recaller.recall(user_text, skip_paths=(own_log,))
        self.flusher.also_known.extend(r.text for r in self.recalled)     # shown from memory: not new facts
        self.history.append(msgs.user(user_text))
        turn_start = len(self.history) - 1
        turn = TurnResult(answer="", steps=0, recalled=list(self.recalled))
        self.on_event("recall", {"lines": [r.where for r in self.recalled], "error": self.recaller.error})
        tools_and_answer = [ANSWER] + self.tools.names
        last_action, invalid, repeated = None, 0, False
        while True:
            if self.cancel is not None:
                self.cancel.raise_if_cancelled()
            self.checkpointer.maybe_timer()
            why = self.triggers.check(self.anchor.load().goal)
            if why:
                self.restart(why)
                turn.actions.append(f"tier 4: fresh restart ({why})")
            self.step += 1
            turn.steps += 1
            forced = ""
            if turn.steps >= self.max_steps:
                forced = f"step limit ({self.max_steps}) reached"
            elif invalid >= 2:
                forced = "the model gave no valid action twice"
            elif repeated:
                forced = "the model repeated a tool call"
            action = self._propose([ANSWER] if forced else tools_and_answer, turn)
            if action["error"]:
                invalid += 1
                self.triggers.record(user_text, action["error"])
                if forced:
                    return self._finish_without_model(turn, forced + "; " + action["error"])
                self._note(f"[harness] {action['error']}. Reply with the JSON object.")
                continue
            if action["tool"] == ANSWER:
                self.triggers.record(f"{user_text} -> answer: {action['input'][:200]}")
                answer = action["input"].strip()
                if not answer or echoes(answer, self.wording, user_text):
                    return self._finish_without_model(turn, forced or "the model's answer repeated its instructions")
                if self.recalled and is_question(user_text) and not self._touches(answer, user_text, turn_start):
                    # Memory had lines for the message and the answer shares no word with them, the
                    # message or what the tools returned ("a11y1"): a small model's noise, not an answer.
                    return self._finish_without_model(turn, forced or "the model's answer was about nothing asked")
                return self._finish(turn, answer, forced)
            if self.tools.free_text(action["tool"]) and echoes(action["input"], self.wording, user_text):
                # "memory_search: a query" is the description copied, not a call: refused, never run.
                turn.tool_calls.append({"name": action["tool"], "arguments": {"input": action["input"]},
                                        "error": "refused: the input repeats the tool's description"})
                self.on_event("refused", {"name": action["tool"], "input": action["input"]})
                if self.recalled:
                    return self._finish_without_model(turn, "the model's tool call repeated its description")
                invalid += 1
                self._note(f"[harness] {action['input']!r} is the example wording, not a real input. "
                           f"Write what to look for, taken from the user's message.")
                continue
            key = (action["tool"], action["input"].strip().lower())
            if key == last_action:
                # A weak model repeats itself; the result is already above, so the next step must answer.
                self._note("[harness] That call was already made; its result is above. Answer now.")
                repeated = True
                continue
            last_action = key
            result, error = self._run_tool(action["tool"], action["input"], turn, user_text)
            if action["tool"] == "hand_off" and not error:
                return self._finish(turn, result, "")

    def _note(self, text: str) -> None:
        """A message from the harness to the model (not the person's words: summaries leave it out)."""
        note = msgs.user(text)
        note["kind"] = "harness"
        self.history.append(note)

    def _touches(self, answer: str, user_text: str, turn_start: int) -> bool:
        """Whether an answer shares a content word with the message, the recalled lines or this turn's
        tool results (core/harness/grounding.py's words: three letters or more, numbers exactly)."""
        said = [user_text, *(r.text for r in self.recalled)]
        said += [str(m.get("content") or "") for m in self.history[turn_start:] if m.get("role") == "tool"
                 and not str(m.get("content") or "").startswith(("error:", "no results"))]   # those echo the input
        return bool(content_words(answer) & content_words("\n".join(said)))

    def _finish_without_model(self, turn: TurnResult, forced: str) -> TurnResult:
        """The model gave no usable answer in its protocol: it is asked once more, plainly, to answer from
        the recalled memory lines (its sentence kept only when grounded in them, with the source quoted);
        else the lines themselves are the answer; with none, the turn failed and says so. None of these
        states anything new, so the reply is kept apart (`kind`): a flush never takes facts from it and
        search never returns it."""
        question = next((m.get("content") or "" for m in reversed(self.history)
                         if m.get("role") == "user" and m.get("kind") != "harness"), "")
        if self.recalled:
            said = answer_in_words(self.llm, question, self.recalled, cancel=self.cancel)
            if said:
                # The model's own sentence, checked against the lines it was given, with its source.
                turn.source = "model"
                why = "answered from the recalled memory lines"
                return self._finish(turn, said + "\n" + cite(self.recalled), f"{forced}; {why}" if forced else why,
                                    kind="recalled")
            turn.source = "memory"
            return self._finish(turn, answer_from(self.recalled), forced, kind="recalled")
        turn.source = "none"
        for msg in reversed(self.history):
            if msg.get("role") == "tool" and not str(msg.get("content") or "").startswith(("error:", "no results")):
                text = "I could not finish; the last result was:\n" + (msg.get("content") or "")[:600]
                return self._finish(turn, text, forced, kind="failed")
        return self._finish(turn, "I could not produce an answer, and memory holds nothing that answers it.",
                            forced, kind="failed")

    def _finish(self, turn: TurnResult, answer: str, forced: str, kind: str = "") -> TurnResult:
        turn.answer, turn.forced = answer, forced
        reply = msgs.assistant(answer)
        if kind:
            reply["kind"] = kind
        self.history.append(reply)
        self.on_event("answer", {"answer": answer, "forced": forced, "source": turn.source})
        return turn

    # ----- a multi-step task -----------------------------------------------------------------------
    def run_task(self, target: str, steps: list[str]) -> list[TurnResult]:
        """Work through `steps` toward `target` with a task graph, checkpoints and the anchor.

        A task that was checkpointed before (same session and target) resumes at the first
        pending task whose dependencies are done.
        """
        saved = self.checkpointer.latest()
        if saved and saved.get("target") == target and saved.get("tasks"):
            self.checkpointer.resume_from(saved)
        else:
            self.checkpointer.target = target
            self.checkpointer.set_tasks(steps)
        turns = []
        while (task := self.checkpointer.next_task()) is not None:
            self.anchor.update(goal=target, next_step=task["title"])
            self.checkpointer.mark(task["id"], "in_progress")
            self.checkpointer.save(f"start {task['id']}")
            turn = self.run_turn(task["title"])
            turns.append(turn)
            self.checkpointer.mark(task["id"], "done")
            self.checkpointer.context_summary = turn.answer[:500]
            following = self.checkpointer.next_task()
            self.anchor.update(done=task["title"], next_step=following["title"] if following else "task complete")
            self.checkpointer.milestone(f"finished {task['id']}: {task['title']}")
        return turns

    # ----- the end of a session --------------------------------------------------------------------
    def end_session(self, *, use_model: bool = True) -> SessionEnd:
        """Offload, flush, summarise, count the session; `use_model=False` (an app quitting) skips the
        flush and summarises without the model (core/harness/session.py)."""
        if self.ended:
            return SessionEnd(summary="", offloaded=0)
        self.ended = True
        result = end_session(self.ws, self.history, self.compactor, flusher=self.flusher,
                             flush=self.settings.compaction.flush_before, use_model=use_model)
        record_activity(self.ws.paths, self.name, "session_end", self.session_id)
        self.on_event("session_end", {"summary": result.summary})
        return result
