"""Tier 1 and tier 2 eviction, argument truncation, overflow recovery and the policy's decision tree."""
from __future__ import annotations

import json

import pytest

from core.config import CompactionSettings, EvictionSettings, OverflowSettings, Settings, TruncationSettings
from core.errors import ContextOverflowError, ServerUnavailableError
from core.harness import messages as m
from core.harness.compactor import ConversationCompactor
from core.harness.eviction import ToolResultEvictor, restore_payloads
from core.harness.offload import SessionOffloader
from core.harness.overflow import OverflowRecovery, is_overflow
from core.harness.policy import ContextPolicy
from core.harness.truncation import truncate_arguments
from core.tokens import count_tokens
from tests.support.fakes import ScriptedLLM

BIG = "".join(f"line {i:06d} of a very long build log\n" for i in range(4000))  # ~140 kB


def call_and_result(name, content, cid):
    call = m.tool_call(name, {"path": "build.log"}, call_id=cid)
    return [m.assistant("", [call]), m.tool_result(cid, content, name=name)]


def test_tier1_placeholder_points_to_a_file_with_the_full_text(workspace):
    evictor = ToolResultEvictor(workspace.paths, "s1")
    _, result = call_and_result("shell", BIG, "call_1")
    out = evictor.evict(result, "shell")
    assert out["evicted"] == "large_tool_results/s1/call_1.txt"
    assert (workspace.root / out["evicted"]).read_text() == BIG
    assert len(out["content"]) < 5000
    assert BIG[:2000] in out["content"] and BIG[-2000:] in out["content"]
    assert out["evicted"] in out["content"]
    assert evictor.evict(out, "shell") is out          # evicting twice changes nothing


def test_exempt_tools_and_small_results_are_never_evicted(workspace):
    evictor = ToolResultEvictor(workspace.paths, "s1")
    for name in EvictionSettings().exempt_tools:
        _, result = call_and_result(name, BIG, f"call_{name}")
        assert evictor.evict(result, name) is result
    _, small = call_and_result("shell", "ok", "call_small")
    assert evictor.evict(small, "shell") is small
    assert not (workspace.paths.large_results_dir / "s1").exists()


def test_unsafe_call_ids_still_get_a_file_inside_the_workspace(workspace):
    evictor = ToolResultEvictor(workspace.paths, "s1")
    out = evictor.evict(m.tool_result("../../etc/passwd", BIG, name="shell"), "shell")
    path = (workspace.root / out["evicted"]).resolve()
    assert workspace.paths.large_results_dir in path.parents and path.read_text() == BIG


def test_tier2_moves_oldest_bulky_payloads_until_under_the_line(workspace):
    evictor = ToolResultEvictor(workspace.paths, "s1")
    history = []
    for i in range(6):
        history += call_and_result("grep_files", "x" * 6000 + f" result {i}", f"call_{i}")
    history.append(m.user("next question"))
    before = m.total_tokens(history, count_tokens)
    out, moved = evictor.delayed(history, usable_tokens=int(before / 0.8 * 0.6), count=count_tokens)
    assert 0 < moved < 6
    assert m.total_tokens(out, count_tokens) <= int(before / 0.8 * 0.6) * 0.8
    refs = [x for x in out if x.get("kind") == "reference"]
    assert [r["tool_call_id"] for r in refs] == [f"call_{i}" for i in range(moved)]   # oldest first
    for ref in refs:
        assert (workspace.root / ref["evicted"]).read_text().startswith("x" * 6000)
        assert restore_payloads(workspace.paths, ref)["content"] == (workspace.root / ref["evicted"]).read_text()


def test_offload_writes_evicted_payloads_back_in_full(workspace):
    evictor = ToolResultEvictor(workspace.paths, "s1")
    pair = call_and_result("shell", BIG, "call_9")
    pair[1] = evictor.evict(pair[1], "shell")
    SessionOffloader(workspace.paths, "s1").offload(pair)
    logged = workspace.read_session("s1").objects
    assert logged[1]["content"] == BIG and logged[1]["evicted"] == "large_tool_results/s1/call_9.txt"


def test_argument_truncation_cuts_old_arguments_after_offloading_originals(workspace):
    settings = TruncationSettings(enabled=True, trigger_messages=10, keep_messages=4)
    history = []
    for i in range(8):
        call = m.tool_call("write_file", {"path": f"f{i}.txt", "content": "y" * 5000}, call_id=f"c{i}")
        history += [m.assistant("", [call]), m.tool_result(f"c{i}", "written", name="write_file")]
    offloader = SessionOffloader(workspace.paths, "s1")
    result = truncate_arguments(history, settings, count_tokens, offloader=offloader)
    assert result.truncated == 6
    for msg in result.messages[:12]:
        for c in msg.get("tool_calls") or []:
            assert c["function"]["arguments"].endswith(settings.marker)
            assert len(c["function"]["arguments"]) == settings.max_arg_chars + len(settings.marker)
    assert result.messages[12:] == history[12:]
    logged = workspace.read_session("s1").objects
    assert json.loads(logged[0]["tool_calls"][0]["function"]["arguments"])["content"] == "y" * 5000
    again = truncate_arguments(result.messages, settings, count_tokens, offloader=offloader)
    assert again.messages == result.messages and again.offloaded == 0
    assert not truncate_arguments(history, TruncationSettings(), count_tokens).truncated  # opt-in


