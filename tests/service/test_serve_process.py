"""`reverie serve` as a real process, next to a real MCP client over stdio.

While an agent searches the workspace through MCP (every second here; every 20 s in life,
with the 10-minute idle setting) no dream starts, though one is due; the agent's name and
its calls are in the activity log and `reverie status`, and its session counts toward the
dream gate. Once the agent stops, the workspace turns idle and `serve` writes a dream
proposal, leaving MEMORY.md as it was (auto-apply is off). A second `serve` waits for the
first; SIGTERM stops both cleanly.
"""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio

from core.dream.state import load_state
from core.store.activity import last_by_agent
from core.store.private import proposal_ids
from core.workspace import Workspace
from tests.support.dreamkit import opened_a_day_ago
from tests.support.mcp_client import data_of, mcp_client
from tests.support.processes import ROOT, python_env

IDLE_MINUTES = "0.2"          # 12 s without activity: idle
SEARCH_EVERY_S = 1.0
SEARCHING_S = 18.0            # longer than the idle setting: only the searches keep the workspace active
ACTIVE_NOTE = "a dream is due but the agent is active"
WAIT_S = 300.0                # the longest the test waits for anything (a loaded machine is slow, never wrong)


def _serve(ws: Path, out: Path) -> subprocess.Popen:
    command = [sys.executable, "-m", "core", "serve", str(ws), "--interval", "0.5",
               "--idle-minutes", IDLE_MINUTES, "--no-model"]
    with open(out, "w", encoding="utf-8") as handle:
        return subprocess.Popen(command, cwd=ROOT, env=python_env(), stdout=handle, stderr=subprocess.STDOUT)


def _wait_for(predicate, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not predicate():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.5)


def _stop(proc: subprocess.Popen) -> int:
    proc.send_signal(signal.SIGTERM)
    return proc.wait(timeout=WAIT_S)


def test_an_mcp_agent_searching_holds_dreams_off_then_serve_proposes_one_after_idle(tmp_path):
    ws_path = tmp_path / "ws"
    with Workspace.create(ws_path) as ws:
        ws.append_daily("The staging database moved to db-7.internal")
        ws.append_daily("Release notes are written in British English")
        opened_a_day_ago(ws)                     # the 24 h gate is open: only idle holds the dream
        memory_before = ws.read_memory().text
    serve_out, second_out = tmp_path / "serve.out", tmp_path / "second.out"
    first = second = None

    async def agent() -> int:
        nonlocal first, second
        searches = 0
        async with mcp_client(ws_path, tmp_path / "mcp.err", client_name="probe-agent") as client:
            await client.call_tool("memory_search", {"query": "staging database", "mode": "keyword"})
            first = _serve(ws_path, serve_out)             # the agent is already active when serve starts
            started = time.monotonic()
            # Search for SEARCHING_S, and on until serve has run its first tick and said it waits for idle.
            while time.monotonic() - started < SEARCHING_S or ACTIVE_NOTE not in serve_out.read_text(encoding="utf-8"):
                assert time.monotonic() - started < WAIT_S, "serve never ran its first tick"
                result = await client.call_tool("memory_search", {"query": "staging database", "mode": "keyword"})
                assert not result.is_error
                searches += 1
                if second is None and "scheduling" in serve_out.read_text(encoding="utf-8"):
                    second = _serve(ws_path, second_out)
                await anyio.sleep(SEARCH_EVERY_S)
            assert "dream: starting" not in serve_out.read_text(encoding="utf-8")
            hits = data_of(await client.call_tool("memory_search", {"query": "staging", "mode": "keyword"}))["hits"]
            assert hits and hits[0]["path"].startswith("memory/")
        return searches

    try:
        searches = anyio.run(agent)
        assert searches >= 3
        paths = Workspace.open(ws_path).paths
        assert proposal_ids(paths) == []                         # nothing dreamed while it searched
        agents = last_by_agent(paths)
        assert agents["probe-agent"].kind == "session_end"       # the client went away ...
        assert load_state(paths).sessions_since == 1             # ... and its session counts toward the gate

        assert second.wait(timeout=WAIT_S) == 2          # a second serve refuses at once, naming the first
        assert f"pid {first.pid}" in second_out.read_text(encoding="utf-8")

        # A shell's `reverie search` in hybrid mode is answered by the running serve, which has the model loaded.
        _wait_for(lambda: "searches are answered at once" in serve_out.read_text(encoding="utf-8"), "the model")
        found = subprocess.run([sys.executable, "-m", "core", "search", str(ws_path), "which host has the staging db",
                                "--mode", "hybrid", "--json"], cwd=ROOT, env=python_env(), capture_output=True,
                               text=True, timeout=WAIT_S)
        answer = json.loads(found.stdout)
        assert answer["via"] == "serve" and "db-7.internal" in answer["hits"][0]["text"]
        assert "answering `reverie search`" in serve_out.read_text(encoding="utf-8")

        _wait_for(lambda: proposal_ids(paths), "a dream proposal after idle")
        _wait_for(lambda: "waiting for review" in serve_out.read_text(encoding="utf-8"), "serve to report it")
        assert Workspace.open(ws_path).read_memory().text == memory_before    # proposed, never applied unasked

        status = subprocess.run([sys.executable, "-m", "core", "status", str(ws_path)], cwd=ROOT, env=python_env(),
                                capture_output=True, text=True, timeout=WAIT_S)
        assert status.returncode == 0, status.stderr
        assert "probe-agent" in status.stdout and "session_end" in status.stdout
        assert "scheduler: running" in status.stdout

        assert _stop(first) == 0
        output = serve_out.read_text(encoding="utf-8")
        assert output.rstrip().endswith("stopped") and "Traceback" not in output
    finally:
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()
