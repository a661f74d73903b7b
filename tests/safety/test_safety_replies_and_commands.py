"""Only whole model replies are kept, and the smaller findings of the red team's round, each on the real thing.

A model server on loopback that answers exactly as told: a reply that stops at its token limit
(finish_reason "length"), a JSON body shorter than its Content-Length, a chunked SSE stream cut in the
middle of a chunk. Then: a second `reverie serve`, a usage error, MCP resource errors, a conversation
file rewritten in place as it grows, an empty assistant message, and `reverie connect` run twice.
"""
from __future__ import annotations

import datetime as dt
import http.server
import json
import signal
import subprocess
import sys
import threading
import time

import anyio
import pytest

from core.config import ModelSettings
from core.errors import TruncatedReplyError
from core.harness.flush import MemoryFlushManager as Flusher
from core.importers import import_chat_log
from core.importers.common import ParsedSession, store_session
from core.llm import open_client
from core.workspace import Workspace
from tests.support.mcp_client import mcp_client
from tests.support.processes import ROOT, python_env

CONVERSATION = [{"role": "user", "content": "Remember: the staging cluster runs in Frankfurt."},
                {"role": "assistant", "content": "Noted: the staging cluster is in Frankfurt."}]


def _chunk(content: str = "", finish: str | None = None) -> bytes:
    event = {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": content},
                                                             "finish_reason": finish}]}
    return b"data: " + json.dumps(event).encode() + b"\n\n"


