"""Argument truncation (opt-in, no model call): shorten huge tool-call arguments in old messages.

A file written through write_file stays in the context as a tool-call argument
long after it matters. Past the trigger, arguments over `max_arg_chars` in all
but the last `keep_messages` messages are cut and marked. When an offloader is
given, the untouched originals go to the session log first, so nothing is lost.
"""
from __future__ import annotations

from dataclasses import dataclass

from core.config import TruncationSettings
from core.harness.messages import Message, ensure_ids, total_tokens


@dataclass(frozen=True)
class TruncationResult:
    messages: list[Message]
    truncated: int          # arguments cut
    offloaded: int = 0


def cut_argument(args: str, settings: TruncationSettings) -> str:
    if len(args) <= settings.max_arg_chars or args.endswith(settings.marker):
        return args
    return args[: settings.max_arg_chars] + settings.marker


def should_truncate(messages: list[Message], settings: TruncationSettings, count) -> bool:
    if not settings.enabled:
        return False
    if settings.trigger_messages and len(messages) >= settings.trigger_messages:
        return True
    return bool(settings.trigger_tokens) and total_tokens(messages, count) >= settings.trigger_tokens


def truncate_arguments(messages: list[Message], settings: TruncationSettings, count, *,
                       offloader=None, force: bool = False) -> TruncationResult:
    if not force and not should_truncate(messages, settings, count):
        return TruncationResult(messages, 0)
    messages = ensure_ids(list(messages))
    old_end = max(0, len(messages) - settings.keep_messages)
    changed: dict[int, Message] = {}
    cuts = 0
    for i in range(old_end):
        msg = messages[i]
        calls = msg.get("tool_calls") or []
        new_calls = []
        for call in calls:
            args = call["function"].get("arguments") or ""
            short = cut_argument(args, settings)
            if short != args:
                cuts += 1
                call = {**call, "function": {**call["function"], "arguments": short}}
            new_calls.append(call)
        if new_calls != calls:
            changed[i] = {**msg, "tool_calls": new_calls}
    if not changed:
        return TruncationResult(messages, 0)
    offloaded = 0
    if offloader is not None:
        # Everything up to the last changed message, in order, so the log stays chronological.
        offloaded = offloader.offload([m for m in messages[: max(changed) + 1] if m.get("role") != "system"])
    out = [changed.get(i, msg) for i, msg in enumerate(messages)]
    return TruncationResult(out, cuts, offloaded)
