"""ConversationCompactor with a scripted model: cutoff, offload exactly once, summary validation."""
from __future__ import annotations

import json


from core.bench.retention import build_conversation
from core.config import CompactionSettings
from core.harness import messages as m
from core.harness.compactor import ConversationCompactor, find_cutoff
from core.harness.messages import orphan_results
from core.tokens import count_tokens
from tests.support.fakes import ScriptedLLM

GOOD = json.dumps({"intent": "check logs", "achieved": ["read the Orion logs"], "pending": ["Basalt logs"],
                   "decisions": ["check Orion service logs first"], "artifacts": [{"path": "logs/orion-0.log", "note": "read"},
                                                            {"path": "/etc/made-up.txt", "note": "invented"}],
                   "failed_attempts": [], "next_steps": ["read Basalt"]})


def convo(n=120, facts=10):
    messages, _ = build_conversation(n, facts, big_results=0, seed=3)
    return messages


def test_cutoff_never_separates_tool_calls_from_results():
    messages = convo(60, 5)
    for keep in range(0, 40):
        cut = find_cutoff(messages, 0, keep_messages=keep)
        if cut is None:
            continue
        assert cut == len(messages) or messages[cut]["role"] != "tool"
        assert not orphan_results(messages[cut:])
        assert len(messages) - cut >= keep  # the tail keeps at least what was asked


def test_cutoff_by_token_budget_scans_from_the_end():
    messages = convo(60, 5)
    cut = find_cutoff(messages, 0, keep_messages=20, keep_tokens=500, count=count_tokens)
    tail = messages[cut:]
    assert m.total_tokens(tail, count_tokens) <= 500
    assert messages[cut]["role"] != "tool"
    assert m.total_tokens(messages[cut - 4:], count_tokens) > 500 or cut <= 4


def test_compaction_below_trigger_is_a_no_op(workspace):
    compactor = ConversationCompactor(workspace.paths, ScriptedLLM([]), "s1")
    messages = convo(20, 2)
    result = compactor.compact(messages)
    assert not result.compacted and result.messages == messages
    assert not workspace.paths.session_log("s1").exists()


def test_compaction_keeps_tail_offloads_prefix_and_validates_summary(workspace):
    llm = ScriptedLLM([GOOD])
    compactor = ConversationCompactor(workspace.paths, llm, "s1", settings=CompactionSettings(flush_before=False))
    messages = convo(60, 5)
    result = compactor.compact(messages)
    assert result.compacted
    tail = messages[result.cut:]
    assert result.messages[1:] == tail                    # the tail is intact
    assert result.messages[0]["kind"] == "summary"
    assert not orphan_results(result.messages)
    logged = workspace.read_session("s1").objects
    assert [r["id"] for r in logged] == [x["id"] for x in messages[:result.cut]]
    text = result.messages[0]["content"]
    assert "Session intent: Please check the service logs for Orion" in text   # the first request, not the model's
    assert "read the Orion logs" in text and "check Orion service logs first" in text
    assert "logs/orion-0.log" in text
    assert "/etc/made-up.txt" not in text                # an artifact the conversation never named is dropped
    assert "sessions/s1.log.jsonl" in text


def test_garbage_from_the_model_still_gives_a_deterministic_summary(workspace):
    llm = ScriptedLLM(['["a list, not the object"]'])
    compactor = ConversationCompactor(workspace.paths, llm, "s1", settings=CompactionSettings(flush_before=False))
    messages = convo(60, 5)
    messages[6] = m.tool_result(messages[6]["tool_call_id"], "Error: permission denied on /var/log", name="shell")
    result = compactor.compact(messages)
    assert result.compacted and result.summary_error
    data = result.summary
    assert data.intent.startswith("Please check the service logs")
    assert any(a["path"].startswith("logs/") for a in data.artifacts)
    assert any("permission denied" in f["reason"] for f in data.failed_attempts)


def test_repeated_compactions_offload_every_message_exactly_once(workspace):
    llm = ScriptedLLM(lambda msgs: GOOD)
    settings = CompactionSettings(flush_before=False, trigger_messages=30, keep_messages=10)
    compactor = ConversationCompactor(workspace.paths, llm, "s1", settings=settings)
    messages = convo(320, 30)
    history = []
    for msg in messages:
        history.append(msg)
        if not msg.get("tool_calls"):
            history = compactor.compact(history).messages
            assert not orphan_results(history)
    # a retry of the same compaction (e.g. after a crash) writes nothing new
    again = ConversationCompactor(workspace.paths, llm, "s1", settings=settings)
    again.compact(history, trigger_messages=1)
    again.offloader.offload(history)
    logged = [r["id"] for r in workspace.read_session("s1").objects]
    assert sorted(logged) == sorted(x["id"] for x in messages)
    assert len(logged) == len(set(logged)) == len(messages)
    assert logged == [x["id"] for x in messages]           # and in order
    # the summary carries the original intent through every round
    assert history[0]["summary_data"]["intent"].startswith("Please check the service logs for Orion (step 0)")


def test_summary_prompt_fits_the_model_window(workspace):
    llm = ScriptedLLM(lambda msgs: GOOD, context_length=2048)
    compactor = ConversationCompactor(workspace.paths, llm, "s1", settings=CompactionSettings(
        flush_before=False, summary_max_tokens=300))
    messages, _ = build_conversation(80, 5, big_results=2, big_chars=100_000, seed=1)
    result = compactor.compact(messages)
    assert result.compacted and not result.summary_error
    prompt = llm.calls[-1]
    assert sum(count_tokens(x["content"]) for x in prompt) + 300 <= 2048
