"""MCP calls count as agent activity: each tool call and resource read goes into the activity log.

A middleware on the server sees every inbound message. It learns the client's name
from `initialize` (clientInfo.name: "claude-code", "cursor", "codex-mcp-client", ...)
and records each call under that name, so an agent that only searches and reads keeps
the workspace active and no dream starts under it. When the client goes away (its
stdin closes) a connection that made calls counts as one ended session toward the
dream's session gate, as a harness session does. A client that keeps the server running
all day (Claude Code, Cursor) would end no session that way, so a pause of `session_gap_s`
(the idle setting) between calls also ends one: the calls after it are the next session.
"""
from __future__ import annotations

import logging
import time
from typing import Any, Awaitable, Callable

from core.dream.state import record_session_ended
from core.errors import CoreError
from core.store.activity import record_activity

log = logging.getLogger("reverie.mcp")

UNNAMED_CLIENT = "mcp client"
WRITE_TOOLS = {"memory_append", "checkpoint_save", "handoff_create", "progress_update"}
SEARCH_TOOLS = {"memory_search"}


def tool_kind(tool: str) -> str:
    if tool in SEARCH_TOOLS:
        return "search"
    return "write" if tool in WRITE_TOOLS else "read"


CLIENT_INFO_META = "io.modelcontextprotocol/clientInfo"   # where 2026-era clients name themselves per request


def _name_of(info: Any) -> str:
    name = info.get("name") if isinstance(info, dict) else getattr(info, "name", None)
    return name.strip() if isinstance(name, str) else ""


def client_name(ctx) -> str:
    """The client's own name: from `initialize`, from a request's envelope, or from the session."""
    params = getattr(ctx, "params", None) or {}
    meta = params.get("_meta") if isinstance(params, dict) else None
    for info in (params.get("clientInfo") if isinstance(params, dict) else None,
                 meta.get(CLIENT_INFO_META) if isinstance(meta, dict) else None,
                 getattr(getattr(getattr(ctx, "session", None), "client_params", None), "client_info", None)):
        name = _name_of(info)
        if name:
            return name
    return ""


class ActivityMiddleware:
    """A `ServerMiddleware`: `(ctx, call_next) -> result`, recording calls on the workspace thread."""

    def __init__(self, paths, run: Callable[..., Awaitable[Any]], *, session_gap_s: float = 600.0,
                 clock: Callable[[], float] = time.time):
        self.paths = paths
        self.run = run              # the server's one workspace thread: records stay in call order
        self.session_gap_s = session_gap_s
        self.clock = clock
        self.client = UNNAMED_CLIENT
        self.calls = 0              # calls of the current session
        self.last_call = 0.0

    async def __call__(self, ctx, call_next):
        method = getattr(ctx, "method", "")
        params = getattr(ctx, "params", None)
        if self.client == UNNAMED_CLIENT and method != "notifications/cancelled":
            self.client = client_name(ctx) or UNNAMED_CLIENT
        if method in ("tools/call", "resources/read"):
            params = dict(params or {})
            if method == "tools/call":
                kind, detail = tool_kind(str(params.get("name", ""))), str(params.get("name", ""))
            else:
                kind, detail = "read", str(params.get("uri", ""))
            await self._record(kind, detail)
        return await call_next(ctx)

    async def _record(self, kind: str, detail: str) -> None:
        now = self.clock()
        if self.calls and now - self.last_call >= self.session_gap_s:
            await self.run(self._quietly, self._end_session, self.last_call)   # the pause ended the last session
        self.calls += 1
        self.last_call = now
        await self.run(self._quietly, record_activity, self.paths, self.client, kind, detail, now)

    @staticmethod
    def _quietly(record: Callable[..., Any], *args) -> None:
        """Run a recording on the worker thread; a read-only or full disk must not fail the agent's
        call (the runner would turn the error into the tool's), since idle is only a hint."""
        try:
            record(*args)
        except (OSError, CoreError) as exc:
            log.warning("could not record MCP activity: %s", exc)

    def _end_session(self, when: float | None = None) -> None:
        calls, self.calls = self.calls, 0
        record_activity(self.paths, self.client, "session_end", f"{calls} call(s)", when)
        record_session_ended(self.paths)

    def finish(self) -> None:
        """The client went away: a connection that did something since its last session is one ended session."""
        if not self.calls:
            return
        try:
            self._end_session()
        except (OSError, CoreError) as exc:
            log.warning("could not record the end of the MCP session: %s", exc)
