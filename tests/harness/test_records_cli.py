"""`reverie checkpoint|handoff|progress|restart`, and hand-offs from the agent, under a lock."""
from __future__ import annotations

import json
import threading

from tests.support.fakes import ScriptedLLM

from core.cli import main
from core.errors import HandoffLoopError
from core.harness.agent import HarnessAgent
from core.harness.anchor import AnchorStore
from core.harness.checkpointing import Checkpointer


def _saved(workspace, session="s-1"):
    cp = Checkpointer(workspace, session, target="Ship the invoice export")
    cp.set_tasks(["write the exporter", "test it", "release it"])
    cp.mark("t1", "done")
    (workspace.root / "export.py").write_text("print('v1')\n")
    cp.add_artifact("export.py")
    first = cp.save("milestone one")
    cp.mark("t2", "done")
    second = cp.save("milestone two")
    return first, second


def test_checkpoint_list_show_and_restore(workspace, capsys):
    root = str(workspace.root)
    assert main(["checkpoint", "list", root]) == 0
    assert capsys.readouterr().out.strip() == "no checkpoints"
    first, second = _saved(workspace)
    assert main(["checkpoint", "list", root]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert [line.split()[0] for line in lines] == [first["checkpoint_id"], second["checkpoint_id"]]
    assert "milestone one" in lines[0] and "resume at t2: test it" in lines[0]
    assert "resume at t3: release it" in lines[1]

    assert main(["checkpoint", "show", root, first["checkpoint_id"]]) == 0
    assert json.loads(capsys.readouterr().out)["completed_steps"] == ["write the exporter"]

    (workspace.root / "export.py").write_text("print('v2')\n")
    assert main(["checkpoint", "restore", root, first["checkpoint_id"]]) == 0
    out = capsys.readouterr().out
    assert f"restored {first['checkpoint_id']} as cp-" in out
    assert "artifacts changed since it was saved: export.py (changed)" in out
    assert "Resume at task t2: test it" in out                 # the restart context resumes from it
    latest = workspace.latest_checkpoint("s-1")
    assert latest["reason"] == f"restored from {first['checkpoint_id']}" and latest["pending_steps"] == \
        first["pending_steps"]
    assert len(workspace.checkpoint_files("s-1")) == 3           # a copy: nothing was overwritten

    assert main(["checkpoint", "show", root, "cp-nope"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("reverie: error: no checkpoint 'cp-nope'") and "\n" not in err


def test_handoff_create_read_list_and_the_loop_refusal(workspace, capsys):
    root = str(workspace.root)
    AnchorStore(workspace).update(goal="Ship the invoice export", done="exporter written",
                                  blockers=["staging credentials missing"], next_step="test it")
    assert main(["handoff", "create", root, "--from", "planner", "--to", "coder", "--why", "it needs code",
                 "--failed", "csv module: wrong quoting", "--task", "invoice-export"]) == 0
    out = capsys.readouterr().out
    assert "planner -> coder, task 'invoice-export', hop 1" in out
    record = workspace.handoffs()[0]
    assert record["original_target"] == "Ship the invoice export"          # from progress.md
    assert "blocker: staging credentials missing" in record["known_constraints"]
    assert "exporter written" in record["completed_work"]

    assert main(["handoff", "read", root, record["id"]]) == 0
    text = capsys.readouterr().out
    assert text.startswith(f"[Hand-off {record['id']} from planner to coder]")
    assert "- csv module: wrong quoting" in text
    assert main(["handoff", "read", root, record["id"], "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["id"] == record["id"]

    assert main(["handoff", "create", root, "--from", "coder", "--to", "planner", "--why", "back",
                 "--task", "invoice-export"]) == 2
    err = capsys.readouterr().err.strip()
    assert "refused: planner already handed task 'invoice-export' on" in err and "\n" not in err
    assert main(["handoff", "list", root]) == 0
    assert len(capsys.readouterr().out.strip().splitlines()) == 1
    assert main(["handoff", "read", root, "ho-missing"]) == 2
    assert "no hand-off 'ho-missing'" in capsys.readouterr().err


def test_two_agents_handing_one_task_to_each_other_at_once_one_is_refused(workspace):
    """The loop check and the write are one step under a lock: A -> B and B -> A at the same
    moment never both pass."""
    packet = {"why_this_agent": "x", "completed_work": [], "known_constraints": [], "failed_attempts": [],
              "current_state": "", "success_criteria": "", "termination_condition": ""}
    for round_ in range(15):
        task = f"task-{round_}"
        barrier = threading.Barrier(2)
        outcomes = []

        def hand(src, dst):
            barrier.wait()
            try:
                workspace.create_handoff({**packet, "from_agent": src, "to_agent": dst, "original_target": task})
                outcomes.append("ok")
            except HandoffLoopError:
                outcomes.append("refused")

        threads = [threading.Thread(target=hand, args=pair) for pair in (("a", "b"), ("b", "a"))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(outcomes) == ["ok", "refused"], (round_, outcomes)
    assert sorted(p["hop"] for p in workspace.handoffs()) == [1] * 15


def test_progress_and_restart_commands(workspace, capsys):
    root = str(workspace.root)
    assert main(["progress", root, "--goal", "Ship the invoice export", "--done", "exporter written",
                 "--blocker", "staging credentials missing", "--next", "test it"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("progress.md updated") and "## Goal\nShip the invoice export" in out
    assert main(["progress", root, "--clear-blockers"]) == 0
    assert "## Blockers\n- (none)" in capsys.readouterr().out
    assert main(["progress", root]) == 0
    assert "- exporter written" in capsys.readouterr().out
    _saved(workspace)
    assert main(["restart", root, "--session", "s-1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("[Fresh restart") and "## progress.md" in out and "Resume at task t3: release it" in out


def test_the_agent_hands_its_task_to_a_peer_and_a_hand_back_is_refused(workspace):
    AnchorStore(workspace).update(goal="Ship the invoice export")
    planner = HarnessAgent(workspace, ScriptedLLM(['{"tool": "hand_off", "input": "reviewer: it needs a review"}']),
                           name="planner", peers=("reviewer",), session_id="p-1")
    assert "hand_off" in planner.tools.names and "reviewer" in planner.builder.system_prompt(planner.anchor.load())
    turn = planner.run_turn("Get the export reviewed.")
    assert turn.answer.startswith("handed off to reviewer as ho-") and turn.tool_calls[0]["error"] == ""
    record = workspace.handoffs()[0]
    assert (record["from_agent"], record["to_agent"], record["why_this_agent"]) == \
        ("planner", "reviewer", "it needs a review")
    reasons = [json.loads(p.read_text())["reason"] for p in workspace.checkpoint_files("p-1")]
    assert reasons == ["before hand_off", "after hand_off"]

    reviewer = HarnessAgent(workspace, ScriptedLLM(['{"tool": "hand_off", "input": "planner: back to you"}',
                                                    '{"tool": "answer", "input": "I will review it myself."}']),
                            name="reviewer", peers=("planner",), session_id="r-1")
    turn = reviewer.run_turn("Send it back.")
    assert "refused: planner already handed task" in turn.tool_calls[0]["error"]
    assert turn.answer == "I will review it myself." and len(workspace.handoffs()) == 1
    # No peers: no hand_off tool at all.
    assert "hand_off" not in HarnessAgent(workspace, ScriptedLLM([]), session_id="x-1").tools.names
