"""The MCP server against hostile input: planted links, malformed JSON-RPC, control characters, long paths.

All through the real `reverie mcp` process: the SDK's own stdio client (tests/support/mcp_client.py),
or raw lines on its stdin where the point is what the SDK's client would never send.
"""
from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys

import anyio

from tests.support.hostile import (SECRET, hostile_workspace, outside_state, plant_file_links, plant_folder_links,
                                   touched_outside)
from tests.support.mcp_client import REVERIE, data_of, mcp_client, text_of
from tests.support.processes import ROOT, python_env

CHECKPOINT = {"target": "ship it", "completed_steps": ["a"], "pending_steps": ["b"], "session_id": "mcp"}
HANDOFF = {"from_agent": "planner", "to_agent": "coder", "original_target": "ship it", "why_this_agent": "code",
           "completed_work": [], "known_constraints": [], "failed_attempts": [], "current_state": "planned",
           "success_criteria": "tests pass", "termination_condition": "merged"}


def _every_tool(client):
    """Each tool once with arguments that would reach a planted link; returns (tool, result) pairs."""
    async def run():
        out = []
        calls = [("memory_append", {"text": "a fact to remember"}), ("memory_get", {"path": "progress.md"}),
                 ("memory_get", {"path": f"memory/{dt.date.today().isoformat()}.md"}),
                 ("memory_get", {"path": "checkpoints/mcp/cp-outside.json"}), ("checkpoint_save", CHECKPOINT),
                 ("checkpoint_load", {"session_id": "mcp"}), ("checkpoint_load", {}),
                 ("handoff_create", HANDOFF), ("handoff_read", {"handoff_id": "ho-outside"}),
                 ("handoff_read", {"handoff_id": "ho-link"}), ("handoff_read", {}),
                 ("progress_update", {"goal": "g", "done": "d"}),
                 ("memory_search", {"query": "4b1d", "mode": "keyword"}), ("memory_get", {"path": "a" * 5000})]
        for tool, arguments in calls:
            out.append((tool, await client.call_tool(tool, arguments)))
        for uri in ("memory://MEMORY.md", "memory://daily/today"):
            try:
                out.append((uri, await client.read_resource(uri)))
            except Exception as exc:   # noqa: BLE001 - an error reply is fine; what it says is checked
                out.append((uri, exc))
        return out
    return run()


def _check(tmp_path, plant):
    ws, outside = hostile_workspace(tmp_path, plant)
    before = outside_state(outside)
    audit = tmp_path / "audit.log"

    async def session():
        async with mcp_client(ws, tmp_path / "stderr.log", audit_log=audit) as client:
            return await _every_tool(client)

    results = anyio.run(session)
    for name, result in results:
        text = str(result) if isinstance(result, Exception) else (
            text_of(result) if hasattr(result, "content") else json.dumps([c.text for c in result.contents]))
        assert SECRET not in text, name
        if getattr(result, "is_error", False):
            assert text.strip() and text.count("\n") == 0, (name, text)     # one line that says why
            assert text.rstrip().rstrip(":") != f"Error executing tool {name}", (name, text)
    assert touched_outside(audit, outside) == []
    assert outside_state(outside) == before
    return dict((name, r) for name, r in results)


def test_file_links_out_reach_nothing_over_mcp(tmp_path):
    results = _check(tmp_path, plant_file_links)
    assert results["memory_append"].is_error and "outside the workspace" in text_of(results["memory_append"])
    assert results["progress_update"].is_error
    assert "too long" in text_of(results["memory_get"])      # the last memory_get: the 5,000-character path


def test_folder_links_out_reach_nothing_over_mcp(tmp_path):
    results = _check(tmp_path, plant_folder_links)
    assert results["checkpoint_save"].is_error and "outside the workspace" in text_of(results["checkpoint_save"])
    assert results["handoff_create"].is_error
    assert not results["memory_append"].is_error       # memory/ is real: appends work


