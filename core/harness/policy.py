"""The context policy: the memory-engineering article's decision tree as one object.

    tier 1  a tool result over the threshold        -> evict it to a file at once (placeholder + path)
            (opt-in) old tool-call arguments huge   -> truncate them (originals offloaded first)
    tier 2  context over 80% of the usable window    -> move the oldest bulky payloads to files
    tier 3  over the compaction trigger, or still
            over the usable window                   -> compact (flush + offload + summary)
    tier 4  still over the usable window             -> ask the caller for a fresh restart

The cheapest step that brings the context back under its line wins; every step
keeps the full text somewhere on disk.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from core.config import Settings
from core.harness.eviction import ToolResultEvictor
from core.harness.messages import Message, tool_names, total_tokens
from core.harness.truncation import truncate_arguments


@dataclass(frozen=True)
class Decision:
    tier: int          # 0: nothing to do; 1-4 as above (the highest tier needed)
    reason: str


@dataclass
class PolicyOutcome:
    messages: list[Message]
    actions: list[str] = field(default_factory=list)
    restart_needed: bool = False
    compaction: object = None
    tokens: int = 0


class ContextPolicy:
    def __init__(self, settings: Settings, evictor: ToolResultEvictor, compactor, count, *, offloader=None):
        self.settings = settings
        self.evictor = evictor
        self.compactor = compactor
        self.count = count
        self.offloader = offloader if offloader is not None else getattr(compactor, "offloader", None)

    # ----- tier 1, as each result arrives ------------------------------------------------------
    def on_tool_result(self, msg: Message, tool_name: str) -> Message:
        return self.evictor.evict(msg, tool_name)

    # ----- the decision ------------------------------------------------------------------------
    def decide(self, messages: list[Message], usable_tokens: int) -> Decision:
        names = tool_names(messages)
        if any(m.get("role") == "tool" and not m.get("evicted")
               and self.evictor.should_evict(names.get(m.get("tool_call_id", ""), m.get("name", "")),
                                             m.get("content") or "") for m in messages):
            return Decision(1, "a tool result is over the eviction threshold")
        tokens = total_tokens(messages, self.count)
        if self.compactor is not None and self.compactor.should_compact(messages):
            return Decision(3, "over the compaction trigger")
        if tokens > usable_tokens:
            return Decision(3, f"{tokens} tokens exceed the usable window of {usable_tokens}")
        if tokens > usable_tokens * self.settings.eviction.delayed_fraction:
            return Decision(2, f"{tokens} tokens are over {self.settings.eviction.delayed_fraction:.0%} "
                               f"of the usable window")
        return Decision(0, "within budget")

    def apply(self, messages: list[Message], usable_tokens: int) -> PolicyOutcome:
        """Run the tiers in order, each only when the one before did not suffice."""
        out = PolicyOutcome(messages)
        out.messages, evicted = self.evictor.evict_all(out.messages)
        if evicted:
            out.actions.append(f"tier 1: evicted {evicted} tool result(s)")
        truncation = truncate_arguments(out.messages, self.settings.truncation, self.count, offloader=self.offloader)
        if truncation.truncated:
            out.messages = truncation.messages
            out.actions.append(f"truncated {truncation.truncated} old tool-call argument(s)")
        out.messages, moved = self.evictor.delayed(out.messages, usable_tokens=usable_tokens, count=self.count)
        if moved:
            out.actions.append(f"tier 2: moved {moved} bulky payload(s) to files")
        tokens = total_tokens(out.messages, self.count)
        over = tokens > usable_tokens
        if self.compactor is not None and (over or self.compactor.should_compact(out.messages)):
            result = self.compactor.compact(out.messages, trigger_messages=1 if over else None,
                                            keep_tokens=usable_tokens // 2 if over else None,
                                            reason="over the window" if over else "trigger")
            if result.compacted:
                out.messages, out.compaction = result.messages, result
                out.actions.append(f"tier 3: compacted {result.compacted_count} message(s)")
            tokens = total_tokens(out.messages, self.count)
        out.tokens = tokens
        if tokens > usable_tokens:
            out.restart_needed = True
            out.actions.append("tier 4: a fresh restart is needed")
        return out
