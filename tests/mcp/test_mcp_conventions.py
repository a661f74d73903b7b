"""MCP conventions agents rely on: tool hints, a missing file reads empty, `memory_recent`, and every
call recorded under the client's own name (a real server over stdio)."""
from __future__ import annotations

import datetime as dt
from pathlib import Path

import anyio

from core.mcp.activity import tool_kind
from core.mcp.recent import memory_recent
from core.store.activity import last_by_agent, read_since, record_activity
from core.workspace import Workspace
from tests.support.mcp_client import data_of, mcp_client, text_of

READ_ONLY = {"memory_search", "memory_get", "memory_recent", "checkpoint_load", "handoff_read"}


def test_hints_missing_files_recent_activity_and_the_client_name_over_stdio(tmp_path):
    ws_path = tmp_path / "ws"
    with Workspace.create(ws_path) as ws:
        ws.append_daily("The build cache lives on the NAS")

    async def session():
        async with mcp_client(ws_path, tmp_path / "mcp.err", client_name="claude-code") as client:
            tools = {t.name: t.annotations for t in (await client.list_tools()).tools}
            for name, hints in tools.items():
                assert hints.read_only_hint is (name in READ_ONLY), name
                assert hints.idempotent_hint is (name in READ_ONLY), name
                assert hints.open_world_hint is False
                if name not in READ_ONLY:
                    assert hints.destructive_hint is (name == "progress_update"), name
            missing = await client.call_tool("memory_get", {"path": "memory/1999-01-01.md"})
            assert not missing.is_error
            assert data_of(missing) == "memory/1999-01-01.md is empty (no such file yet)"
            escape = await client.call_tool("memory_get", {"path": "../elsewhere.md"})
            assert escape.is_error                                  # missing outside the workspace: still refused
            recent = data_of(await client.call_tool("memory_recent", {"days": 2}))
            assert any("build cache lives on the NAS" in line for log in recent["daily_logs"] for line in log["lines"])
            assert [a["agent"] for a in recent["agents"]] == ["claude-code"]
            await client.call_tool("memory_append", {"text": "CI runs on Tuesdays"})
            return text_of(await client.call_tool("memory_search", {"query": "NAS", "mode": "keyword"}))

    assert "NAS" in anyio.run(session)
    paths = Workspace.open(ws_path).paths
    kinds = [(e.agent, e.kind, e.detail) for e in read_since(paths, 0)]
    assert kinds[:2] == [("claude-code", "read", "memory_get"), ("claude-code", "read", "memory_get")]
    assert ("claude-code", "write", "memory_append") in kinds and ("claude-code", "search", "memory_search") in kinds
    assert kinds[-1] == ("claude-code", "session_end", "5 call(s)")
    assert tool_kind("memory_search") == "search" and tool_kind("checkpoint_save") == "write"


def test_memory_recent_keeps_to_its_days_and_its_budget(workspace, monkeypatch):
    today = dt.date(2026, 12, 6)
    workspace.append_daily("old fact", day=today - dt.timedelta(days=10))
    workspace.append_daily("yesterday's fact", day=today - dt.timedelta(days=1))
    workspace.session_cache.add("s-1", "worked on the release")
    record_activity(workspace.paths, "codex", "search")
    recent = memory_recent(workspace, days=3, today=today)
    assert recent["since"] == "2026-12-04"
    assert [log["date"] for log in recent["daily_logs"]] == ["2026-12-05"]
    assert recent["sessions"] == [] or recent["sessions"][0]["session_id"] == "s-1"
    assert [a["agent"] for a in recent["agents"]] == ["codex"]
    assert memory_recent(workspace, days=500, today=today)["days"] == 90
    monkeypatch.setattr("core.mcp.recent.MAX_CHARS", 5)
    cut = memory_recent(workspace, days=30, today=today)
    assert cut["truncated"] and all(log["truncated"] for log in cut["daily_logs"])
    assert last_by_agent(workspace.paths)["codex"].kind == "search"


def test_a_pause_as_long_as_the_idle_setting_ends_an_mcp_session(workspace):
    from types import SimpleNamespace

    from core.dream.state import load_state
    from core.mcp.activity import ActivityMiddleware

    now = [1_000.0]

    async def run(fn, *args):
        return fn(*args)

    async def call_next(ctx):
        return {"ok": True}

    middleware = ActivityMiddleware(workspace.paths, run, session_gap_s=600, clock=lambda: now[0])

    async def call(method, params):
        return await middleware(SimpleNamespace(method=method, params=params, session=None), call_next)

    async def day():
        await call("initialize", {"clientInfo": {"name": "cursor", "version": "1"}})
        for step in (0, 60, 120):                        # one session: calls a minute apart
            now[0] = 1_000.0 + step
            await call("tools/call", {"name": "memory_search", "arguments": {"query": "x"}})
        assert load_state(workspace.paths).sessions_since == 0
        now[0] = 1_000.0 + 120 + 600                      # back after the idle setting: a new session
        await call("resources/read", {"uri": "memory://MEMORY.md"})
        assert load_state(workspace.paths).sessions_since == 1
    anyio.run(day)
    middleware.finish()                                   # the client goes away: the second session ends
    assert load_state(workspace.paths).sessions_since == 2
    ends = [e for e in read_since(workspace.paths, 0) if e.kind == "session_end"]
    assert [(e.agent, e.detail, e.timestamp) for e in ends][0] == ("cursor", "3 call(s)", 1_120.0)
    assert ends[1].detail == "1 call(s)"
