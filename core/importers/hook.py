"""Claude Code hooks (SessionEnd, PreCompact): import the session's transcript, then flush what is new.

Claude Code runs `reverie hook claude-code WS` with a JSON object on stdin:
`{"session_id", "transcript_path", "hook_event_name", "cwd", ...}`. The transcript is
imported into sessions/cc-<session>.log.jsonl (importing again appends only what is new,
so a transcript seen in slices lands exactly once), and the flush extracts durable facts
of the messages not flushed yet into today's daily log.

A reply is written by Claude Code as several lines (one per content block) under one
message id; the importer merges them into one message. Before the session has ended, the
reply at the end of the transcript may still be growing, so it is left for the next hook
(a reply imported half would never be completed: its id is already there). SessionEnd
imports everything.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from core.errors import FormatError, NotFoundError
from core.importers.claude_code import parse_transcript, session_id_for
from core.importers.common import ImportResult, store_session
from core.store.activity import record_activity

AGENT = "claude-code"
FINAL_EVENTS = {"SessionEnd"}
EVENTS = ("SessionEnd", "PreCompact")


@dataclass(frozen=True)
class HookInput:
    event: str
    transcript: Path
    session_id: str            # Claude Code's own session id ("" when it gave none)


def parse_hook_input(text: str) -> HookInput:
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise FormatError(f"the hook input is not JSON ({exc}); Claude Code sends one JSON object on stdin") from exc
    if not isinstance(data, dict) or not isinstance(data.get("transcript_path"), str):
        raise FormatError("the hook input has no transcript_path; is this a Claude Code SessionEnd or PreCompact hook?")
    event = str(data.get("hook_event_name") or "SessionEnd")
    return HookInput(event, Path(data["transcript_path"]).expanduser(), str(data.get("session_id") or ""))


def import_for_hook(workspace, hook: HookInput) -> ImportResult:
    """Import the transcript's settled messages (all of them once the session ended)."""
    if not hook.transcript.is_file():
        raise NotFoundError(f"no transcript at {hook.transcript}")
    parsed = parse_transcript(hook.transcript, session_id_for(hook.transcript))
    if hook.event not in FINAL_EVENTS:
        while parsed.messages and parsed.messages[-1].get("role") == "assistant":
            parsed.messages.pop()       # the reply at the end may still be growing: the next hook takes it
    result = store_session(workspace, parsed)
    record_activity(workspace.paths, AGENT, "session_end" if hook.event in FINAL_EVENTS else "import",
                    f"{hook.event} {result.session_id}: {result.written} new message(s)")
    return result


def flush_session(workspace, session_id: str, llm):
    """Flush the session's messages not flushed yet (the flush skips the ones it already saw)."""
    from core.harness.flush import MemoryFlushManager
    from core.harness.messages import validate_message

    messages = [m for m in workspace.read_session(session_id).objects if not validate_message(m)]
    return MemoryFlushManager(workspace, llm).flush(messages, session_id=session_id)
