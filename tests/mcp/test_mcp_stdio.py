"""The MCP server end to end: the real `reverie mcp` process, the SDK's own stdio client."""
from __future__ import annotations

import datetime as dt
import json
import subprocess
from pathlib import Path

import anyio
import pytest

from tests.support.mcp_client import REVERIE, data_of, mcp_client, text_of

TOOLS = {"memory_search", "memory_get", "memory_recent", "memory_append", "checkpoint_save", "checkpoint_load",
         "handoff_create", "handoff_read", "progress_update"}
SECRET = "TOP-SECRET-7f3a9c-outside-the-workspace"


def _demo(tmp_path: Path) -> Path:
    from core.demo import write_demo

    write_demo(tmp_path / "demo")
    return tmp_path / "demo"


def test_every_tool_and_resource_over_stdio(tmp_path):
    ws = _demo(tmp_path)

    async def session():
        async with mcp_client(ws, tmp_path / "stderr.log") as client:
            assert {t.name for t in (await client.list_tools()).tools} == TOOLS
            uris = {str(r.uri) for r in (await client.list_resources()).resources}
            assert uris == {"memory://MEMORY.md", "memory://daily/today"}

            found = data_of(await client.call_tool("memory_search", {"query": "tea", "mode": "keyword"}))
            assert any(h["path"] == "MEMORY.md" and "tea" in h["text"].lower() for h in found["hits"])
            chinese = data_of(await client.call_tool("memory_search", {"query": "陈伟", "k": 5, "mode": "keyword"}))
            assert chinese["hits"] and "陈伟" in chinese["hits"][0]["text"]
            bad_mode = await client.call_tool("memory_search", {"query": "tea", "mode": "fuzzy"})
            assert bad_mode.is_error

            head = data_of(await client.call_tool("memory_get", {"path": "MEMORY.md", "start": 1, "end": 3}))
            assert head.splitlines()[1:] == ["1: # MEMORY", "2: ", "3: Curated long-term memory for Orchard's "
                                             "coding agent. One fact per bullet."]

            added = data_of(await client.call_tool("memory_append", {"text": "Maya's cat is called Pixel",
                                                                     "source": "conversation"}))
            today = dt.date.today().isoformat()
            assert added["path"] == f"memory/{today}.md"
            log_text = (ws / added["path"]).read_text(encoding="utf-8")
            assert log_text.splitlines()[added["line"] - 1].endswith("Maya's cat is called Pixel (source: conversation)")
            again = data_of(await client.call_tool("memory_search", {"query": "Pixel", "mode": "keyword"}))
            assert (again["hits"][0]["path"], again["hits"][0]["line"]) == (added["path"], added["line"])
            assert again["mode"] == "keyword"

            saved = data_of(await client.call_tool("checkpoint_save", {
                "target": "Ship the MCP server", "completed_steps": ["tools"], "pending_steps": ["docs"],
                "session_id": "s-mcp-1", "last_action": "wrote tests",
                "tasks": [{"id": "a", "status": "done"}, {"id": "b", "status": "pending", "depends_on": ["a"]}]}))
            assert (ws / saved["path"]).is_file()
            loaded = data_of(await client.call_tool("checkpoint_load", {"session_id": "s-mcp-1"}))
            assert loaded["found"] and loaded["checkpoint"]["target"] == "Ship the MCP server"
            assert loaded["next_task"]["id"] == "b"
            bad = await client.call_tool("checkpoint_save", {"target": "x", "completed_steps": [], "pending_steps": [],
                                                             "artifacts": {"a.py": "not-a-digest"}})
            assert bad.is_error and "sha256" in text_of(bad)

            packet = {"from_agent": "alpha", "to_agent": "beta", "original_target": "Port the parser",
                      "why_this_agent": "beta knows Rust", "completed_work": ["spec"], "known_constraints": [],
                      "failed_attempts": [], "current_state": "spec written", "success_criteria": "tests pass",
                      "termination_condition": "merged", "task_id": "port-parser"}
            made = data_of(await client.call_tool("handoff_create", packet))
            read = data_of(await client.call_tool("handoff_read", {"handoff_id": made["handoff"]["id"]}))
            assert read["to_agent"] == "beta" and read["hop"] == 1
            newest = data_of(await client.call_tool("handoff_read", {"to_agent": "beta"}))
            assert newest["id"] == made["handoff"]["id"]
            loop = await client.call_tool("handoff_create", {**packet, "from_agent": "beta", "to_agent": "alpha"})
            assert loop.is_error and "loop" in text_of(loop)

            progress = data_of(await client.call_tool("progress_update", {"done": "MCP tools answer",
                                                                          "next_step": "write the docs"}))
            assert "- MCP tools answer" in progress and "write the docs" in progress
            assert "- MCP tools answer" in (ws / "progress.md").read_text(encoding="utf-8")

            memory = (await client.read_resource("memory://MEMORY.md")).contents[0].text
            assert "## Preferences" in memory and "<!--" not in memory
            daily = (await client.read_resource("memory://daily/today")).contents[0].text
            assert "Maya's cat is called Pixel" in daily

    anyio.run(session)


