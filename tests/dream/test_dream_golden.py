"""A golden MEMORY.md through 30 dreams with no new input: pins intact, nothing lost silently."""
from __future__ import annotations

import datetime as dt

from tests.support.dreamkit import golden_workspace
from tests.support.fakes import ScriptedLLM

from core.dream.review.apply import apply_proposal
from core.dream.pipeline.consolidator import run_dream
from core.dream.review.operations import pinned_lines
from core.dream.review.proposals import list_proposals
from core.store.memory_md import parse_document

EXTRA = ("- Release freeze until the 5th <!-- id:m-f001 src:memory/2026-11-02.md#L3 expires:2026-11-05 -->\n"
         "- Staging runs on the old box <!-- id:m-f002 src:memory/2026-11-02.md#L4 superseded -->\n"
         "- drinks tea, NOT coffee. <!-- id:m-f003 src:memory/2026-11-01.md#L5 -->\n")


def test_thirty_dreams_without_new_input(workspace):
    golden_workspace(workspace)
    snap = workspace.read_memory()
    golden = snap.text + EXTRA
    workspace.write_memory(golden, snap.hash, reason="golden extras")
    pins = pinned_lines(golden)
    assert len(pins) == 3
    original = {b.id or b.text: b for b in parse_document(golden).bullets()}
    moment = dt.datetime(2026, 11, 10, 3, tzinfo=dt.timezone.utc)
    statuses = []
    for n in range(30):
        if n % 2:
            # Every other dream starts from a lost watermark: it re-reads all the old logs.
            workspace.paths.consolidation_state.unlink(missing_ok=True)
        moment += dt.timedelta(days=1)
        result = run_dream(workspace, ScriptedLLM([]), now=moment)   # a model call would fail the test
        statuses.append(result.status)
        if result.proposal is not None:
            assert not result.held, result.proposal.hold_reasons
            apply_proposal(workspace, result.proposal.id)
        text = workspace.read_memory().text
        lines = text.split("\n")
        assert all(pin in lines for pin in pins), f"a pinned bullet changed in dream {n + 1}"
    assert statuses[0] == "proposed" and set(statuses[1:]) == {"nothing"}, statuses
    final = {b.id or b.text: b for b in parse_document(workspace.read_memory().text).bullets()}
    recorded = {}
    for proposal in list_proposals(workspace.paths):
        for change in proposal.changes:
            if change.kind == "drop" and proposal.decisions.get(change.id) == "applied":
                recorded[change.bullet_id or change.before] = change.reason
    for key, bullet in original.items():
        if key in final:
            assert final[key].text == bullet.text
            continue
        assert recorded.get(key), f"bullet {key} ({bullet.text}) vanished without a recorded reason"
    assert recorded == {"m-f001": "expired on 2026-11-05", "m-f002": "marked superseded",
                        "m-f003": recorded["m-f003"]}
    assert "duplicate" in recorded["m-f003"] and "m-b002" in recorded["m-f003"]
    changed = [line for line in workspace.read_memory().text.split("\n") if line and line not in golden.split("\n")]
    assert changed == ["- Drinks tea, not coffee <!-- id:m-b002 src:memory/2026-11-02.md#L3 src:memory/2026-11-01.md#L5 -->"]
