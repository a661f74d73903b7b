"""Chat turns never become memory by accident: a flush keeps only what the conversation stated.

Never the person's question, never a failed reply, never an answer that quotes memory back; those
replies are logged out of search's reach; a session ended by a quitting app writes no flush.
"""
from __future__ import annotations

import datetime as dt

from core.harness import messages as m
from core.harness.flush import MemoryFlushManager, is_question, restates
from core.harness.grounding import content_words
from core.harness.offload import SessionOffloader
from tests.support.fakes import ScriptedLLM

DAY = dt.date(2026, 11, 30)


def kinded(msg, kind):
    msg["kind"] = kind
    return msg


def flusher(workspace, reply):
    return MemoryFlushManager(workspace, ScriptedLLM(lambda messages: reply), today=lambda: DAY)


def test_questions_and_answers_from_memory_never_reach_the_model(workspace):
    flush = flusher(workspace, "- What does Maya drink")
    span = [m.user("What does Maya drink?"),
            kinded(m.assistant("From memory: Drinks tea, not coffee (MEMORY.md:14)"), "recalled"),
            m.user("And who is her manager?"),
            kinded(m.assistant("I could not produce an answer."), "failed")]
    result = flush.flush(span, session_id="s1")
    assert result.outcome == "empty" and "nothing was stated" in result.error
    assert flush.llm.calls == []
    assert not workspace.paths.daily_log(DAY).exists()


def test_a_bullet_that_is_the_question_or_restates_memory_is_dropped(workspace):
    reply = "- What does Maya drink\n- Maya drinks tea\n- The user asked about drinks?\n- Maya moved to Porto in May"
    flush = flusher(workspace, reply)
    flush.also_known = ["Maya drinks tea, not coffee; she joked that the espresso machine is a trap."]
    span = [m.user("What does Maya drink?"), m.assistant("Maya drinks tea."),
            m.user("She moved to Porto in May, by the way.")]
    result = flush.flush(span, session_id="s1")
    assert result.outcome == "written" and result.bullets == ["Maya moved to Porto in May"]
    text = workspace.paths.daily_log(DAY).read_text()
    assert "drink" not in text.lower() and "Porto" in text


def test_a_failed_reply_gives_no_ground(workspace):
    flush = flusher(workspace, "- a query")
    span = [m.user("Remember the Orion port."), kinded(m.assistant("a query"), "failed"),
            m.user("It is 5433.")]
    result = flush.flush(span, session_id="s1")
    assert result.outcome == "empty" and result.rejected == ["a query"]
    # the failed reply was not even shown
    assert "a query" not in flush.llm.calls[0][-1]["content"].split("Conversation:", 1)[1].split(">>>")[0]


def test_unstated_replies_are_logged_under_note_and_search_skips_them(workspace):
    offloader = SessionOffloader(workspace.paths, "s1")
    offloader.offload([m.user("What does Maya drink?"), kinded(m.assistant("zebraword quoted back"), "recalled"),
                       kinded(m.user("[harness] zebraword note"), "harness"), m.assistant("zebraword stated")])
    logged = workspace.read_session("s1").objects
    assert [x["content"] for x in logged] == ["What does Maya drink?", "", "", "zebraword stated"]
    assert logged[1]["note"] == "zebraword quoted back" and logged[2]["note"] == "[harness] zebraword note"
    workspace.sync_index()
    hits = workspace.search("zebraword", k=10, mode="keyword").hits
    assert [h.text for h in hits if h.match != "nearby"] == ["assistant: zebraword stated"]


def test_a_quitting_session_end_asks_no_model_and_writes_no_flush(workspace):
    from core.dream.state import load_state
    from core.harness.agent import HarnessAgent

    llm = ScriptedLLM(lambda messages: '{"tool": "answer", "input": "Noted: the Orion port is 5433."}')
    agent = HarnessAgent(workspace, llm, session_id="s1")
    agent.run_turn("The Orion port is 5433.")
    calls = len(llm.calls)
    end = agent.end_session(use_model=False)
    assert len(llm.calls) == calls and end.flush is None and end.summary
    assert [x["content"] for x in workspace.read_session("s1").objects][0] == "The Orion port is 5433."
    assert load_state(workspace.paths).sessions_since == 1
    assert not workspace.paths.daily_log(dt.date.today()).exists()


def test_is_question_and_restates():
    assert is_question("What does Maya drink?") and is_question("what does maya drink")
    assert is_question("她喝什么？") and not is_question("What she drinks is tea.")
    assert not is_question("We decided the port is 5433.")
    known = [content_words("Dev database runs on port 5433 (5432 is taken)")]
    assert restates("The dev database port is 5433", known)
    assert not restates("The dev database port is 5434", known)