def _raw_exchange(ws, lines: list[str]) -> list[dict]:
    """Send `lines` after a proper initialize; one reply per line is read (a reply that never comes fails)."""
    proc = subprocess.Popen([str(REVERIE), "mcp", str(ws)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, cwd=ROOT, env=python_env())
    try:
        def send(line: str) -> None:
            proc.stdin.write(line + "\n")
            proc.stdin.flush()
        send(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}))
        assert json.loads(proc.stdout.readline())["id"] == 0
        send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        replies = []
        for line in lines:
            send(line)
            replies.append(json.loads(proc.stdout.readline()))
        send("")                       # a blank line is not a message: no reply, and the server goes on
        send(json.dumps({"jsonrpc": "2.0", "id": "last", "method": "ping"}))
        assert json.loads(proc.stdout.readline())["id"] == "last"
        return replies
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)


def test_malformed_json_rpc_gets_an_error_reply_per_the_spec(workspace):
    cases = [("{not json", None, -32700), ("[]", None, -32600), ('[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]',
             None, -32600), ("42", None, -32600), ('"text"', None, -32600), ("null", None, -32600),
             ('{"jsonrpc": "1.0", "id": 2, "method": "ping"}', 2, -32600), ('{"id": 3, "method": "ping"}', 3, -32600),
             ('{"jsonrpc": "2.0", "id": 4, "method": 5}', 4, -32600),
             ('{"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}', None, -32600),
             ('{"jsonrpc": "2.0", "id": true, "method": "ping"}', None, -32600),
             ('{"jsonrpc": "2.0", "id": 6, "method": "ping", "params": "x"}', 6, -32600),
             ('{"jsonrpc": "2.0", "id": 7}', 7, -32600), ('{"foo": "bar"}', None, -32600),
             ('{"jsonrpc": "2.0", "id": 8, "method": "no/such/method"}', 8, -32601)]
    replies = _raw_exchange(workspace.root, [line for line, _id, _code in cases])
    for (line, request_id, code), reply in zip(cases, replies):
        assert reply["jsonrpc"] == "2.0" and reply["id"] == request_id, line
        assert reply["error"]["code"] == code and reply["error"]["message"], line


def test_control_characters_are_escaped_and_the_goal_keeps_any_text(workspace):
    async def session():
        async with mcp_client(workspace.root, workspace.root.parent / "stderr.log") as client:
            added = data_of(await client.call_tool("memory_append", {"text": "bell\x07 nul\x00 esc\x1b[31mred"}))
            first = data_of(await client.call_tool("progress_update", {"goal": "## Heading: migrate *billing*"}))
            second = data_of(await client.call_tool("progress_update", {"done": "schema converted"}))
            third = data_of(await client.call_tool("progress_update", {"next_step": "# not a heading either"}))
            return added, first, second, third

    added, first, second, third = anyio.run(session)
    stored = (workspace.root / added["path"]).read_text(encoding="utf-8")
    assert "\x1b" not in stored and "\x00" not in stored and "\x07" not in stored
    assert "bell\\x07 nul\\x00 esc\\x1b[31mred" in stored
    from core.harness.anchor import AnchorStore

    anchor = AnchorStore(workspace).load()
    assert anchor.goal == "## Heading: migrate *billing*"
    assert anchor.next_step == "# not a heading either" and anchor.progress == ("schema converted",)
    assert "## Heading: migrate *billing*" in third


def test_the_cli_prints_no_terminal_escapes(workspace):
    workspace.append_daily("- plain")
    path = workspace.paths.daily_log(dt.date.today())
    with open(path, "a", encoding="utf-8") as handle:      # an agent wrote raw bytes past Reverie
        handle.write("- colour \x1b]0;pwned\x07 here\n")
    rel = workspace.relative(path)
    for command in (["read", str(workspace.root), rel], ["search", str(workspace.root), "colour", "--mode", "keyword"]):
        done = subprocess.run([sys.executable, "-m", "core", *command], capture_output=True, text=True, cwd=ROOT,
                              env=python_env(), timeout=120)
        assert done.returncode == 0, done.stderr
        assert "\x1b" not in done.stdout and "\x07" not in done.stdout and "\\x1b]0;pwned\\x07" in done.stdout
