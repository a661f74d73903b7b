"""The memory tools an MCP client calls, as plain methods over a `Workspace`.

No MCP here: `core/mcp_server.py` exposes these methods over stdio, and tests
call them directly too. Every caller-given path goes through the workspace's
confinement before anything is opened, reads are bounded (an agent's context
is small), and every write goes through the store (append-only daily logs,
atomic checkpoints and hand-offs, compare-and-swap on progress.md).
"""
from __future__ import annotations

import datetime as dt
import threading
import time
from typing import Any

from core.errors import CoreError, NotFoundError, PathEscapeError
from core.secrets import mask_line, mask_secrets, mask_window
from core.store.checkpoints import new_checkpoint_id, next_task
from core.store.memory_md import strip_comments

SEARCH_MODES = ("keyword", "meaning", "hybrid", "vector")   # "vector": the older name of "meaning"
MAX_K = 50
MAX_READ_CHARS = 20_000
MAX_BULLET_CHARS = 2_000
PRIVATE_PREFIX = ".reverie"       # derived and private state: never served to an agent
RESYNC_AFTER_S = 2.0              # files may change outside this process (the app, a person)
VECTOR_WAIT_S = 30.0              # longest a vector search waits for pending embeddings


class ToolInputError(CoreError):
    """A tool was called with arguments it cannot act on (the message says which and why)."""


def _clean_line(text: str) -> str:
    return " ".join(str(text).split())


