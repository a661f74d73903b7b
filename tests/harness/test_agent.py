"""HarnessAgent with a scripted model: tool calls in the OpenAI shape, forced endings, session end."""
from __future__ import annotations

import json

from core.config import Settings
from core.dream.state import load_state
from core.harness.agent import HarnessAgent
from core.harness.flush import FLUSH_REQUEST
from core.harness.messages import orphan_results
from core.harness.tools import ToolBox
from core.harness.anchor import AnchorStore
from core.harness.checkpointing import Checkpointer
from tests.support.fakes import ScriptedLLM


def act(tool, text):
    return json.dumps({"tool": tool, "input": text})


def summary_or(replies):
    """Scripted replies for actions; any summary or flush request gets a fixed answer."""
    def reply(messages):
        system = messages[0]["content"]
        if system.startswith("You summarise"):
            return json.dumps({"intent": "", "achieved": ["read the notes"], "pending": [], "decisions": [],
                               "artifacts": [], "failed_attempts": [], "next_steps": []})
        if messages[-1]["content"].endswith(FLUSH_REQUEST):
            return "- The Orion staging port is 5433"
        return replies.pop(0)
    return reply


def test_a_turn_with_tools_then_an_answer(workspace):
    (workspace.root / "notes.txt").write_text("The Orion staging port is 5433.\n")
    llm = ScriptedLLM(summary_or([act("progress_update", "opened the notes"), act("read_file", "notes.txt"),
                                  act("answer", "The port is 5433.")]))
    agent = HarnessAgent(workspace, llm, session_id="s1")
    turn = agent.run_turn("What is the Orion staging port? Check notes.txt.")
    assert turn.answer == "The port is 5433." and not turn.forced and turn.steps == 3
    assert [c["name"] for c in turn.tool_calls] == ["progress_update", "read_file"]
    history = agent.history
    assert [x["role"] for x in history] == ["user", "assistant", "tool", "assistant", "tool", "assistant"]
    assert history[3]["tool_calls"][0]["function"]["name"] == "read_file"
    assert json.loads(history[3]["tool_calls"][0]["function"]["arguments"]) == {"path": "notes.txt"}
    assert history[4]["tool_call_id"] == history[3]["tool_calls"][0]["id"] and "5433" in history[4]["content"]
    assert not orphan_results(history)
    assert AnchorStore(workspace).load().progress == ("opened the notes",)
    reasons = [workspace.latest_checkpoint("s1")["reason"]]
    assert reasons == ["after progress_update"]
    # the system prompt tells the model the protocol and the tools
    assert "memory_search" in llm.calls[0][0]["content"] and '"tool"' in llm.calls[0][0]["content"]

    end = agent.end_session()
    assert end.offloaded == 6
    assert [r["id"] for r in workspace.read_session("s1").objects] == [x["id"] for x in history]
    cache = workspace.session_cache.read().objects
    assert cache[-1]["session_id"] == "s1" and "read the notes" in cache[-1]["summary"]
    assert load_state(workspace.paths).sessions_since == 1
    assert end.flush.outcome == "written"
    assert agent.end_session().offloaded == 0 and load_state(workspace.paths).sessions_since == 1


def test_a_repeating_model_is_made_to_answer(workspace):
    llm = ScriptedLLM(summary_or([act("checkpoint_load", ""), act("checkpoint_load", ""),
                                  act("answer", "done")]))
    agent = HarnessAgent(workspace, llm, session_id="s1")
    turn = agent.run_turn("load the checkpoint")
    assert turn.answer == "done" and len(turn.tool_calls) == 1
    # the forced step only offered "answer"
    assert "[harness] That call was already made" in llm.calls[-1][-1]["content"]


def test_invalid_actions_and_the_step_limit_always_end_the_turn(workspace):
    llm = ScriptedLLM(summary_or(['{"tool": "nonsense", "input": "x"}', '"no"', act("answer", "")]))
    agent = HarnessAgent(workspace, llm, session_id="s1")
    turn = agent.run_turn("hello")
    assert turn.forced and turn.answer                    # an empty answer becomes a fallback text
    steps = [act("memory_get", f"MEMORY.md:{i}-{i}") for i in range(1, 4)]
    agent2 = HarnessAgent(workspace, ScriptedLLM(summary_or(steps + [act("answer", "gave up")])),
                          session_id="s2", max_steps=4)
    turn2 = agent2.run_turn("read memory line by line")
    assert turn2.steps == 4 and turn2.forced.startswith("step limit") and turn2.answer == "gave up"
    assert len(turn2.tool_calls) == 3


def test_overflow_compacts_and_retries_once(workspace):
    settings = Settings().replace("compaction", flush_before=False, keep_messages=4)
    llm = ScriptedLLM(summary_or([act("answer", f"a{i}") for i in range(10)]))
    agent = HarnessAgent(workspace, llm, session_id="s1", settings=settings)
    for i in range(4):
        agent.run_turn(f"question {i}")
    llm._overflow_left = 1
    turn = agent.run_turn("one more")
    assert turn.answer == "a4" and "overflow: compacted and retried once" in turn.actions
    assert agent.history[0]["kind"] == "summary" and agent.recovery.recoveries == 1
    assert not orphan_results(agent.history)


def test_multi_step_task_runs_the_task_graph_and_resumes(workspace):
    llm = ScriptedLLM(summary_or([act("checkpoint_save", "found it"), act("answer", "step one done"),
                                  act("answer", "step two done")]))
    agent = HarnessAgent(workspace, llm, session_id="s1")
    turns = agent.run_task("prepare the release", ["find the version", "write the notes", "tag it"][:2])
    assert [t.answer for t in turns] == ["step one done", "step two done"]
    latest = workspace.latest_checkpoint("s1")
    assert [t["status"] for t in latest["tasks"]] == ["done", "done"]
    assert latest["completed_steps"][-2:] == ["find the version", "write the notes"]
    anchor = AnchorStore(workspace).load()
    assert anchor.goal == "prepare the release" and anchor.next_step == "task complete"
    # a new agent on the same session resumes: nothing is pending, so no model call is made
    again = HarnessAgent(workspace, ScriptedLLM([]), session_id="s1")
    assert again.run_task("prepare the release", ["find the version", "write the notes"]) == []


def test_tools_are_confined_and_page_large_files(workspace):
    tools = ToolBox(workspace, Checkpointer(workspace, "s1"), AnchorStore(workspace))
    text, error = tools.call("read_file", {"path": "../../etc/passwd"})
    assert error and "outside the workspace" in text
    (workspace.root / "big.txt").write_text("".join(f"row {i} " + "x" * 100 + "\n" for i in range(1000)))
    text, error = tools.call("read_file", tools.arguments_for("read_file", "big.txt"))
    assert not error and len(text) < 13_000 and "continues: read big.txt:" in text
    text, _ = tools.call("read_file", tools.arguments_for("read_file", "big.txt:500-501"))
    assert "500: row 499" in text and "501: row 500" in text
    text, error = tools.call("memory_get", {"path": "big.txt"})
    assert error and "use read_file" in text
    assert tools.call("nope", {})[1] == "unknown tool"