def test_path_escapes_read_nothing_outside_the_workspace(tmp_path):
    ws = _demo(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET + "\n", encoding="utf-8")
    (ws / "memory" / "leak.md").symlink_to(outside / "secret.txt")
    (ws / "linkdir").symlink_to(outside, target_is_directory=True)
    audit = tmp_path / "audit.log"
    capture = tmp_path / "stdout.bin"
    escapes = ["../outside/secret.txt", str(outside / "secret.txt"), "memory/../../outside/secret.txt",
               "memory/leak.md", "linkdir/secret.txt", "linkdir", "/etc/passwd", "../../../../../../etc/passwd",
               "memory/\x00../../outside/secret.txt", ".reverie/config.toml", ".reverie", "..", "",
               "..\\outside\\secret.txt", "file://" + str(outside / "secret.txt"), "~/../outside/secret.txt"]
    id_escapes = [("checkpoint_load", {"session_id": "../outside"}),
                  ("checkpoint_save", {"target": "t", "completed_steps": [], "pending_steps": [],
                                       "session_id": "../../outside"}),
                  ("handoff_read", {"handoff_id": "../outside/secret"}),
                  ("handoff_read", {"handoff_id": str(outside / "secret")})]

    async def session():
        answers = []
        async with mcp_client(ws, tmp_path / "stderr.log", audit_log=audit, capture=capture, noisy=True) as client:
            for path in escapes:
                result = await client.call_tool("memory_get", {"path": path})
                assert result.is_error, path
                answers.append(text_of(result))
            for tool, arguments in id_escapes:
                result = await client.call_tool(tool, arguments)
                assert result.is_error, (tool, arguments)
                answers.append(text_of(result))
            for uri in ["memory://../outside/secret.txt", "file://" + str(outside / "secret.txt")]:
                with pytest.raises(Exception):
                    await client.read_resource(uri)
            # the server still works after all that
            ok = await client.call_tool("memory_get", {"path": "MEMORY.md", "end": 1})
            assert not ok.is_error
        return answers

    answers = anyio.run(session)
    assert not any(SECRET in answer for answer in answers)
    opened = audit.read_text(encoding="utf-8").splitlines()
    assert any(line.endswith(str(ws.resolve() / "MEMORY.md")) for line in opened)   # the hook did record reads
    outside_root = str(outside.resolve())
    etc_reads = [line for line in opened if line.split("\t", 1)[1].startswith("/etc/passwd")]
    reads_outside = [line for line in opened if line.split("\t", 1)[1].startswith(outside_root)]
    assert reads_outside == [] and etc_reads == []
    assert not (tmp_path / "outside" / "checkpoints").exists() and not (tmp_path / "checkpoints").exists()
    assert_only_protocol(capture.read_bytes(), minimum_responses=len(escapes) + len(id_escapes) + 3)
    assert b"noise" in (tmp_path / "stderr.log").read_bytes()    # the junk was really printed, to stderr


def assert_only_protocol(raw: bytes, minimum_responses: int) -> None:
    """Every byte on the server's stdout belongs to a JSON-RPC message, one per line."""
    import mcp_types

    assert raw.endswith(b"\n") and b"noise" not in raw
    responses = 0
    for line in raw.split(b"\n")[:-1]:
        message = mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)   # raises on any junk
        assert json.loads(line)["jsonrpc"] == "2.0"
        responses += hasattr(message, "result") or hasattr(message, "error")
    assert responses >= minimum_responses


