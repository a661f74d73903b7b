"""Hand-offs between agents, built from what the harness already knows.

A packet (from, to, original target, why this agent, completed work, known
constraints, failed attempts, current state, success criteria, termination
condition) is filled from the checkpointer, the anchor and the compaction
summary, so an agent handing a task on does not have to remember it all. The
store refuses a packet that would send a task back to an agent that already
handed it on (HandoffLoopError). The receiving agent gets the packet as text
to start its context with.
"""
from __future__ import annotations

from typing import Any

from core.harness.anchor import Anchor
from core.harness.messages import Message, is_summary
from core.harness.summary import SummaryData


def failed_attempts(history: list[Message]) -> list[str]:
    """Failed attempts recorded in the latest compaction summary of a history."""
    for msg in reversed(history):
        if is_summary(msg):
            data = SummaryData.from_dict(msg.get("summary_data"))
            return [f"{f['attempt']} — {f['reason']}" for f in data.failed_attempts]
    return []


def build_packet(*, from_agent: str, to_agent: str, target: str, why: str, anchor: Anchor,
                 completed: list[str], failed: list[str], constraints: list[str] | None = None,
                 success_criteria: str = "", termination_condition: str = "") -> dict[str, Any]:
    state = anchor.for_prompt() if not anchor.empty else "no progress recorded"
    return {
        "from_agent": from_agent, "to_agent": to_agent, "original_target": target or anchor.goal,
        "why_this_agent": why, "completed_work": list(dict.fromkeys(completed + list(anchor.progress))),
        "known_constraints": list(constraints or []) + [f"blocker: {b}" for b in anchor.blockers],
        "failed_attempts": failed, "current_state": state,
        "success_criteria": success_criteria or f"{target or anchor.goal} is done",
        "termination_condition": termination_condition or "stop when the success criteria hold, or hand back "
                                                          "to a person if blocked",
    }


def hand_off(agent, *, to_agent: str, why: str, from_agent: str = "harness-agent", target: str = "",
             constraints: list[str] | None = None, success_criteria: str = "", termination_condition: str = "",
             task_id: str | None = None) -> dict[str, Any]:
    """Write a hand-off packet for a HarnessAgent's current task; returns the stored record."""
    anchor = agent.anchor.load()
    packet = build_packet(from_agent=from_agent, to_agent=to_agent, target=target or agent.checkpointer.target,
                          why=why, anchor=anchor, completed=list(agent.checkpointer.completed),
                          failed=failed_attempts(agent.history), constraints=constraints,
                          success_criteria=success_criteria, termination_condition=termination_condition)
    record, _changes = agent.ws.create_handoff(packet, task_id)
    return record


def packet_as_context(record: dict[str, Any]) -> str:
    """A received packet as the opening message of the receiving agent's context."""
    def items(values: list[str]) -> str:
        return "\n".join(f"- {v}" for v in values) if values else "- (none)"

    return (f"[Hand-off {record.get('id', '')} from {record['from_agent']} to {record['to_agent']}]\n"
            f"Original target: {record['original_target']}\nWhy you: {record['why_this_agent']}\n"
            f"Completed work:\n{items(record['completed_work'])}\n"
            f"Known constraints:\n{items(record['known_constraints'])}\n"
            f"Failed attempts (do not repeat):\n{items(record['failed_attempts'])}\n"
            f"Current state:\n{record['current_state']}\n"
            f"Success criteria: {record['success_criteria']}\n"
            f"Termination condition: {record['termination_condition']}")
