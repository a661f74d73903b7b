"""A model reply counts only when it is whole; a cut one is an error and nothing of it is stored.

Two servers: a small HTTP server in this process that speaks SSE exactly as told (a stream that
stops without `[DONE]`, one with no finish reason, a whole one), and the real `llama_cpp.server`
with SmolLM2, SIGKILLed while it streams a reply.
"""
from __future__ import annotations

import datetime as dt
import http.server
import json
import os
import signal
import subprocess
import sys
import threading

import pytest

from core.config import ModelSettings
from core.errors import TruncatedReplyError
from core.harness.flush import MemoryFlushManager as Flusher
from core.llm import open_client
from tests.support.gguf import SMOL, model_path
from tests.support.llm_server import running_server
from tests.support.processes import ROOT, python_env

CONVERSATION = [{"role": "user", "content": "Remember: the staging database runs on port 5433."},
                {"role": "assistant", "content": "Noted: staging Postgres is on port 5433."}]


def _chunk(content: str = "", finish: str | None = None) -> bytes:
    event = {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": content},
                                                             "finish_reason": finish}]}
    return b"data: " + json.dumps(event).encode() + b"\n\n"


class _Scripted(http.server.BaseHTTPRequestHandler):
    script = "whole"

    def log_message(self, *args):
        pass

    def do_GET(self):
        body = json.dumps({"data": [{"id": "scripted"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        self.wfile.write(_chunk("- Console: You are Orchard's coding agent.") + _chunk(" Use the"))
        if self.script == "whole":
            self.wfile.write(_chunk("", "stop") + b"data: [DONE]\n\n")
        elif self.script == "no-finish":
            self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True           # "cut": the stream just ends here


@pytest.fixture
def scripted():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Scripted)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def _client(base: str):
    return open_client(ModelSettings(backend="openai", base_url=base, context_length=4096))


@pytest.mark.parametrize("script", ["cut", "no-finish"])
def test_a_stream_that_is_not_whole_is_an_error(scripted, script, monkeypatch):
    monkeypatch.setattr(_Scripted, "script", script)
    with pytest.raises(TruncatedReplyError):
        _client(scripted).complete([{"role": "user", "content": "hi"}], max_tokens=20)


def test_a_whole_stream_is_a_reply(scripted, monkeypatch):
    monkeypatch.setattr(_Scripted, "script", "whole")
    reply = _client(scripted).complete([{"role": "user", "content": "hi"}], max_tokens=20)
    assert reply.finish_reason == "stop" and reply.text.endswith("Use the")


def test_a_flush_of_a_cut_reply_writes_nothing_and_records_a_failure(workspace, scripted, monkeypatch):
    monkeypatch.setattr(_Scripted, "script", "cut")
    result = Flusher(workspace, _client(scripted)).flush(CONVERSATION, session_id="s1")
    assert result.outcome == "failed" and "cut off" in result.error
    assert not workspace.paths.daily_log(dt.date.today()).exists()
    assert workspace.flush_records().objects[-1]["outcome"] == "failed"


def test_the_chat_command_fails_on_a_cut_reply(scripted, monkeypatch):
    """`models chat` printed a cut story with "stop" and exit 0; now it is one error line and exit 2."""
    monkeypatch.setattr(_Scripted, "script", "cut")
    done = subprocess.run([sys.executable, "-m", "core", "models", "chat", "Tell me a story", "--backend", "openai",
                           "--base-url", scripted, "--server-model", "scripted"], capture_output=True, text=True,
                          cwd=ROOT, env=python_env(), timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "cut off" in done.stderr and len(done.stderr.strip().splitlines()) == 1


class _KillAfter:
    """The real client, with the server SIGKILLed once `tokens` tokens of a reply have streamed in."""

    def __init__(self, llm, proc, tokens: int):
        self.llm, self.proc, self.tokens, self.seen = llm, proc, tokens, 0
        self.model_id = llm.model_id

    @property
    def context_length(self) -> int:
        return self.llm.context_length

    def count_tokens(self, text: str) -> int:
        return self.llm.count_tokens(text)

    def complete(self, messages, *, on_token=None, **options):
        def watch(piece: str) -> None:
            self.seen += 1
            if on_token is not None:
                on_token(piece)
            if self.seen == self.tokens:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        return self.llm.complete(messages, on_token=watch, **options)

    def close(self) -> None:
        self.llm.close()


def test_a_real_server_killed_mid_stream_stores_nothing(workspace, tmp_path):
    procs: list = []
    with running_server(model_path(SMOL), tmp_path / "server.log", n_ctx=4096, procs=procs) as base:
        llm = _client(base)
        pieces: list[str] = []
        with pytest.raises(TruncatedReplyError):
            _KillAfter(llm, procs[0], tokens=3).complete([{"role": "user", "content": "Tell me a long story."}],
                                                         max_tokens=200, temperature=0.0, on_token=pieces.append)
        assert len(pieces) >= 3          # it really was streaming when it died
    with running_server(model_path(SMOL), tmp_path / "server2.log", n_ctx=4096, procs=procs) as base:
        killing = _KillAfter(_client(base), procs[1], tokens=2)
        result = Flusher(workspace, killing).flush(CONVERSATION * 3, session_id="s1")
        assert killing.seen >= 2 and result.outcome == "failed"
    assert not workspace.paths.daily_log(dt.date.today()).exists()     # 0 truncated replies stored
    assert [r["outcome"] for r in workspace.flush_records().objects] == ["failed"]


def test_the_local_worker_path_refuses_a_reply_without_a_finish_reason(monkeypatch):
    """The worker's reply event is checked like a server's: no finish reason, no reply."""
    from core.llm.client import LocalClient

    llm = LocalClient(ModelSettings(model=SMOL), check_fit=False)
    done = {"ev": "done", "text": "half a sent", "prompt_tokens": 5, "completion_tokens": 3}
    monkeypatch.setattr(llm, "_call", lambda request, on_token=None, cancel=None: dict(done))
    with pytest.raises(TruncatedReplyError):
        llm.complete([{"role": "user", "content": "hi"}], max_tokens=10)
    llm.close()