@pytest.mark.slow
def test_a_thousand_mixed_calls_leave_only_protocol_bytes_on_stdout(tmp_path):
    """Even with a thread in the server printing to stdout the whole time (print, sys.stdout, fd 1, a child).

    Slow (tens of seconds): every write is fsynced and reindexed. The path-escape test checks the same
    stdout property on a few dozen calls in the quick run.
    """
    ws = _demo(tmp_path)
    capture = tmp_path / "stdout.bin"
    expected_errors = 0

    async def session():
        nonlocal expected_errors
        done = 0
        async with mcp_client(ws, tmp_path / "stderr.log", capture=capture, noisy=True) as client:
            async def one(i: int) -> None:
                nonlocal done, expected_errors
                kind = i % 10
                if kind == 0:
                    r = await client.call_tool("memory_search", {"query": ["tea", "Keycloak", "固件", "port 5433"][i % 4],
                                                                 "mode": "keyword", "k": 3})
                elif kind == 1:
                    r = await client.call_tool("memory_get", {"path": "MEMORY.md", "start": 1 + i % 30, "end": 3 + i % 30})
                elif kind == 2:
                    r = await client.call_tool("memory_append", {"text": f"fact number {i}", "source": "load test"})
                elif kind == 3:
                    r = await client.call_tool("checkpoint_save", {"target": "load", "completed_steps": [str(i)],
                                                                   "pending_steps": [], "session_id": "s-load"})
                elif kind == 4:
                    r = await client.call_tool("checkpoint_load", {"session_id": "s-load"})
                elif kind == 5:
                    r = await client.call_tool("memory_get", {"path": f"../../etc/passwd{i}"})
                    assert r.is_error
                    expected_errors += 1
                elif kind == 6:
                    r = await client.call_tool("handoff_read", {"handoff_id": "ho-orchard-oncall"})
                elif kind == 7:
                    r = await client.call_tool("progress_update", {"done": f"step {i}"})
                elif kind == 8:
                    text = (await client.read_resource("memory://daily/today")).contents[0].text
                    assert text.startswith("# ") or text == ""
                    done += 1
                    return
                else:
                    r = await client.call_tool("no_such_tool", {}) if i % 20 == 9 else await client.list_tools()
                    if i % 20 == 9:
                        assert r.is_error
                        expected_errors += 1
                if kind not in (5, 9):
                    assert not getattr(r, "is_error", False), text_of(r)
                done += 1

            i = 0
            while i < 1000:
                if i % 100 < 50:       # half one at a time, half ten in flight at once
                    await one(i)
                    i += 1
                else:
                    async with anyio.create_task_group() as group:
                        for j in range(i, i + 10):
                            group.start_soon(one, j)
                    i += 10
        return done

    assert anyio.run(session) == 1000
    assert_only_protocol(capture.read_bytes(), minimum_responses=1000)
    assert b"noise" in (tmp_path / "stderr.log").read_bytes()    # the junk was really printed, to stderr
    log = (ws / "memory" / f"{dt.date.today().isoformat()}.md").read_text(encoding="utf-8")
    assert sum("(source: load test)" in line for line in log.splitlines()) == 100
    assert "- step 997" in (ws / "progress.md").read_text(encoding="utf-8")
    assert expected_errors == 150


@pytest.mark.slow
def test_vector_and_hybrid_search_over_stdio(tmp_path):
    """The modes that load the embedding model (slow: the model loads and the demo is embedded first)."""
    ws = _demo(tmp_path)

    async def session():
        async with mcp_client(ws, tmp_path / "stderr.log") as client:
            default = data_of(await client.call_tool("memory_search", {"query": "what does Maya drink"}))
            vector = data_of(await client.call_tool("memory_search", {"query": "hot drink she likes",
                                                                      "mode": "vector", "k": 5}))
            nonsense = data_of(await client.call_tool("memory_search", {"query": "zxqvbnm"}))
            return default, vector, nonsense

    default, vector, nonsense = anyio.run(session)
    assert default["mode"] == "hybrid" and default["hits"]
    assert vector["mode"] == "meaning" and vector["hits"]                 # the older name still works
    assert all({"path", "line", "text", "score", "match", "similarity"} <= set(h) for h in vector["hits"])
    assert all(h["match"] in ("meaning", "both") for h in vector["hits"])
    assert nonsense["hits"] == []


def test_a_missing_workspace_is_one_line_on_stderr_and_nothing_on_stdout(tmp_path):
    done = subprocess.run([str(REVERIE), "mcp", str(tmp_path / "nope")], capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith("reverie: error: no workspace at") and done.stderr.count("\n") == 1


def test_stdin_closing_ends_the_server(tmp_path):
    ws = _demo(tmp_path)
    done = subprocess.run([str(REVERIE), "mcp", str(ws)], input="", capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout == ""
