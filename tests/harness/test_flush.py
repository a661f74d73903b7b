"""MemoryFlushManager: NO_REPLY writes nothing, a flush runs once, every outcome is recorded."""
from __future__ import annotations

import datetime as dt

from core.dream.state import load_state
from core.harness import messages as m
from core.harness.flush import MemoryFlushManager, parse_bullets, validate_bullets
from core.store.daily import FLUSH_HEADING
from core.tokens import count_tokens
from tests.support.fakes import ScriptedLLM

DAY = dt.date(2026, 11, 30)


def span():
    return [m.user("We decided the staging port for Orion is 5433 and Dana owns the rollout."),
            m.assistant("Noted: staging port 5433, Dana owns the rollout.")]


def manager(workspace, replies):
    return MemoryFlushManager(workspace, ScriptedLLM(replies), today=lambda: DAY)


def test_no_reply_writes_nothing_and_is_recorded(workspace):
    flusher = manager(workspace, ["NO_REPLY"])
    result = flusher.flush(span(), session_id="s1")
    assert result.outcome == "no_reply"
    assert not workspace.paths.daily_log(DAY).exists()
    assert [r["outcome"] for r in flusher.records()] == ["no_reply"]
    assert load_state(workspace.paths).new_material_at == ""


def test_written_flush_appends_a_block_and_tells_the_dream(workspace):
    flusher = manager(workspace, ["- The Orion staging port is 5433\n- Dana owns the Orion rollout"])
    result = flusher.flush(span(), session_id="s1")
    assert result.outcome == "written", result
    text = workspace.paths.daily_log(DAY).read_text()
    assert FLUSH_HEADING in text
    assert "- The Orion staging port is 5433" in text and "- Dana owns the Orion rollout" in text
    assert result.path == "memory/2026-11-30.md" and result.lines[0] > 0
    assert load_state(workspace.paths).new_material_at != ""
    record = flusher.records()[-1]
    assert record["outcome"] == "written" and record["bullets"] == 2 and record["span_hash"] == result.span_hash
    # the log was reindexed: memory_search finds the new bullet at once
    hits = workspace.search("Orion staging port", k=5, mode="fts").hits
    assert any(h.path == "memory/2026-11-30.md" and "5433" in h.text for h in hits)


def test_a_flush_redacts_secrets_before_the_log_is_written(workspace):
    conversation = [m.user("For the Orion debugging session the staging DB password is Heron-Glide-3307; "
                           "Dana owns the rollout."),
                    m.assistant("Noted: the staging DB password is Heron-Glide-3307 and Dana owns the rollout.")]
    flusher = manager(workspace, ["- The Orion staging DB password is Heron-Glide-3307\n- Dana owns the Orion rollout"])
    result = flusher.flush(conversation, session_id="s1")
    assert result.outcome == "written", result
    text = workspace.paths.daily_log(DAY).read_text()
    assert "Heron-Glide-3307" not in text
    assert "- The Orion staging DB password is [redacted password]" in text and "- Dana owns the Orion rollout" in text
    assert result.redacted == 1
    assert result.bullets[0] == "The Orion staging DB password is [redacted password]"
    assert flusher.records()[-1]["redacted"] == 1
    assert "Heron-Glide-3307" not in workspace.paths.flush_record.read_text()


def test_the_same_messages_flushed_twice_are_written_once(workspace):
    flusher = manager(workspace, ["- The Orion staging port is 5433", "- The Orion staging port is 5433"])
    messages = span()
    assert flusher.flush(messages).outcome == "written"
    assert flusher.flush(messages).outcome == "duplicate"
    # copies of the same content with fresh ids (an agent re-sending its context) match by hash too
    copies = [{k: v for k, v in x.items() if k != "id"} for x in messages]
    assert flusher.flush(copies).outcome == "duplicate"
    text = workspace.paths.daily_log(DAY).read_text()
    assert text.count("staging port is 5433") == 1
    assert [r["outcome"] for r in flusher.records()] == ["written", "duplicate", "duplicate"]
    assert len(flusher.llm.calls) == 1  # duplicates never reach the model


