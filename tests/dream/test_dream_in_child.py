"""A dream in a child process (the desktop app's): the same proposal as in-process, with the
parent's model, embedder and idle check relayed."""
from __future__ import annotations

import datetime as dt
import os

from tests.support.dreamkit import all_add, golden_workspace, router, write_log
from tests.support.fakes import ScriptedLLM

from core.dream.pipeline.consolidator import PROPOSED, STOPPED, run_dream
from core.dream.pipeline.isolated import run_dream_in_child
from core.dream.review.proposals import list_proposals
from core.dream.state import record_dream_finished
from core.workspace import Workspace

NOW = dt.datetime(2026, 11, 10, 3, 0, tzinfo=dt.timezone.utc)
NEW = ["Maya now drinks green tea in the afternoon", "The export runs nightly at 02:00 for every farm",
       "Priya approved the Keycloak upgrade to version 24"]


def golden_copy(tmp_path, name):
    ws = Workspace.create(tmp_path / name)
    golden_workspace(ws)
    record_dream_finished(ws.paths, dt.datetime(2026, 11, 3, 21, tzinfo=dt.timezone.utc).timestamp(),
                          now=dt.datetime(2026, 11, 3, 22, tzinfo=dt.timezone.utc))
    write_log(ws, "2026-11-09", NEW, mtime=dt.datetime(2026, 11, 9, 20, tzinfo=dt.timezone.utc).timestamp())
    return ws


def test_a_dream_in_a_child_proposes_what_an_in_process_dream_proposes(tmp_path):
    here, child = golden_copy(tmp_path, "here"), golden_copy(tmp_path, "child")
    try:
        llm_here, llm_child = ScriptedLLM(router(all_add)), ScriptedLLM(router(all_add))
        expected = run_dream(here, llm_here, now=NOW)
        events = []
        result = run_dream_in_child(child, llm_child, now=NOW, progress=events.append)
        assert expected.status == result.status == PROPOSED
        assert result.proposal.new_text == expected.proposal.new_text
        assert [c.op for c in result.proposal.changes] == [c.op for c in expected.proposal.changes]
        # The child asked the parent's model, prompt for prompt, and reported every stage.
        assert len(llm_child.calls) == len(llm_here.calls) > 0
        assert llm_child.calls == llm_here.calls
        assert [e.stage for e in events if e.status == "start"] == ["orient", "gather", "consolidate", "prune"]
        # It wrote in the workspace as a dream does: the proposal is there for the app to list.
        assert [p.id for p in list_proposals(child.paths) if p.summary.get("kind") != "relevance"] == \
            [result.proposal.id]
    finally:
        here.close()
        child.close()


def test_the_parents_idle_check_stops_a_dream_in_a_child(tmp_path):
    ws = golden_copy(tmp_path, "ws")
    asked = []

    def agent_is_back():
        asked.append(os.getpid())
        return "the agent is active again"
    try:
        result = run_dream_in_child(ws, ScriptedLLM(router(all_add)), now=NOW, should_stop=agent_is_back)
        assert result.status == STOPPED and "active again" in result.reason
        assert asked and set(asked) == {os.getpid()}        # answered here, in the parent
        assert list_proposals(ws.paths) == []                  # a stopped dream writes nothing
    finally:
        ws.close()


def test_a_dream_in_a_child_without_a_model_decides_by_rules(tmp_path):
    ws = golden_copy(tmp_path, "ws")
    try:
        result = run_dream_in_child(ws, None, now=NOW)
        assert result.status == PROPOSED
        assert any("02:00" in c.after for c in result.proposal.changes)
    finally:
        ws.close()
