"""Offloading raw messages to `sessions/<id>.log.jsonl`, each exactly once.

Compaction removes messages from the context; before it does, the originals
go to the append-only session log so nothing is ever lost. Which messages are
already there is read back from the log itself (by message id), so repeated
compactions, retries after a failed summary, and a restarted process never
write a message twice. Summaries are derived text and are not offloaded: the
originals they stand for are already in the log.

Messages that state no one's fact (the harness's notes to the model, a reply the
model could not give, an answer quoting recalled memory lines) are logged with their
text under `note` instead of `content`: the log keeps them, and search, which reads a
message's content, never returns "assistant: a query" as if it were memory.
"""
from __future__ import annotations

import datetime as dt
from pathlib import Path

from core.harness.eviction import restore_payloads
from core.harness.messages import Message, ensure_ids, is_summary
from core.store.sessions import append_jsonl, read_jsonl
from core.store.paths import WorkspacePaths


UNSTATED = ("harness", "failed", "recalled")     # core/harness/flush.py leaves these out too


def logged(msg: Message, now: str) -> Message:
    """A message as its log line holds it (an unstated one's text under `note`, out of search's reach)."""
    out = {**msg, "ts": msg.get("ts") or now}
    if msg.get("kind") in UNSTATED and out.get("content"):
        out["note"], out["content"] = out["content"], ""
    return out


class SessionOffloader:
    def __init__(self, paths: WorkspacePaths, session_id: str):
        self.paths = paths
        self.session_id = session_id
        self.path: Path = paths.session_log(session_id)
        self._seen: set[str] | None = None

    @property
    def rel_path(self) -> str:
        return self.paths.relative(self.path)

    def seen_ids(self) -> set[str]:
        if self._seen is None:
            self._seen = {str(obj["id"]) for obj in read_jsonl(self.path, self.paths.root).objects if "id" in obj}
        return self._seen

    def pending(self, messages: list[Message]) -> list[Message]:
        """The original messages of `messages` that are not in the log yet."""
        seen = self.seen_ids()
        out, batch = [], set()
        for msg in ensure_ids(messages):
            if is_summary(msg) or msg["id"] in seen or msg["id"] in batch:
                continue
            batch.add(msg["id"])
            out.append(msg)
        return out

    def offload(self, messages: list[Message]) -> int:
        """Append the messages not yet offloaded, as one durable write. Returns how many were written."""
        todo = self.pending(messages)
        if not todo:
            return 0
        now = dt.datetime.now().astimezone().isoformat(timespec="seconds")
        # The log is the full-fidelity record: evicted payloads are read back into it.
        append_jsonl(self.path, [logged(restore_payloads(self.paths, msg), now) for msg in todo], root=self.paths.root)
        self.seen_ids().update(msg["id"] for msg in todo)
        return len(todo)

    def read_all(self) -> list[Message]:
        return read_jsonl(self.path, self.paths.root).objects