def test_bullets_already_known_or_ungrounded_are_dropped(workspace):
    workspace.append_daily("The Orion staging port is 5433", day=DAY)
    flusher = manager(workspace, ["Here are the facts:\n- The Orion staging port is 5433\n"
                                  "- The moon is made of cheese and quantum bananas\n- NO_REPLY"])
    result = flusher.flush(span())
    assert result.outcome == "empty"
    assert len(result.rejected) == 3
    assert workspace.paths.daily_log(DAY).read_text().count("5433") == 1


def test_a_failing_model_is_recorded_as_failed_and_can_be_retried(workspace):
    class Broken(ScriptedLLM):
        def complete(self, *a, **k):
            from core.errors import ModelWorkerCrashed
            raise ModelWorkerCrashed("worker died")

    flusher = MemoryFlushManager(workspace, Broken([]), today=lambda: DAY)
    assert flusher.flush(span()).outcome == "failed"
    assert flusher.records()[-1]["error"]
    retry = manager(workspace, ["- The Orion staging port is 5433"])
    assert retry.flush(span()).outcome == "written"   # a failed flush does not count as done


def test_parse_and_validate():
    assert parse_bullets("intro\n- a fact\n* another\n1. third\nprose") == ["a fact", "another", "third"]
    assert parse_bullets("- user: The port is 5433.\n- tool shell result: ok") == ["The port is 5433.", "ok"]
    # no markers at all: whole sentences, one per line, are read as facts (validation decides)
    assert parse_bullets("Sure:\nThe Orion port is 5433.\nok") == ["The Orion port is 5433."]
    ok, bad = validate_bullets(["Orion port is 5433", "orion PORT is 5433!"], known="", evidence="orion port 5433")
    assert ok == ["Orion port is 5433"] and len(bad) == 1


def test_a_long_span_is_flushed_in_chunks_and_every_message_is_seen(workspace):
    from core.config import Settings

    settings = Settings().replace("compaction", input_tokens=200)
    messages = [m.user(f"Note {i}: the widget-{i} weighs {100 + i} grams and ships from depot {i}.")
                for i in range(40)]
    llm = ScriptedLLM(lambda msgs: "NO_REPLY")
    flusher = MemoryFlushManager(workspace, llm, settings=settings, today=lambda: DAY)
    assert flusher.flush(messages).outcome == "no_reply"
    assert len(llm.calls) > 3
    shown = "\n".join(call[-1]["content"] for call in llm.calls)
    assert all(f"widget-{i} weighs" in shown for i in range(40))
    assert all(count_tokens(call[-1]["content"].split("Conversation:\n", 1)[1]) < 400 for call in llm.calls)


def test_a_fresh_memory_md_is_shown_to_the_model_as_empty(workspace):
    from core.harness.flush import known_facts

    # the skeleton (title, help line, empty headings) is what a small model copied back in loops
    assert known_facts(workspace.read_memory().text) == ""
    llm = ScriptedLLM(["NO_REPLY"])
    MemoryFlushManager(workspace, llm, today=lambda: DAY).flush(span(), session_id="s1")
    prompt = llm.calls[0][-1]["content"]
    assert "MEMORY.md (already known; read-only, do not repeat):\n(empty)" in prompt
    text = "# MEMORY\n\nhelp text\n\n## User profile\n\n## Projects\n- Orion ships in May <!-- id:m-1 -->\n"
    assert known_facts(text) == "## Projects\n- Orion ships in May <!-- id:m-1 -->"


def test_a_reply_that_falls_into_a_loop_is_stopped_and_its_bullets_kept(workspace):
    from core.harness.modelcall import ask, looping

    assert looping("# \n" * 40) and looping("- The same bullet again.\n" * 6)
    assert not looping("- The staging port for Orion is 5433.\n- Dana owns the rollout.\n- Basalt ships in May.\n")
    assert not looping("short")
    loop = "- The staging port for Orion is 5433.\n" + "- Dana owns the rollout.\n" * 200
    llm = ScriptedLLM([loop])
    reply = ask(llm, [m.user("hi")], max_tokens=2000)
    assert reply.ok and reply.text.startswith("- The staging port for Orion is 5433.")
    assert len(reply.text) < len(loop) // 10                    # stopped early, not at max_tokens
    flusher = manager(workspace, [loop])
    result = flusher.flush(span(), session_id="s1")
    assert result.outcome == "written"
    assert result.bullets == ["The staging port for Orion is 5433.", "Dana owns the rollout."]
