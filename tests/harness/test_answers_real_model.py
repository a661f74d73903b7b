"""The agent answers from memory with the bundled SmolLM2-135M, on the demo workspace.

Six questions whose answers are in the demo's memory; at least four must be answered right, and
the session's end must not write the questions into today's log. The questions are ours, written
for this test; the recall and refusal rules know nothing of them.
"""
from __future__ import annotations

import datetime as dt

import pytest

from core.config import Settings
from core.harness.agent import HarnessAgent

MODEL = "smollm2-135m-instruct-q4_1"
QUESTIONS = [("What does Maya drink?", ("tea",)),
             ("Which port does the dev database use?", ("5433",)),
             ("Who is Maya's manager?", ("priya",)),
             ("Which editor does Maya use?", ("helix",)),
             ("How are alerts sent to the farms?", ("email",)),
             ("When is the production deploy?", ("monday",))]
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def llm():
    from core.llm import open_client

    client = open_client(Settings().replace("model", model=MODEL).model)
    yield client
    client.close()


def test_six_demo_questions_with_the_bundled_model(demo_workspace, llm):
    agent = HarnessAgent(demo_workspace, llm, session_id="s-six")
    right = []
    for question, wanted in QUESTIONS:
        turn = agent.run_turn(question)
        if any(w in turn.answer.lower() for w in wanted):
            right.append(question)
    assert "What does Maya drink?" in right
    assert len(right) >= 4, right
    agent.end_session()
    today = demo_workspace.paths.daily_log(dt.date.today())
    text = today.read_text(encoding="utf-8") if today.exists() else ""
    assert not any(q.rstrip("?").lower() in text.lower() for q, _ in QUESTIONS)
    # the replies that quote memory are not returned by search as if they were memory
    demo_workspace.sync_index()
    hits = demo_workspace.search("Maya drink", k=10, mode="keyword").hits
    assert not any(h.path == "sessions/s-six.log.jsonl" and h.text.startswith("assistant:") for h in hits)
