"""Nothing on the wire stops the MCP server: random and adversarial lines through the real `reverie mcp`.

One server process per test; Hypothesis writes batches of lines (random text, random JSON, JSON-RPC
shapes with hostile ids, methods and params, deep nesting, huge numbers, oversize lines) to its stdin,
and after every batch a `ping` must be answered: the server is alive and still reads in order. Every
line on its stdout must be a JSON-RPC message (nothing else may reach the protocol stream).
"""
from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.mcp.wire import MAX_LINE_BYTES
from tests.support.mcp_client import REVERIE
from tests.support.processes import ROOT, python_env

REPLY_WAIT_S = 60.0
METHODS = ["ping", "initialize", "tools/list", "tools/call", "resources/list", "resources/read", "prompts/list",
           "notifications/initialized", "notifications/cancelled", "completion/complete", "logging/setLevel",
           "no/such/method", ""]
TOOLS = ["memory_search", "memory_get", "memory_recent", "memory_append", "checkpoint_load", "handoff_read",
         "no_such_tool"]


class Server:
    """`reverie mcp` on a workspace, initialized; lines in, parsed replies out (a reader thread)."""

    def __init__(self, ws):
        self.proc = subprocess.Popen([str(REVERIE), "mcp", str(ws)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, cwd=ROOT, env=python_env())
        self.replies: queue.Queue = queue.Queue()
        self.garbage: list[bytes] = []
        self.sent = 0
        threading.Thread(target=self._read, daemon=True).start()
        self.send(json.dumps({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "fuzz", "version": "1"}}}))
        assert self.wait_for("init")
        self.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))

    def _read(self) -> None:
        for raw in self.proc.stdout:
            try:
                self.replies.put(json.loads(raw))
            except ValueError:
                self.garbage.append(raw[:200])

    def send(self, line: str | bytes) -> None:
        data = line if isinstance(line, bytes) else line.encode("utf-8", errors="surrogatepass")
        self.proc.stdin.write(data.replace(b"\n", b" ") + b"\n")
        self.proc.stdin.flush()
        self.sent += 1

    def wait_for(self, request_id, timeout: float = REPLY_WAIT_S) -> dict | None:
        """The reply with this id (replies to earlier lines are passed over), None when none came in time."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                reply = self.replies.get(timeout=0.5)
            except queue.Empty:
                if self.proc.poll() is not None:
                    return None
                continue
            if isinstance(reply, dict) and reply.get("id") == request_id:
                return reply
        return None

    def probe(self, number: int) -> bool:
        self.send(json.dumps({"jsonrpc": "2.0", "id": f"probe-{number}", "method": "ping"}))
        reply = self.wait_for(f"probe-{number}")
        return reply is not None and reply.get("result") == {}

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=20)
ids = st.one_of(st.integers(), st.text(max_size=300), st.none(), st.booleans(), st.floats(allow_nan=False),
                st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
                st.integers(min_value=2 ** 53, max_value=10 ** 40))
tool_calls = st.fixed_dictionaries({"name": st.sampled_from(TOOLS), "arguments": st.dictionaries(
    st.sampled_from(["query", "path", "text", "start", "end", "k", "days", "mode", "kinds", "since"]),
    json_values, max_size=4)})
messages = st.fixed_dictionaries(
    {"jsonrpc": st.sampled_from(["2.0", "2.0", "2.0", "1.0", 2.0, None])},
    optional={"id": ids, "method": st.sampled_from(METHODS) | st.text(max_size=20),
              "params": st.one_of(json_values, tool_calls, st.fixed_dictionaries({"uri": st.text(max_size=60)})),
              "result": json_values, "error": json_values})


def _deep(depth: int, opener: str = "[", closer: str = "]") -> str:
    return opener * depth + closer * depth


adversarial = st.one_of(
    st.integers(min_value=50, max_value=3000).map(_deep),
    st.integers(min_value=50, max_value=3000).map(lambda n: '{"a":' * n + "1" + "}" * n),
    st.integers(min_value=4301, max_value=6000).map(lambda n: '{"jsonrpc":"2.0","id":' + "9" * n + ',"method":"ping"}'),
    st.integers(min_value=4301, max_value=6000).map(lambda n: "[" + "1" * n + "]"),
    st.integers(min_value=1, max_value=5000).map(lambda n: '{"jsonrpc":"2.0","id":"' + "x" * n + '","method":"ping"}'),
    st.sampled_from(["{", "}", "[", '"', "\\", "{}", "[]", "null", '{"jsonrpc":"2.0"}', "\ufeff{}", "1e999999",
                     '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory_get","arguments":'
                     '{"path":"../../etc/passwd"}}}', "\x00\x01\x02", "NaN", "-Infinity"]),
)
lines = st.one_of(st.text(max_size=200), json_values.map(json.dumps), messages.map(json.dumps), adversarial)


def test_thousands_of_random_and_hostile_lines_never_stop_the_server(workspace):
    server = Server(workspace.root)
    rounds = [0]

    @settings(max_examples=250, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(batch=st.lists(lines, min_size=1, max_size=8))
    def one_batch(batch):
        for line in batch:
            server.send(line)
        rounds[0] += 1
        assert server.probe(rounds[0]), f"no answer after {batch!r}"

    try:
        one_batch()
        assert server.sent >= 1000, server.sent
        assert server.garbage == []                   # the protocol stream carried nothing but messages
        assert server.proc.poll() is None
    finally:
        server.close()


def test_the_red_team_lines_get_their_error_with_the_reason(workspace):
    """1,000-deep nesting killed the server (RecursionError); a 4,301-digit id gave AttributeError."""
    server = Server(workspace.root)
    try:
        cases = [(_deep(1000), "nest more than"), ('{"jsonrpc":"2.0","id":' + "7" * 4301 + ',"method":"ping"}', "digit"),
                 ('{"jsonrpc":"2.0","id":' + str(2 ** 60) + ',"method":"ping"}', '"id" member'),
                 ('{"jsonrpc":"2.0","id":"' + "i" * 300 + '","method":"ping"}', '"id" member')]
        for number, (line, why) in enumerate(cases):
            server.send(line)
            reply = server.wait_for(None, timeout=REPLY_WAIT_S)
            assert reply is not None and reply["error"]["code"] in (-32600, -32700), line[:60]
            assert why in reply["error"]["message"], reply
            assert server.probe(number)
    finally:
        server.close()


def test_a_request_over_the_size_limit_is_refused_at_once_without_reading_it_whole(workspace):
    """A 100 MB search got no reply in 120 s (1.7 GB); now it is refused as it streams by."""
    server = Server(workspace.root)
    try:
        query = "x" * (MAX_LINE_BYTES + 1024)
        started = time.monotonic()
        server.send(json.dumps({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                                "params": {"name": "memory_search", "arguments": {"query": query}}}))
        reply = server.wait_for(None)
        assert reply is not None and reply["error"]["code"] == -32600
        assert f"at most {MAX_LINE_BYTES:,}" in reply["error"]["message"]
        assert time.monotonic() - started < 10      # refused as it streams by, not after reading it whole
        assert server.probe(1)
    finally:
        server.close()


HOSTILE_JSON_LINES = ['{"role": "user", "content": "a number", "n": ' + "9" * 5000 + "}",
                      "[" * 1000 + "]" * 1000, '{"a":' * 1000 + "1" + "}" * 1000,
                      json.dumps({"role": "user", "content": "the deploy runs on Fridays at noon"})]


def _hostile_session(workspace) -> None:
    workspace.paths.session_log("hostile").write_text("\n".join(HOSTILE_JSON_LINES) + "\n", encoding="utf-8")


def test_a_session_log_with_a_huge_number_or_deep_nesting_is_read_line_by_line(workspace):
    """A 5,000-digit integer in a session log broke `index`, `search` and `dream` with a traceback."""
    from core.dream.pipeline.session_facts import read_session_logs
    from core.index.search import SearchIndex
    from core.store.sessions import read_jsonl

    _hostile_session(workspace)
    read = read_jsonl(workspace.paths.session_log("hostile"), workspace.root)
    assert [obj["content"] for obj in read.objects] == ["the deploy runs on Fridays at noon"]
    assert [p.line for p in read.problems] == [1, 2, 3]
    assert "digit" in read.problems[0].message and "nested" in read.problems[1].message
    index = SearchIndex(workspace.root, workspace.paths.index_db, embedder=False, background=False)
    try:
        report = index.syncer.sync()
        assert any("hostile.log.jsonl:1" in problem for problem in report.problems)
        hits = index.search("Fridays", mode="keyword").hits
        assert hits and hits[0].path == "sessions/hostile.log.jsonl" and hits[0].line == 4
    finally:
        index.close()
    facts = read_session_logs(workspace.paths, 0.0, {})
    assert any("Fridays" in str(statement) for statement in facts.statements)


@pytest.mark.slow
def test_index_search_and_dream_commands_read_past_hostile_json(workspace):
    """The same log through the real commands (the dream loads the embedding model: slow)."""
    _hostile_session(workspace)
    for command in (["index", str(workspace.root), "--no-embed"],
                    ["search", str(workspace.root), "Fridays", "--mode", "keyword"],
                    ["dream", str(workspace.root), "--dry-run", "--no-model"]):
        done = subprocess.run([sys.executable, "-m", "core", *command], capture_output=True, text=True, cwd=ROOT,
                              env=python_env(), timeout=600)
        assert done.returncode == 0 and "Traceback" not in done.stderr, (command, done.stderr)
