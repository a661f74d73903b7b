"""Tier 4 triggers (drift, pollution, elapsed time) and `/restart`: the rules alone, then through the
real agent loop on the real SmolLM2-135M."""
from __future__ import annotations

import builtins
import json

import pytest

from core.cli import main
from core.config import RestartSettings, Settings
from core.dream.judgment.similarity import lexical
from core.errors import CoreError
from core.harness.agent import HarnessAgent
from core.harness.anchor import AnchorStore
from core.harness.tools import Tool
from core.harness.triggers import RestartTriggers

MODEL = "smollm2-135m-instruct-q4_1"


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


# ----- the rules ------------------------------------------------------------------------------------
def test_each_trigger_fires_on_its_own_condition_and_reset_starts_over():
    clock = Clock()
    triggers = RestartTriggers(RestartSettings(drift_steps=3, error_repeats=3, max_hours=2.0), score=lexical,
                               clock=clock)
    goal = "migrate the billing database to postgres"
    triggers.record("migrate billing tables to postgres -> read_file schema.sql")
    triggers.record("banana bread recipe -> answer: flour")
    triggers.record("knit a scarf -> answer: wool")
    assert triggers.check(goal) == ""                      # one of the last three steps is on the goal
    triggers.record("penguin jokes -> answer: ha")
    assert triggers.check(goal).startswith("drift: none of the last 3 steps")
    assert triggers.check("") == ""                         # no goal in progress.md: nothing to drift from
    triggers.reset()
    for _ in range(2):
        triggers.record(goal + " -> shell", "Host  db-7 unreachable")
    triggers.record(goal + " -> shell", "another error")
    assert triggers.check(goal) == ""
    triggers.record(goal + " -> shell", "host db-7 UNREACHABLE")
    assert triggers.check(goal).startswith("pollution: the same error 3 times (host db-7 unreachable)")
    triggers.reset()
    clock.now += 2 * 3600
    assert triggers.check(goal) == ""
    clock.now += 1
    assert triggers.check(goal).startswith("elapsed: the task has run 2.0 h, over 2 h")
    off = RestartTriggers(RestartSettings(drift_steps=0, error_repeats=0, max_hours=0), score=lexical, clock=clock)
    clock.now += 10 * 3600
    off.record("x", "same")
    off.record("x", "same")
    assert off.check(goal) == ""


# ----- through the real agent loop --------------------------------------------------------------------
@pytest.fixture(scope="module")
def llm():
    from core.llm import open_client

    client = open_client(Settings().replace("model", model=MODEL).model)
    yield client
    client.close()


def _agent(workspace, llm, **options):
    events = []
    agent = HarnessAgent(workspace, llm, max_steps=3, on_event=lambda kind, data: events.append((kind, data)),
                         **options)
    return agent, events


def _restarted(agent, events, prefix: str) -> dict:
    assert agent.restarts and agent.restarts[0].startswith(prefix), agent.restarts
    restart = next(data for kind, data in events if kind == "restart")
    assert restart["reason"] == agent.restarts[0]
    reasons = [json.loads(p.read_text())["reason"] for p in agent.ws.checkpoint_files(agent.session_id)]
    assert any(r.startswith(f"before a fresh restart ({prefix}") for r in reasons), reasons
    assert agent.ws.paths.session_log(agent.session_id).exists()      # the old context went to the session log
    return restart


@pytest.mark.slow
def test_pollution_the_same_error_three_times_restarts_the_real_agent(workspace, llm):
    agent, events = _agent(workspace, llm)

    def unreachable(args):
        raise CoreError("the staging host db-7 is unreachable")
    # Whichever tool the model picks, the environment answers with the same error.
    for name, tool in list(agent.tools.tools.items()):
        agent.tools.tools[name] = Tool(name, tool.description, tool.primary, unreachable)
    for request in ["Search memory for the staging port of project Orion.", "Read the file notes/orion.md.",
                    "Look up the Orion deploy region in memory.", "Search memory for the Orion owner.",
                    "Read the file notes/deploy.md."]:
        agent.run_turn(request)
        if agent.restarts:
            break
    _restarted(agent, events, "pollution: the same error 3 times (the staging host db-7 is unreachable)")
    opening = agent.history[0]["content"]
    assert opening.startswith("[Fresh restart") and "Why the restart: pollution" in opening


@pytest.mark.slow
def test_drift_from_the_anchor_goal_restarts_the_real_agent(workspace, llm):
    workspace.settings = workspace.settings.replace("restart", drift_steps=3)
    agent, events = _agent(workspace, llm)
    agent.anchor.update(goal="Migrate the billing service database from MySQL to PostgreSQL")
    for request in ["What is a good recipe for banana bread?", "How do I knit a wool scarf?",
                    "Which flowers grow well in shade?", "Tell me a joke about penguins."]:
        agent.run_turn(request)
        if agent.restarts:
            break
    _restarted(agent, events, "drift: none of the last 3 steps shares meaning with the goal")
    assert "Migrate the billing service database" in agent.history[0]["content"]   # progress.md came back


@pytest.mark.slow
def test_more_than_two_hours_restarts_the_real_agent(workspace, llm):
    clock = Clock()
    agent, events = _agent(workspace, llm, clock=clock)
    agent.anchor.update(goal="Write the release notes for version 2.4")
    agent.run_turn("Start the release notes for version 2.4.")
    assert not agent.restarts
    clock.now += 2 * 3600 + 60
    turn = agent.run_turn("Continue the release notes for version 2.4.")
    _restarted(agent, events, "elapsed: the task has run 2.0 h, over 2 h")
    assert any(action.startswith("tier 4: fresh restart (elapsed") for action in turn.actions)
    assert agent.history[1]["content"] == "Continue the release notes for version 2.4."


@pytest.mark.slow
def test_slash_restart_in_the_terminal_agent(workspace, monkeypatch, capsys):
    AnchorStore(workspace).update(goal="Ship the invoice export")
    lines = iter(["/restart", "/quit"])
    monkeypatch.setattr(builtins, "input", lambda prompt="": next(lines))
    assert main(["agent", str(workspace.root), "--model", MODEL, "--session", "term-1", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "started afresh from progress.md" in out
    checkpoints = [json.loads(p.read_text()) for p in workspace.checkpoint_files("term-1")]
    assert any(cp["reason"] == "before a fresh restart (asked for from the terminal)" for cp in checkpoints)
    logged = workspace.read_session("term-1").objects
    assert any("Ship the invoice export" in (m.get("content") or "") for m in logged)