class _Server(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    script = "length"

    def log_message(self, *args):
        pass

    def do_GET(self):
        self._send_json(json.dumps({"data": [{"id": "scripted"}]}).encode())

    def _send_json(self, body: bytes, announced: int | None = None) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(announced or len(body)))
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.close_connection = True
        if self.script == "length":
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(_chunk("- The staging cluster runs in Frankf") + _chunk("", "length") + b"data: [DONE]\n\n")
        elif self.script == "length-after-a-bullet":
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(_chunk("- The staging cluster runs in Frankfurt.\n") + _chunk("- The staging cluster ha")
                             + _chunk("", "length") + b"data: [DONE]\n\n")
        elif self.script == "short-body":
            body = json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": "- The staging"},
                                            "finish_reason": "stop"}]}).encode()
            self._send_json(body[: len(body) // 2], announced=len(body))       # then the connection closes
        elif self.script == "chunk-cut":
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            piece = _chunk("- The staging cluster")
            self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
            self.wfile.write(b"400\r\n" + _chunk(" runs in")[:20])              # a chunk that never ends
        self.wfile.flush()


@pytest.fixture
def server():
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Server)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()
    httpd.server_close()


def _client(base: str):
    return open_client(ModelSettings(backend="openai", base_url=base, context_length=4096, request_timeout_s=20))


@pytest.mark.parametrize("script", ["length", "short-body", "chunk-cut"])
def test_a_cut_reply_writes_nothing_and_records_the_flush_failed_with_the_reason(workspace, server, script,
                                                                                 monkeypatch):
    monkeypatch.setattr(_Server, "script", script)
    result = Flusher(workspace, _client(server)).flush(CONVERSATION, session_id="s1")
    assert result.outcome == "failed", result
    assert ("token(s)" in result.error and "length" in result.error) if script == "length" else "broke off" in result.error
    assert not workspace.paths.daily_log(dt.date.today()).exists()          # "...in Frankf" stored nowhere
    assert workspace.flush_records().objects[-1]["outcome"] == "failed"


def test_a_reply_cut_at_its_limit_keeps_the_bullets_before_the_cut_and_never_the_cut_line(workspace, server,
                                                                                          monkeypatch):
    monkeypatch.setattr(_Server, "script", "length-after-a-bullet")
    result = Flusher(workspace, _client(server)).flush(CONVERSATION, session_id="s1")
    assert result.outcome == "written", result
    assert result.bullets == ["The staging cluster runs in Frankfurt."]
    assert "1 whole line(s) before the cut" in result.error          # the cut is said, not hidden
    log = workspace.paths.daily_log(dt.date.today()).read_text(encoding="utf-8")
    assert "runs in Frankfurt." in log and "cluster ha" not in log


@pytest.mark.parametrize("script", ["short-body", "chunk-cut"])
def test_a_transport_failure_is_one_line_not_a_traceback(server, script, monkeypatch):
    monkeypatch.setattr(_Server, "script", script)
    with pytest.raises(TruncatedReplyError):
        _client(server).complete([{"role": "user", "content": "hi"}], max_tokens=20)
    done = subprocess.run([sys.executable, "-m", "core", "models", "chat", "hi", "--backend", "openai",
                           "--base-url", server, "--server-model", "scripted"], capture_output=True, text=True,
                          cwd=ROOT, env=python_env(), timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr and "IncompleteRead(" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_a_second_serve_exits_2_naming_the_first_ones_pid(tmp_path):
    Workspace.create(tmp_path / "ws").close()
    command = [sys.executable, "-m", "core", "serve", str(tmp_path / "ws"), "--interval", "0.5", "--no-model"]
    out = tmp_path / "first.out"
    with open(out, "w", encoding="utf-8") as handle:
        first = subprocess.Popen(command, cwd=ROOT, env=python_env(), stdout=handle, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while "scheduling" not in out.read_text(encoding="utf-8"):
            assert time.monotonic() < deadline and first.poll() is None, out.read_text(encoding="utf-8")
            time.sleep(0.2)
        second = subprocess.run(command, cwd=ROOT, env=python_env(), capture_output=True, text=True, timeout=120)
        assert second.returncode == 2, second.stdout + second.stderr
        assert f"pid {first.pid}" in second.stderr and len(second.stderr.strip().splitlines()) == 1
    finally:
        first.send_signal(signal.SIGTERM)
        first.wait(timeout=120)


def test_a_usage_error_is_one_line(workspace):
    done = subprocess.run([sys.executable, "-m", "core", "search", str(workspace.root), "-tea"], capture_output=True,
                          text=True, cwd=ROOT, env=python_env(), timeout=120)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "'-tea'" in done.stderr and "-- -tea" in done.stderr


def test_resource_errors_say_why(workspace, tmp_path):
    outside = tmp_path / "elsewhere.md"
    outside.write_text("# outside\n", encoding="utf-8")
    (workspace.root / "MEMORY.md").unlink()
    (workspace.root / "MEMORY.md").symlink_to(outside)
    workspace.paths.daily_log(dt.date.today()).mkdir()          # a folder where today's log would be

    async def session():
        errors = []
        async with mcp_client(workspace.root, tmp_path / "stderr.log") as client:
            for uri in ("memory://MEMORY.md", "memory://daily/today"):
                try:
                    await client.read_resource(uri)
                    errors.append("")
                except Exception as exc:   # noqa: BLE001 - the error reply is what is checked
                    errors.append(str(exc))
        return errors

    memory_error, today_error = anyio.run(session)
    assert "memory://MEMORY.md" in memory_error and "outside the workspace" in memory_error, memory_error
    assert "memory://daily/today" in today_error and "directory" in today_error.lower(), today_error


def test_a_conversation_rewritten_in_place_as_it_grows_stays_one_session(workspace, tmp_path):
    source = tmp_path / "chats.jsonl"
    messages = [{"role": "system", "content": "You are a planning assistant."}]
    for turn in range(10):
        messages += [{"role": "user", "content": f"step {turn}: what comes next for the move?"},
                     {"role": "assistant", "content": f"after step {turn}, book the van for day {turn + 1}"}]
        source.write_text(json.dumps({"messages": messages}) + "\n", encoding="utf-8")     # the whole file, again
        import_chat_log(workspace, source)
    logs = sorted(workspace.paths.sessions_dir.glob("*.log.jsonl"))
    assert len(logs) == 1, logs                     # was 10 sessions
    stored = [json.loads(line) for line in logs[0].read_text(encoding="utf-8").splitlines()]
    assert len(stored) == 21                        # the 21 messages once each (was 110 for 20)


def test_an_assistant_message_that_says_nothing_is_never_stored(workspace):
    parsed = ParsedSession(session_id="cc-empty", source="transcript.jsonl", messages=[
        {"role": "user", "content": "hello there", "id": "cc-u1"},
        {"role": "assistant", "content": "", "id": "cc-a1~1"},
        {"role": "assistant", "content": "  ", "id": "cc-a2~1"},
        {"role": "assistant", "content": "", "id": "cc-a3~1",
         "tool_calls": [{"id": "t1", "type": "function", "function": {"name": "Read", "arguments": "{}"}}]}])
    result = store_session(workspace, parsed)
    stored = [json.loads(line) for line in workspace.paths.session_log("cc-empty").read_text().splitlines()]
    assert [m["id"] for m in stored] == ["cc-u1", "cc-a3~1"] and result.written == 2


def test_connect_twice_in_one_second_keeps_every_backup_and_none_where_it_refused(tmp_path):
    from core.connect import Target, apply, plan

    config = tmp_path / "home" / ".claude.json"
    config.parent.mkdir()
    config.write_text('{"theme": "dark"}\n', encoding="utf-8")
    target = Target("claude-code", "user", config, "json")
    moment = dt.datetime(2026, 12, 7, 1, 2, 3, tzinfo=dt.timezone.utc)      # both runs within one second
    first = apply(plan(target, "reverie", {"command": "reverie", "args": ["mcp", "/ws/one"]}), now=moment)
    second = apply(plan(target, "reverie", {"command": "reverie", "args": ["mcp", "/ws/two"]}), now=moment)
    assert first != second and first.exists() and second.exists()
    assert first.read_text(encoding="utf-8") == '{"theme": "dark"}\n'          # the original's bytes kept
    assert "/ws/one" in second.read_text(encoding="utf-8")
    # a folder that is a link: the write is refused, and no backup is left there either
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "mcp.json").write_text('{"mcpServers": {}}\n', encoding="utf-8")
    project = tmp_path / "project"
    project.mkdir()
    (project / ".cursor").symlink_to(elsewhere, target_is_directory=True)
    ws = Workspace.create(tmp_path / "ws").root
    done = subprocess.run([sys.executable, "-m", "core", "connect", "cursor", str(ws), "--project", str(project),
                           "--scope", "project"], cwd=ROOT, env=python_env(HOME=str(tmp_path / "home")),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "symbolic link" in done.stderr, done.stderr
    assert sorted(p.name for p in elsewhere.iterdir()) == ["mcp.json"]
