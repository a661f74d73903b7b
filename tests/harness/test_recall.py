"""Recall before each model step, refusal of tool calls that copy the prompt, and the answer from memory.

A scripted model stands in for one that copies its tool description (the bundled 135M model did:
`memory_search {"query": "a query"}`); tests/harness/test_answers_real_model.py runs the real one.
"""
from __future__ import annotations

import json

from core.harness.agent import HarnessAgent
from core.harness.offload import SessionOffloader
from core.harness.recall import Recaller, echoes, informative_first, is_question
from tests.support.fakes import ScriptedLLM


def act(tool, text):
    return json.dumps({"tool": tool, "input": text})


def copying_model(plain_answer: str):
    """A model that copies the memory_search description in the protocol, and, asked plainly, says
    `plain_answer`. Records what each step was shown."""
    def reply(messages):
        if "Answer in one short sentence from the notes." in messages[-1]["content"]:
            return plain_answer
        return act("memory_search", "the words to look for")
    return ScriptedLLM(reply)


def test_a_copied_description_is_refused_and_the_recalled_line_answers(demo_workspace):
    llm = copying_model("Maya drinks tea, not coffee.")
    agent = HarnessAgent(demo_workspace, llm, session_id="s-tea")
    turn = agent.run_turn("What does Maya drink?")
    assert "tea" in turn.answer.lower() and turn.source == "model"
    assert "memory/" in turn.answer or "MEMORY.md" in turn.answer          # the source is quoted
    # the copied call was refused, never run
    assert turn.tool_calls == [{"name": "memory_search", "arguments": {"input": "the words to look for"},
                                "error": "refused: the input repeats the tool's description"}]
    assert not any(m.get("role") == "tool" for m in agent.history)
    # the recalled lines were in the first step's context, after the conversation
    last = llm.calls[0][-1]["content"]
    question, _, recalled = last.partition("## Memory already searched")
    assert "What does Maya drink?" in question and "tea" in recalled.lower()
    assert any("tea" in r.text.lower() for r in turn.recalled)


def test_an_ungrounded_plain_answer_falls_back_to_the_lines_themselves(demo_workspace):
    agent = HarnessAgent(demo_workspace, copying_model("Maya loves espresso from Milan every day."), session_id="s2")
    turn = agent.run_turn("What does Maya drink?")
    assert turn.source == "memory" and turn.answer.startswith("From memory: ") and "tea" in turn.answer.lower()
    assert agent.history[-1]["kind"] == "recalled"


def test_nothing_recalled_and_no_answer_is_a_failed_turn(workspace):
    agent = HarnessAgent(workspace, ScriptedLLM(lambda messages: act("memory_search", "the words to look for")),
                         session_id="s3", max_steps=3)
    turn = agent.run_turn("zqxv wombat?")
    assert turn.failed and agent.history[-1]["kind"] == "failed"
    assert not turn.recalled


def test_recall_leaves_out_questions_the_own_log_and_tool_calls(demo_workspace):
    ws = demo_workspace
    old = [{"role": "user", "content": "What does Maya drink?"},
           {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function", "function": {
               "name": "memory_search", "arguments": "{\"query\": \"Maya drink\"}"}}]}]
    SessionOffloader(ws.paths, "s-old").offload(old)
    lines = Recaller(ws).recall("What does Maya drink?", skip_paths=("sessions/s-now.log.jsonl",))
    assert lines and all(not is_question(r.text) and "memory_search(" not in r.text for r in lines)
    assert "tea" in lines[0].text.lower()            # the line holding the rare word comes first


def test_informative_first_prefers_the_rarer_query_word():
    class Hit:
        def __init__(self, words):
            self.words = words
    hits = [Hit(("maya",)), Hit(("maya",)), Hit(("maya", "drink")), Hit(("maya",)), Hit(())]
    assert informative_first(hits)[0] is hits[2] and informative_first(hits)[-1] is hits[4]


def test_echoes():
    prompt = 'memory_search: search memory; input: the words to look for, e.g. "database port"'
    assert echoes("the words to look for", prompt, "What does Maya drink?")
    assert echoes("database port", prompt, "What does Maya drink?")        # the example, for another question
    assert not echoes("database port", prompt, "Which port does the database use?")
    assert not echoes("Maya drink", prompt, "What does Maya drink?")
    assert not echoes("done", prompt, "load the checkpoint")                # one word may be an answer
    assert echoes("The words to look for; and then the next thing and more", prompt, "hello there")
