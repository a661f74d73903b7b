"""Helpers for the dream tests: real workspaces with daily logs, scripted model replies."""
from __future__ import annotations

import datetime as dt
import json
import os
import re

from core.store.atomic import atomic_write

GOLDEN = """# MEMORY

Curated long-term memory. One fact per bullet.

## User profile
- Maya is a backend engineer in Lisbon <!-- id:m-a001 src:memory/2026-11-01.md#L3 pin -->
- Maya's manager is Priya Raman <!-- id:m-a002 src:memory/2026-11-01.md#L4 -->

## Preferences
- Prefers short answers, code first <!-- id:m-b001 src:memory/2026-11-01.md#L5 pin -->
- Drinks tea, not coffee <!-- id:m-b002 src:memory/2026-11-02.md#L3 -->
- Prefers pytest fixtures over setUp methods <!-- id:m-b003 src:memory/2026-11-02.md#L4 -->

## Decisions
- Readings live in a Timescale hypertable partitioned by day <!-- id:m-c001 src:memory/2026-11-02.md#L5 -->
- Authentication through Keycloak OIDC <!-- id:m-c002 src:memory/2026-11-03.md#L3 pin -->
- Written by the person, no provenance at all

## Learnings
- Device 17 sends local time instead of UTC <!-- id:m-d001 src:memory/2026-11-03.md#L4 -->
- Row-level security needs SET LOCAL per transaction <!-- id:m-d002 src:memory/2026-11-03.md#L5 -->

## Projects
- Orchard: soil-moisture dashboard for three farms <!-- id:m-e001 src:memory/2026-11-01.md#L6 -->
"""

GOLDEN_LOGS = {
    "2026-11-01": ["Maya is a backend engineer in Lisbon", "Maya's manager is Priya Raman",
                   "Prefers short answers, code first", "Orchard: soil-moisture dashboard for three farms"],
    "2026-11-02": ["Drinks tea, not coffee", "Prefers pytest fixtures over setUp methods",
                   "Readings live in a Timescale hypertable partitioned by day"],
    "2026-11-03": ["Authentication through Keycloak OIDC", "Device 17 sends local time instead of UTC",
                   "Row-level security needs SET LOCAL per transaction"],
}


def write_log(ws, day: str, facts: list[str], *, mtime: float | None = None, flush: bool = False) -> list[str]:
    """memory/<day>.md with a title, a blank line and one bullet per fact; returns each fact's ref."""
    lines = [f"# {day}", ""]
    if flush:
        lines.append(f"## Memory Flush — {day}T18:00:00+00:00")
    refs = []
    for fact in facts:
        lines.append(f"- {fact}")
        refs.append(f"memory/{day}.md#L{len(lines)}")
    path = ws.paths.memory_dir / f"{day}.md"
    atomic_write(path, "\n".join(lines) + "\n")
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return refs


def proposed_additions(ws, memory: str, day: str, facts: list[str], now: dt.datetime) -> list:
    """The "add" changes one dream (not applied) proposes for `facts` logged on `day` against `memory`."""
    from core.dream.pipeline.consolidator import run_dream

    ws.paths.memory_md.write_bytes(memory.encode("utf-8"))
    write_log(ws, day, facts)
    proposal = run_dream(ws, None, now=now, apply=False).proposal
    return [c for c in (proposal.changes if proposal is not None else []) if c.kind == "add"]


def golden_workspace(ws) -> None:
    for day, facts in GOLDEN_LOGS.items():
        write_log(ws, day, facts, mtime=dt.datetime.fromisoformat(day + "T20:00:00+00:00").timestamp())
    snap = ws.read_memory()
    ws.write_memory(GOLDEN, snap.hash, reason="golden")


def facts_in(messages) -> list[str]:
    """The facts a Consolidate prompt shows, in order."""
    return re.findall(r"^Fact \d+: (.*)$", messages[-1]["content"], re.M)


def handles_in(messages) -> dict[str, str]:
    """Handle -> bullet text shown under a fact in a Consolidate prompt."""
    return dict(re.findall(r"^  (B\d+): (.*)$", messages[-1]["content"], re.M))


def router(decide):
    """A ScriptedLLM reply function: Orient gets fixed themes, Consolidate asks `decide(messages)`
    for a list of {fact, relation, target} dicts."""
    def reply(messages):
        if "name what matters" in messages[0]["content"]:
            return json.dumps({"goals": ["ship the export"], "decisions": [], "patterns": [], "preferences": []})
        return json.dumps({"ops": decide(messages)})
    return reply


def all_add(messages):
    """The model's answer "every fact is new"."""
    return [{"fact": i, "relation": "new", "target": ""} for i, _ in enumerate(facts_in(messages), start=1)]


REVIEW_NOW = dt.datetime(2026, 11, 10, 3, 0, tzinfo=dt.timezone.utc)
# One day of logs after GOLDEN that gives a dream every kind of row a review shows: an update
# (tea -> coffee), a duplicate, a new fact, a to-do, a pasted password and a fact against a pin.
REVIEW_LOG = ["Maya switched from tea to coffee; she drinks coffee now",
              "TODO: send Priya the export numbers by Friday",
              "The staging database password is Hx7!pQ2rZ9wL",
              "Maya prefers dark mode screenshots in the docs",
              "Maya's manager is Priya Raman",
              "Authentication no longer goes through Keycloak; we use Auth0 from now on"]


def review_workspace(ws, log: list[str] | None = None) -> None:
    """GOLDEN consolidated up to 2026-11-03, then REVIEW_LOG (or `log`) on 2026-11-09: dream with
    `run_dream(ws, None, now=REVIEW_NOW)`."""
    from core.dream.state import record_dream_finished

    golden_workspace(ws)
    record_dream_finished(ws.paths, dt.datetime(2026, 11, 3, 21, tzinfo=dt.timezone.utc).timestamp(),
                          now=dt.datetime(2026, 11, 3, 22, tzinfo=dt.timezone.utc))
    write_log(ws, "2026-11-09", REVIEW_LOG if log is None else log,
              mtime=dt.datetime(2026, 11, 9, 20, tzinfo=dt.timezone.utc).timestamp())


def dreamed_review(ws):
    """`review_workspace` dreamed once without a model: (ws, its proposal)."""
    from core.dream import run_dream

    review_workspace(ws)
    proposal = run_dream(ws, None, now=REVIEW_NOW).proposal
    assert proposal is not None
    return ws, proposal


def opened_a_day_ago(ws) -> None:
    """The time gate's clock starts at a workspace's first open: make that a day ago, so a dream is due."""
    from dataclasses import replace

    from core.dream.state import update_state

    opened = dt.datetime.now(dt.timezone.utc) - dt.timedelta(hours=25)
    update_state(ws.paths, lambda state: replace(state, first_open=opened.isoformat()))