@pytest.mark.parametrize("text", ["Error code 400: context_length_exceeded", "This model's maximum context length is",
                                  "prompt exceeds token limit", "Too many tokens in request"])
def test_overflow_texts_are_recognised(text):
    assert is_overflow(ServerUnavailableError(text))
    assert is_overflow(RuntimeError(text))
    assert not is_overflow(RuntimeError("connection refused"))
    assert not is_overflow(RuntimeError(text), OverflowSettings(patterns=("nothing",)))


def long_history(n=40):
    history = []
    for i in range(n // 2):
        history += [m.user(f"question {i}"), m.assistant(f"answer {i}")]
    return history


def test_overflow_recovery_compacts_with_trigger_1_and_retries_exactly_once(workspace):
    compactor = ConversationCompactor(workspace.paths, None, "s1",
                                      settings=CompactionSettings(flush_before=False, trigger_messages=1000))
    recovery = OverflowRecovery(compactor)
    calls = []

    def model(history):
        calls.append(len(history))
        if len(calls) == 1:
            raise ContextOverflowError("too long", prompt_tokens=9000, context_length=8192)
        return "ok"

    history = long_history()
    out = recovery.call(model, history)
    assert out.value == "ok" and out.recovered and calls == [40, 21]
    assert out.messages[0]["kind"] == "summary" and out.messages[1:] == history[-20:]

    calls.clear()

    def always(history):
        calls.append(1)
        raise ContextOverflowError("too long")

    with pytest.raises(ContextOverflowError, match="retried once"):
        recovery.call(always, history)
    assert len(calls) == 2                       # the first try and exactly one retry


def test_overflow_without_compaction_raises(workspace):
    def model(history):
        raise RuntimeError("maximum context length exceeded")

    with pytest.raises(ContextOverflowError, match="not configured"):
        OverflowRecovery(None).call(model, long_history())
    with pytest.raises(RuntimeError, match="boom"):
        OverflowRecovery(None).call(lambda h: (_ for _ in ()).throw(RuntimeError("boom")), long_history())


def test_policy_runs_the_tiers_in_order(workspace):
    settings = Settings()
    compactor = ConversationCompactor(workspace.paths, ScriptedLLM(lambda msgs: "[]"), "s1",
                                      settings=CompactionSettings(flush_before=False))
    evictor = ToolResultEvictor(workspace.paths, "s1", settings.eviction)
    policy = ContextPolicy(settings, evictor, compactor, count_tokens)

    small = long_history(10)
    assert policy.decide(small, 8000).tier == 0
    assert policy.apply(small, 8000).actions == []

    with_big = small + call_and_result("shell", BIG, "cbig")
    assert policy.decide(with_big, 100_000).tier == 1
    out = policy.apply(with_big, 100_000)
    assert out.actions == ["tier 1: evicted 1 tool result(s)"] and out.messages[-1]["evicted"]

    bulky = small + call_and_result("grep_files", " ".join(f"z{i}" for i in range(5000)), "c2") + [
        m.assistant("seen it"), m.user("go on")]
    tokens = m.total_tokens(bulky, count_tokens)
    assert policy.decide(bulky, int(tokens / 0.9)).tier == 2
    out = policy.apply(bulky, int(tokens / 0.9))
    assert out.actions[0].startswith("tier 2") and not out.restart_needed

    many = long_history(60)
    assert policy.decide(many, 100_000).tier == 3
    out = policy.apply(many, 100_000)
    assert out.actions == ["tier 3: compacted 40 message(s)"] and len(out.messages) == 21

    huge_tail = [m.user("w " * 6000)]
    out = policy.apply(huge_tail, 1000)
    assert out.restart_needed and out.actions[-1].startswith("tier 4")


def test_tier1_evicts_by_tokens_not_characters(workspace):
    words = " ".join(f"w{i}" for i in range(4000))             # 11,000 tokens in 23,000 characters
    few = "x" * 60_000                                           # 60,000 characters, few tokens
    assert count_tokens(words) > 8_000 > count_tokens(few) and len(words) < 80_000
    evictor = ToolResultEvictor(workspace.paths, "s1")
    assert evictor.evict(m.tool_result("c1", words, name="shell"), "shell").get("evicted")
    assert evictor.evict(m.tool_result("c2", few, name="shell"), "shell").get("evicted") is None
    # The count is the model's when one is given (here a tokenizer twice as coarse), and configurable.
    coarse = ToolResultEvictor(workspace.paths, "s1", count=lambda text: count_tokens(text) // 2)
    assert coarse.evict(m.tool_result("c3", words, name="shell"), "shell").get("evicted") is None
    strict = ToolResultEvictor(workspace.paths, "s1", EvictionSettings(threshold_tokens=100))
    assert strict.evict(m.tool_result("c4", " ".join(["word"] * 200), name="shell"), "shell").get("evicted")
    # An extra character cap still works when set.
    capped = ToolResultEvictor(workspace.paths, "s1", EvictionSettings(threshold_chars=50_000))
    assert capped.evict(m.tool_result("c5", few, name="shell"), "shell").get("evicted")
