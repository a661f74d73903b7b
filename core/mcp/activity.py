"""MCP calls count as agent activity: each tool call and resource read goes into the activity log.

A middleware on the server sees every inbound message. It learns the client's name
from `initialize` (clientInfo.name: "claude-code", "cursor", "codex-mcp-client", ...)
and records each call under that name, so an agent that only searches and reads keeps
the workspace active and no dream starts under it. When the client goes away (its
stdin closes) a connection that made calls counts as one ended session toward the
dream's session gate, as a harness session does.
"""
from __future__ import annotations

import logging
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

    def __init__(self, paths, run: Callable[..., Awaitable[Any]]):
        self.paths = paths
        self.run = run              # the server's one workspace thread: records stay in call order
        self.client = UNNAMED_CLIENT
        self.calls = 0

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
        self.calls += 1
        try:
            await self.run(record_activity, self.paths, self.client, kind, detail)
        except (OSError, CoreError) as exc:   # a full disk must not fail the agent's call; idle is only a hint
            log.warning("could not record MCP activity: %s", exc)

    def finish(self) -> None:
        """The client went away: a connection that did something is one ended session."""
        if not self.calls:
            return
        try:
            record_activity(self.paths, self.client, "session_end", f"{self.calls} call(s)")
            record_session_ended(self.paths)
        except (OSError, CoreError) as exc:
            log.warning("could not record the end of the MCP session: %s", exc)
