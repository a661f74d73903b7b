"""`reverie agent` and `reverie dream` take the model-choice flags (--backend, --base-url, ...).

A closed port shows that the flags reach the client (its error names the URL); a real
llama_cpp.server with the bundled SmolLM2 (tests/llm/server_launcher.py) shows that the agent
really talks to an OpenAI-compatible server when told to.
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from core.cli import main

CLOSED = "http://127.0.0.1:9/v1"       # the discard port: nothing listens there


def run_cli(args, stdin=""):
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-m", "core", *args], input=stdin, capture_output=True, text=True,
                          timeout=600, env=env)


def test_agent_takes_the_backend_flags(workspace):
    proc = run_cli(["agent", str(workspace.root), "--backend", "openai", "--base-url", CLOSED,
                    "--server-model", "served-model", "--session", "b1", "--max-steps", "1"], "hi\n/quit\n")
    assert proc.returncode == 0, proc.stderr
    assert "model served-model" in proc.stdout                  # the banner names the server's model
    assert f"no model server answers at {CLOSED}" in proc.stdout  # the agent asked that server
    assert workspace.session_cache.read().objects[-1]["session_id"] == "b1"


def test_compact_and_flush_take_the_backend_flags(workspace, tmp_path, capsys):
    from core.harness import messages as m

    source = tmp_path / "ctx.jsonl"
    source.write_text(m.to_jsonl([m.user("The deploy region is eu-west-3."), m.assistant("Noted.")]))
    assert main(["compact", str(workspace.root), str(source), "--force", "--backend", "openai",
                 "--base-url", CLOSED, "--server-model", "x"]) == 0
    err = capsys.readouterr().err
    assert "summary without the model" in err and CLOSED in err   # flush + summary went to that server
    assert main(["flush", str(workspace.root), "--session", "ctx", "--backend", "openai", "--base-url", CLOSED,
                 "--server-model", "x"]) == 1
    assert CLOSED in capsys.readouterr().out


def test_the_model_flags_are_model_settings_for_agent_and_dream():
    import argparse

    from core.cli import agent_cmd, dream_cmd
    from core.config import ModelSettings
    from core.llm.cli_args import model_settings

    for register, name in ((agent_cmd.register, "agent"), (dream_cmd.register, "dream"),
                           (dream_cmd.register, "maintain")):
        parser = argparse.ArgumentParser()
        register(parser.add_subparsers())
        args = parser.parse_args([name, "ws", "--backend", "openai", "--base-url", "http://h:1/v1",
                                  "--server-model", "qwen", "--api-key", "k", "--context", "4096"])
        chosen = model_settings(args, ModelSettings(model="smollm2-135m-instruct-q4_1"))
        assert (chosen.backend, chosen.base_url, chosen.server_model, chosen.api_key, chosen.context_length) == \
            ("openai", "http://h:1/v1", "qwen", "k", 4096), name
        assert chosen.model == "smollm2-135m-instruct-q4_1"     # not given: the workspace's setting stays


@pytest.mark.slow
def test_dream_takes_the_backend_flags(workspace):
    (workspace.root / "memory" / "2026-12-01.md").write_text(
        "# 2026-12-01\n\n- The staging port for project Orion is 5433.\n", encoding="utf-8")
    proc = run_cli(["dream", str(workspace.root), "--dry-run", "--backend", "openai", "--base-url", CLOSED,
                    "--server-model", "x"])
    assert proc.returncode == 0, proc.stderr
    assert f"no model server answers at {CLOSED}" in proc.stdout  # the dream asked that server...
    assert "dry-run" in proc.stdout                               # ...and still decided without it


@pytest.fixture
def server(tmp_path):
    import models
    from tests.support.llm_server import running_server

    log_path = tmp_path / "server.log"
    with running_server(models.resolve_model_path("smollm2-135m-instruct-q4_1"), log_path, n_ctx=4096) as base:
        yield base, log_path


@pytest.mark.slow
def test_agent_chats_through_a_real_openai_compatible_server(workspace, server):
    base, log_path = server
    proc = run_cli(["agent", str(workspace.root), "--backend", "openai", "--base-url", base,
                    "--server-model", "smollm2", "--context", "4096", "--session", "srv", "--max-steps", "2"],
                   "Hello, who are you?\n/quit\n")
    assert proc.returncode == 0, proc.stderr
    assert "model smollm2" in proc.stdout and "agent> " in proc.stdout
    assert "no model server answers" not in proc.stdout
    assert "/v1/chat/completions" in log_path.read_text(errors="replace")   # the server did the work
    assert workspace.session_cache.read().objects[-1]["session_id"] == "srv"
