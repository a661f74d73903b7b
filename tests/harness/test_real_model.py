"""The harness with the real small model (SmolLM2-135M): the mechanics must hold whatever it writes.

Long conversations with tool calls and 100 kB results through the real compactor, overflow
recovery against the real engine's typed error, a real flush twice, and the agent loop on a
multi-step task. The model's text may be weak; offloading, tails, tool pairs, eviction files,
records and the task graph must be exact.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from core.bench.retention import build_conversation
from core.config import Settings
from core.dream.state import load_state
from core.errors import ContextOverflowError
from core.harness.agent import HarnessAgent
from core.harness.compactor import ConversationCompactor
from core.harness.eviction import ToolResultEvictor
from core.harness.flush import OUTCOMES, MemoryFlushManager
from core.harness.messages import as_plain_chat, orphan_results, tool_names, user
from core.harness.overflow import OverflowRecovery
from core.harness.session import end_session

MODEL = "smollm2-135m-instruct-q4_1"
pytestmark = pytest.mark.slow


def small_settings(**compaction):
    values = {"input_tokens": 400, "summary_max_tokens": 250, "flush_max_tokens": 120, **compaction}
    return Settings().replace("model", model=MODEL).replace("compaction", **values)


@pytest.fixture(scope="module")
def llm():
    from core.llm import open_client

    client = open_client(Settings().replace("model", model=MODEL).model)
    yield client
    client.close()


def test_tier1_eviction_counts_with_the_loaded_models_tokenizer(workspace, llm):
    from core.config import EvictionSettings
    from core.harness.modelcall import counter_for
    from core.tokens import count_tokens

    text = " ".join(f"Ωμέγα-{i} 東京 {i * 7919}" for i in range(400))
    model_count, tiktoken_count = llm.count_tokens(text), count_tokens(text)
    assert model_count != tiktoken_count
    limit = (model_count + tiktoken_count) // 2               # between the two counts
    evictor = ToolResultEvictor(workspace.paths, "tok", EvictionSettings(threshold_tokens=limit),
                                count=counter_for(llm))
    evicted = evictor.evict(user(text) | {"role": "tool", "tool_call_id": "c1", "name": "shell"}, "shell")
    assert bool(evicted.get("evicted")) == (model_count > limit)


def test_long_conversation_through_the_real_compactor(workspace, llm):
    settings = small_settings(flush_before=False, trigger_messages=90, keep_messages=20)
    messages, _facts = build_conversation(320, 40, big_results=3, big_chars=100_000, seed=11)
    assert sum(len(x.get("content") or "") >= 100_000 for x in messages) == 3
    compactor = ConversationCompactor(workspace.paths, llm, "long", settings=settings.compaction)
    evictor = ToolResultEvictor(workspace.paths, "long", settings.eviction)
    names = tool_names(messages)
    history, compactions, evicted = [], 0, []
    for msg in messages:
        if msg["role"] == "tool":
            msg = evictor.evict(msg, names[msg["tool_call_id"]])
            if msg.get("evicted"):
                evicted.append(msg)
        history.append(msg)
        if msg["role"] == "assistant" and msg.get("tool_calls"):
            continue
        result = compactor.compact(history)
        if result.compacted:
            compactions += 1
            assert result.messages[1:] == history[result.cut:]          # the tail is intact
            assert result.messages[0]["kind"] == "summary"
            assert result.messages[0]["summary_data"]["intent"].startswith("Please check the service logs for "
                                                                          "Orion (step 0)")
            history = result.messages
        assert not orphan_results(history)                               # never an orphan tool result
    assert compactions >= 4
    end_session(workspace, history, compactor)
    logged = workspace.read_session("long").objects
    assert [x["id"] for x in logged] == [x["id"] for x in messages]      # every message once, in order
    by_id = {x["id"]: x for x in messages}
    for record in logged:                                                # ...and whole: evicted text is back
        assert record.get("content") == by_id[record["id"]].get("content")
    assert len(evicted) == 3
    for placeholder in evicted:
        full = by_id[placeholder["id"]]["content"]
        assert (workspace.root / placeholder["evicted"]).read_text() == full
        assert placeholder["evicted"] in placeholder["content"] and len(placeholder["content"]) < 5_000
    assert workspace.session_cache.read().objects[-1]["session_id"] == "long"


def test_overflow_against_the_real_engine_compacts_and_retries_exactly_once(workspace, llm):
    settings = small_settings(flush_before=False, trigger_messages=10_000)
    compactor = ConversationCompactor(workspace.paths, llm, "ovf", settings=settings.compaction)
    recovery = OverflowRecovery(compactor, settings.overflow)
    history = []
    for i in range(120):
        history += [user(f"Item {i}: " + "the quarterly numbers look steady and the team is on track. " * 8),
                    {"role": "assistant", "content": f"Noted item {i}.", "id": f"a{i}"}]
    attempts = []

    def call(messages):
        attempts.append(len(messages))
        return llm.complete(as_plain_chat(messages), max_tokens=8)

    with pytest.raises(ContextOverflowError):
        llm.complete(as_plain_chat(history), max_tokens=8)                # the engine's own typed error
    out = recovery.call(call, history)
    assert out.recovered and len(attempts) == 2 and attempts[0] == len(history)
    assert out.messages[0]["kind"] == "summary" and out.messages[1:] == history[-20:]
    assert out.value.text is not None and recovery.recoveries == 1


def test_a_real_flush_is_recorded_and_runs_once(workspace, llm):
    settings = small_settings()
    messages, _ = build_conversation(24, 6, big_results=0, seed=5)
    flusher = MemoryFlushManager(workspace, llm, settings=settings)
    first = flusher.flush(messages, session_id="f1")
    assert first.outcome in OUTCOMES and first.outcome != "duplicate"
    daily = sorted(workspace.paths.memory_dir.glob("*.md"))
    before = daily[0].read_bytes() if daily else b""
    if first.outcome == "written":
        assert before.count(b"## Memory Flush") == 1
        assert all(b.encode() in before for b in first.bullets)
    else:
        assert not before                                                 # no_reply / empty write nothing
    second = flusher.flush(messages, session_id="f1")
    assert second.outcome == "duplicate"
    after = sorted(workspace.paths.memory_dir.glob("*.md"))
    assert (after[0].read_bytes() if after else b"") == before
    assert [r["outcome"] for r in flusher.records()] == [first.outcome, "duplicate"]


def test_the_agent_completes_a_multi_step_task_with_the_real_model(workspace, llm):
    (workspace.root / "notes.txt").write_text("The Orion staging port is 5433.\nDana owns the rollout.\n")
    settings = small_settings()
    events = []
    agent = HarnessAgent(workspace, llm, session_id="task", settings=settings, max_steps=3,
                         on_event=lambda kind, data: events.append(kind))
    steps = ["Read notes.txt with the read_file tool.", "Say which port Orion uses for staging."]
    turns = agent.run_task("Find the Orion staging port", steps)
    assert len(turns) == 2 and all(t.answer.strip() for t in turns) and all(t.steps <= 3 for t in turns)
    assert not orphan_results(agent.history)
    for msg in agent.history:
        for call in msg.get("tool_calls") or []:
            assert call["function"]["name"] in agent.tools.names
            json.loads(call["function"]["arguments"])
    latest = workspace.latest_checkpoint("task")
    assert [t["status"] for t in latest["tasks"]] == ["done", "done"]
    assert latest["completed_steps"] == steps
    progress = workspace.read("progress.md").text
    assert "Find the Orion staging port" in progress and "task complete" in progress
    end = agent.end_session()
    assert end.summary and workspace.session_cache.read().objects[-1]["session_id"] == "task"
    assert [x["id"] for x in workspace.read_session("task").objects] == [x["id"] for x in agent.history]
    assert load_state(workspace.paths).sessions_since == 1
    assert "answer" in events and "session_end" in events


def test_reverie_agent_chats_in_a_terminal(workspace):
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run([sys.executable, "-m", "core", "agent", str(workspace.root), "--model", MODEL,
                           "--session", "cli", "--max-steps", "2"],
                          input="Hello, who are you?\n/status\n/quit\n", capture_output=True, text=True,
                          timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "agent> " in proc.stdout and "messages" in proc.stdout
    assert "session cli saved" in proc.stdout
    assert workspace.session_cache.read().objects[-1]["session_id"] == "cli"