class MemoryTools:
    def __init__(self, workspace, *, clock=time.monotonic):
        self.ws = workspace
        self._clock = clock
        self._synced_at: float | None = None
        self._sync_lock = threading.Lock()

    # ----- search ------------------------------------------------------------------------------
    def memory_search(self, query: str, k: int = 8, mode: str | None = None, kinds: list[str] | None = None,
                      since: str | None = None, until: str | None = None) -> dict[str, Any]:
        from core.index.filters import SearchFilter, SearchFilterError
        from core.index.search import canonical_mode

        query = str(query or "").strip()
        if not query:
            raise ToolInputError("memory_search needs a non-empty query")
        if mode is not None and mode not in SEARCH_MODES:
            raise ToolInputError(f"unknown search mode {mode!r}; use one of {', '.join(SEARCH_MODES[:3])}")
        try:
            scope = SearchFilter.of(kinds, since, until)
        except SearchFilterError as exc:
            raise ToolInputError(str(exc)) from None
        mode = canonical_mode(mode, self.ws.settings.search.default_mode)
        k = max(1, min(int(k), MAX_K))
        self._sync_if_stale()
        if mode == "meaning":
            # Vector-only search sees only embedded lines; right after a start (or a big import) they are
            # still being embedded in the background. Hybrid does not wait: its keyword half answers now.
            wait = getattr(self.ws.index, "wait_embeddings", None)
            if wait is not None:
                wait(timeout=VECTOR_WAIT_S)
        result = self.ws.search(query, k=k, mode=mode, kinds=scope.kinds, since=scope.since, until=scope.until)
        # "count" and "hits" are the lines that match; "nearby" (context found through neighbouring
        # lines' words) comes apart and uncounted; "pending_embeddings" when meaning may miss lines.
        out: dict[str, Any] = result.as_dict()
        out["query"] = query
        out["hits"] = [self._masked_hit(hit) for hit in out["hits"]]
        out["nearby"] = [self._masked_hit(hit) for hit in out["nearby"]]
        return out

    @property
    def masking(self) -> bool:
        """Whether agents see secret values masked (the person can turn it off: memory.mask_secrets)."""
        return bool(self.ws.settings.memory.mask_secrets)

    def shown(self, text: str) -> str:
        """Text as an agent may read it."""
        return mask_secrets(text) if self.masking else text

    def _masked_hit(self, hit: dict[str, Any]) -> dict[str, Any]:
        if self.masking:
            for key in ("text", "snippet"):
                if isinstance(hit.get(key), str):
                    hit[key] = mask_line(hit[key]) if "\n" not in hit[key] else mask_secrets(hit[key])
        return hit

    def _sync_if_stale(self) -> None:
        """Bring the index up to date with the files when it may be behind.

        Our own writes reindex through the facade; this catches what another process wrote.
        The scan is incremental (size/mtime), so doing it at most every few seconds is cheap.
        """
        with self._sync_lock:
            now = self._clock()
            if self._synced_at is None or now - self._synced_at >= RESYNC_AFTER_S:
                self.ws.sync_index()
                self._synced_at = self._clock()

    # ----- reading -----------------------------------------------------------------------------
    def confined(self, path: str) -> str:
        """The workspace-relative form of a caller's path; refused outside the workspace or in .reverie/."""
        path = str(path or "").strip()
        if not path:
            raise ToolInputError("give a workspace-relative path, e.g. MEMORY.md or memory/2026-11-30.md")
        rel = self.ws.relative(self.ws.resolve(path))   # PathEscapeError before anything is opened
        if rel == PRIVATE_PREFIX or rel.startswith(PRIVATE_PREFIX + "/"):
            raise PathEscapeError(f"{rel} is Reverie's private state, not memory; it cannot be read through MCP")
        return rel

    def memory_get(self, path: str, start: int = 1, end: int | None = None) -> str:
        rel = self.confined(path)
        target = self.ws.resolve(rel)
        if not target.is_file():
            # A plain path to a file not written yet (today's log, progress.md) reads as empty, as other
            # memory servers answer; a folder, or a path that only names a file after rewriting, is an error.
            if target.exists() or rel != str(path).strip() or "\\" in rel:
                raise NotFoundError(f"no file {rel!r} in the workspace")
            return f"{rel} is empty (no such file yet)"
        lines = self.ws.read(rel).text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()   # the newline that ends the last line is not a line of its own
        total = len(lines)
        start = max(1, int(start))
        end = total if end is None else min(int(end), total)
        if start > max(total, 1) or end < start:
            return f"{rel} has {total} line(s); lines {start}-{end} are empty"
        used, last = 0, start - 1
        for number in range(start, end + 1):      # the lines that fit the answer
            size = len(lines[number - 1])
            if number > start and used + size > MAX_READ_CHARS:
                break
            used += size + 1
            last = number
        shown = mask_window(lines, start - 1, last) if self.masking else lines[start - 1:last]
        out = [f"{number}: {line[:MAX_READ_CHARS]}" for number, line in enumerate(shown, start=start)]
        more = f"\n... ({rel} continues: call memory_get with start={last + 1})" if last < end else ""
        return f"{rel} lines {start}-{last} of {total}:\n" + "\n".join(out) + more

    def memory_md(self) -> str:
        """MEMORY.md as an agent should see it: provenance comments stripped."""
        if not self.ws.paths.memory_md.exists():
            return ""
        return self.shown(strip_comments(self.ws.read_memory().text))

    def today_log(self, today: dt.date | None = None) -> str:
        path = self.ws.paths.daily_log(today or dt.date.today())
        if not path.exists():
            return ""
        return self.shown(self.ws.read(self.ws.relative(path)).text)

    # ----- writing -----------------------------------------------------------------------------
    def memory_append(self, text: str, source: str | None = None, now: dt.datetime | None = None) -> dict[str, Any]:
        """One bullet into today's daily log, stamped with the time (and its source, when given)."""
        fact = _clean_line(text).lstrip("-* ").strip()
        if not fact:
            raise ToolInputError("memory_append needs the fact to remember as text")
        if len(fact) > MAX_BULLET_CHARS:
            raise ToolInputError(f"one bullet holds one fact: {len(fact):,} characters is over "
                                 f"{MAX_BULLET_CHARS:,}; split it into several appends")
        src = _clean_line(source or "")
        now = now or dt.datetime.now().astimezone()
        bullet = f"- [{now:%H:%M}] {fact}" + (f" (source: {src})" if src else "")
        changes = self.ws.append_daily(bullet, day=now.date())   # secret values are redacted on the way in
        first, last = changes.info["lines"]
        return {"path": changes.paths[0], "line": first, "last_line": last,
                "text": changes.info.get("text", bullet), "redacted": changes.info.get("redacted", 0)}

    def checkpoint_save(self, target: str, completed_steps: list[str], pending_steps: list[str], *,
                        session_id: str = "mcp", context_summary: str = "", last_action: str = "",
                        artifacts: dict[str, str] | None = None, error_state: str | None = None,
                        tasks: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        now = dt.datetime.now(dt.timezone.utc)
        data: dict[str, Any] = {
            "timestamp": now.isoformat(), "session_id": session_id or "mcp",
            "checkpoint_id": new_checkpoint_id(now), "target": target,
            "completed_steps": list(completed_steps), "pending_steps": list(pending_steps),
            "artifacts": dict(artifacts or {}), "context_summary": context_summary,
            "last_action": last_action, "error_state": error_state,
        }
        if tasks:
            data["tasks"] = list(tasks)
        changes = self.ws.save_checkpoint(data)   # validated by the store (FormatError names each problem)
        return {"checkpoint_id": data["checkpoint_id"], "session_id": data["session_id"], "path": changes.paths[0]}

    def checkpoint_load(self, session_id: str | None = None) -> dict[str, Any]:
        data = self.ws.latest_checkpoint(session_id or None)
        if data is None:
            where = f"for session {session_id!r}" if session_id else "in this workspace"
            return {"found": False, "message": f"no checkpoint saved yet {where}"}
        return {"found": True, "checkpoint": data, "next_task": next_task(data)}

    def handoff_create(self, packet: dict[str, Any], task_id: str | None = None) -> dict[str, Any]:
        record, changes = self.ws.create_handoff(packet, task_id or None)   # a loop is refused
        return {"handoff": record, "path": changes.paths[0]}

    def handoff_read(self, handoff_id: str = "", to_agent: str = "") -> dict[str, Any]:
        if handoff_id:
            return self.ws.read_handoff(handoff_id)
        packets = [p for p in self.ws.handoffs() if not to_agent or p.get("to_agent") == to_agent]
        if not packets:
            raise NotFoundError("no hand-off" + (f" addressed to {to_agent!r}" if to_agent else "") +
                                " in this workspace")
        return packets[-1]

    def progress_update(self, *, goal: str | None = None, done: str | None = None,
                        blockers: list[str] | None = None, next_step: str | None = None) -> str:
        from core.harness.anchor import AnchorStore

        if goal is None and done is None and blockers is None and next_step is None:
            raise ToolInputError("progress_update needs at least one of goal, done, blockers, next_step")
        anchor = AnchorStore(self.ws).update(goal=goal, done=done, blockers=blockers, next_step=next_step)
        return anchor.render()

