"""ConversationCompactor (tier 3): replace an old prefix of the conversation by a summary.

    [system...] [prefix ......................] [tail: last N messages]
    [system...] [summary of prefix] [tail]

Steps, in this order so a failure at any point loses nothing: find a cutoff that
never separates an assistant's tool calls from their results; flush durable
facts from the prefix into today's log (optional); offload the raw prefix to
`sessions/<id>.log.jsonl` (each message exactly once); ask the model for a
structured summary, which deterministic code validates and completes; return
[summary] + tail. A model that fails or writes nonsense still yields a summary
from the deterministic facts.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.cancel import CancelToken
from core.config import CompactionSettings
from core.errors import ContextOverflowError
from core.harness import summary as summ
from core.harness.messages import (Message, ensure_ids, is_summary, message_tokens, new_id, orphan_results,
                                   total_tokens, unit_starts)
from core.harness.modelcall import ask, context_length, counter_for
from core.harness.offload import SessionOffloader
from core.harness.transcript import render_transcript

SUMMARY_SYSTEM = (
    "You summarise a conversation so that an agent can carry on the work after the old messages are removed. "
    "Reply with one JSON object with the keys: intent (the goal of the session), achieved (list of what was done), "
    "pending (list of unfinished work), decisions (list of key decisions), artifacts (list of {path, note} for "
    "files made or used), failed_attempts (list of {attempt, reason}), next_steps (list). "
    "Short sentences. Only facts from the conversation."
)


@dataclass
class CompactionResult:
    messages: list[Message]
    compacted: bool
    reason: str = ""
    cut: int = 0                       # index in the input where the kept tail starts
    compacted_count: int = 0           # messages replaced by the summary
    offloaded: int = 0                 # messages newly written to the session log
    summary: summ.SummaryData | None = None
    summary_error: str = ""            # why the model's summary was not used ("" when it was)
    flush: Any = None                  # FlushResult when a flush ran
    tokens_before: int = 0
    tokens_after: int = 0
    info: dict[str, Any] = field(default_factory=dict)


def head_length(messages: list[Message]) -> int:
    """Leading system messages (the base prompt) stay where they are."""
    n = 0
    while n < len(messages) and messages[n].get("role") == "system" and not is_summary(messages[n]):
        n += 1
    return n


def find_cutoff(messages: list[Message], head: int, *, keep_messages: int, keep_tokens: int = 0,
                count=None) -> int | None:
    """Where the kept tail starts, or None when there is nothing to compact.

    keep_tokens > 0: the longest tail within that many tokens, scanned from the end. Otherwise the
    last `keep_messages`, extended backwards when it would start inside a tool-call block.
    """
    starts = [i for i in unit_starts(messages) if i > head]
    if keep_tokens > 0:
        used, candidate = 0, len(messages)
        for i in range(len(messages) - 1, head - 1, -1):
            used += message_tokens(messages[i], count)
            if used > keep_tokens:
                break
            candidate = i
        later = [s for s in starts if s >= candidate]
        cut = later[0] if later else (starts[-1] if starts else None)
    else:
        candidate = len(messages) - keep_messages
        earlier = [s for s in starts if s <= candidate]
        later = [s for s in starts if s > candidate]
        cut = earlier[-1] if earlier else (later[0] if later else None)
        if keep_messages == 0 and candidate == len(messages):
            cut = len(messages)
    if cut is None or cut <= head:
        return None
    return cut


class ConversationCompactor:
    def __init__(self, paths, llm, session_id: str, *, settings: CompactionSettings | None = None,
                 flusher=None, cancel: CancelToken | None = None):
        self.paths = paths
        self.llm = llm
        self.session_id = session_id
        self.settings = settings or CompactionSettings()
        self.flusher = flusher
        self.cancel = cancel
        self.offloader = SessionOffloader(paths, session_id)
        self.count = counter_for(llm)

    # ----- when -------------------------------------------------------------------------------
    def should_compact(self, messages: list[Message], *, trigger_messages: int | None = None,
                       trigger_tokens: int | None = None) -> bool:
        body = messages[head_length(messages):]
        t_msgs = self.settings.trigger_messages if trigger_messages is None else trigger_messages
        t_toks = self.settings.trigger_tokens if trigger_tokens is None else trigger_tokens
        if t_msgs and len(body) >= t_msgs:
            return True
        return bool(t_toks) and total_tokens(body, self.count) >= t_toks

    # ----- how --------------------------------------------------------------------------------
    def compact(self, messages: list[Message], *, trigger_messages: int | None = None,
                trigger_tokens: int | None = None, keep_messages: int | None = None,
                keep_tokens: int | None = None, reason: str = "trigger") -> CompactionResult:
        messages = ensure_ids(list(messages))
        before = total_tokens(messages, self.count)
        if not self.should_compact(messages, trigger_messages=trigger_messages, trigger_tokens=trigger_tokens):
            return CompactionResult(messages, False, reason="below the trigger", tokens_before=before,
                                    tokens_after=before)
        head = head_length(messages)
        cut = find_cutoff(messages, head,
                          keep_messages=self.settings.keep_messages if keep_messages is None else keep_messages,
                          keep_tokens=self.settings.keep_tokens if keep_tokens is None else keep_tokens,
                          count=self.count)
        if cut is None:
            return CompactionResult(messages, False, reason="nothing before the kept tail", tokens_before=before,
                                    tokens_after=before)
        prefix, tail = messages[head:cut], messages[cut:]
        originals = [m for m in prefix if not is_summary(m)]
        result = CompactionResult(messages, True, reason=reason, cut=cut, compacted_count=len(originals),
                                  tokens_before=before)

        if self.settings.flush_before and self.flusher is not None and originals:
            self._check_cancel()
            result.flush = self.flusher.flush(originals, session_id=self.session_id)
        if self.settings.offload_before:
            self._check_cancel()
            result.offloaded = self.offloader.offload(originals)

        self._check_cancel()
        data, error = self.summarise(prefix)
        result.summary, result.summary_error = data, error
        summary_msg = {"role": "user", "content": summ.render(data), "id": new_id("summary"), "kind": "summary",
                       "summary_data": data.to_dict()}
        result.messages = messages[:head] + [summary_msg] + tail
        if orphan_results(result.messages):  # cannot happen by construction; refuse rather than corrupt
            raise AssertionError("compaction produced an orphan tool result")
        result.tokens_after = total_tokens(result.messages, self.count)
        return result

    def summarise(self, prefix: list[Message], *, use_model: bool = True) -> tuple[summ.SummaryData, str]:
        """The merged summary of `prefix` (which may start with an earlier summary) and the model's error.
        Without `use_model`, the summary is what is read off the messages (an app quitting now)."""
        # Each compaction replaces the old summary with a new one, so a prefix holds at most one.
        earlier = [m for m in prefix if is_summary(m)]
        previous = summ.SummaryData.from_dict(earlier[-1].get("summary_data")) if earlier else None
        originals = [m for m in prefix if not is_summary(m)]
        facts = summ.deterministic_facts(originals)
        facts.compacted_messages = len(originals)
        if self.settings.offload_before:
            facts.offload_path = self.offloader.rel_path
        proposal, error = summ.SummaryData(), "no model"
        if self.llm is not None and originals and use_model:
            proposal, error = self._ask_model(originals, previous)
        return summ.merge(previous, proposal, facts), error

    def _ask_model(self, originals: list[Message], previous: summ.SummaryData | None) -> tuple[summ.SummaryData, str]:
        window = context_length(self.llm)
        out_tokens = self.settings.summary_max_tokens
        prev_text = summ.render(previous) if previous else ""
        framing = self.count(SUMMARY_SYSTEM) + self.count(prev_text) + 64
        budget = window - out_tokens - framing
        if self.settings.input_tokens:
            budget = min(budget, self.settings.input_tokens)
        for _attempt in range(2):
            if budget < 64:
                return summ.SummaryData(), "the model's window is too small for a summary prompt"
            transcript, dropped = render_transcript(originals, budget, self.count)
            evidence = transcript + "\n" + prev_text
            user = (f"Previous summary:\n{prev_text}\n\n" if prev_text else "") + \
                   (f"({dropped} older messages left out)\n" if dropped else "") + \
                   f"Conversation:\n{transcript}\n\nReply with the JSON object."
            try:
                reply = ask(self.llm, [{"role": "system", "content": SUMMARY_SYSTEM},
                                       {"role": "user", "content": user}],
                            max_tokens=out_tokens, json_schema=summ.SUMMARY_SCHEMA, cancel=self.cancel)
            except ContextOverflowError:
                budget //= 2  # our estimate of the template's overhead was short: halve and try once more
                continue
            if not reply.ok:
                return summ.SummaryData(), reply.error
            return summ.validate_proposal(reply.parsed, evidence), ""
        return summ.SummaryData(), "the summary prompt did not fit the model's window"

    def _check_cancel(self) -> None:
        if self.cancel is not None:
            self.cancel.raise_if_cancelled()
