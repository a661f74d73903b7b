"""An accepted update keeps the value it replaced in memory/superseded.md, where search and `why` find it."""
from __future__ import annotations

import datetime as dt

import pytest
from tests.support.dreamkit import REVIEW_NOW, review_workspace, write_log

from core.cli import main
from core.dream import apply_proposal, format_provenance, load_proposal, run_dream, why
from core.dream.review.apply import superseded_facts
from core.dream.schedule.idle import IdleMonitor
from core.store.atomic import atomic_write
from core.store.superseded import SupersededFact, read_superseded, superseded_path

OLD_LINE = ("- Drinks tea, not coffee (valid 2026-11-02 to 2026-11-09; replaced by m-b002) "
            "<!-- id:m-b002-was src:memory/2026-11-02.md#L3 -->")


@pytest.fixture
def dreamed(workspace):
    review_workspace(workspace)
    result = run_dream(workspace, None, now=REVIEW_NOW)
    assert result.status == "proposed"
    return workspace, result.proposal


def replace_of(proposal):
    return next(c for c in proposal.changes if c.op == "replace" and c.bullet_id == "m-b002")


def test_an_accepted_update_writes_the_old_value_once(dreamed):
    ws, proposal = dreamed
    change = replace_of(proposal)
    result = apply_proposal(ws, proposal.id, change_ids=[change.id])
    assert "memory/superseded.md" in result.changes.paths and result.changes.info["superseded"] == 1
    text = superseded_path(ws.paths).read_text(encoding="utf-8")
    assert text == f"# Superseded facts\n\n{OLD_LINE}\n"
    assert "Drinks tea, not coffee" not in ws.read_memory().text
    assert ws.superseded("m-b002") == [SupersededFact("m-b002", "Drinks tea, not coffee", "2026-11-02", "2026-11-09",
                                                      ("memory/2026-11-02.md#L3",), line=3)]
    # The same record again (an apply re-run after a crash) writes nothing.
    again = superseded_facts(load_proposal(ws.paths, proposal.id), [change])
    assert ws.record_superseded(again).empty
    assert superseded_path(ws.paths).read_text(encoding="utf-8") == text
    # Accepting the rest adds no second copy, and nothing for changes that are not updates.
    apply_proposal(ws, proposal.id)
    assert superseded_path(ws.paths).read_text(encoding="utf-8") == text


def test_undoing_the_accept_takes_its_old_value_back_out(dreamed):
    from core.dream import undo_last_accept

    ws, proposal = dreamed
    ws.record_superseded([SupersededFact("m-x", "Lived in Berlin", "2025-01-01", "2026-03-01")])
    path = superseded_path(ws.paths)
    atomic_write(path, path.read_text(encoding="utf-8") + "A note of the person's own, kept.\n", root=ws.root)
    earlier = path.read_text(encoding="utf-8")
    change = replace_of(proposal)
    apply_proposal(ws, proposal.id, change_ids=[change.id])
    assert path.read_text(encoding="utf-8") == f"{earlier}{OLD_LINE}\n"
    undone = undo_last_accept(ws)
    assert undone.reverted == [change.id] and "Drinks tea, not coffee" in ws.read_memory().text
    assert path.read_text(encoding="utf-8") == earlier                 # the rest of the file as it was
    assert ws.superseded("m-b002") == [] and [f.text for f in ws.superseded()] == ["Lived in Berlin"]
    assert "memory/superseded.md" in undone.changes.paths and undone.changes.info["superseded_removed"] == 1
    apply_proposal(ws, proposal.id, change_ids=[change.id])           # accepted again: recorded again
    assert path.read_text(encoding="utf-8") == f"{earlier}{OLD_LINE}\n"


def test_a_rejected_update_keeps_nothing(dreamed):
    ws, proposal = dreamed
    from core.dream import reject_proposal

    reject_proposal(ws, proposal.id, change_ids=[replace_of(proposal).id])
    apply_proposal(ws, proposal.id)
    assert not superseded_path(ws.paths).exists()
    assert "Drinks tea, not coffee" in ws.read_memory().text


def test_search_finds_the_old_value_and_why_shows_it(dreamed, capsys):
    ws, proposal = dreamed
    ws.sync_index()                     # the index is open: the apply's changes reindex the new file
    apply_proposal(ws, proposal.id, change_ids=[replace_of(proposal).id])
    hits = ws.search("tea", k=5, mode="fts").hits
    assert any(h.path == "memory/superseded.md" and "Drinks tea, not coffee" in h.text for h in hits)
    hit = next(h for h in hits if h.path == "memory/superseded.md")
    assert "<!--" not in hit.text and hit.sources == ("memory/2026-11-02.md#L3",)

    p = why(ws, "m-b002")
    assert p.in_memory and "coffee" in p.text and [w.text for w in p.was] == ["Drinks tea, not coffee"]
    out = format_provenance(p)
    assert "was: Drinks tea, not coffee (valid 2026-11-02 to 2026-11-09)  [memory/2026-11-02.md#L3]" in out
    assert why(ws, "m-b002-was").bullet_id == "m-b002"       # the id as memory/superseded.md spells it
    assert main(["why", str(ws.root), "m-b002"]) == 0
    assert "was: Drinks tea, not coffee (valid 2026-11-02 to 2026-11-09)" in capsys.readouterr().out


def test_a_bullet_without_an_id_gets_one_and_its_old_value_is_kept(workspace):
    review_workspace(workspace, ["Maya switched from tea to coffee; she drinks coffee now"])
    snap = workspace.read_memory()
    workspace.write_memory(snap.text.replace(" <!-- id:m-b002 src:memory/2026-11-02.md#L3 -->", ""), snap.hash)
    proposal = run_dream(workspace, None, now=REVIEW_NOW).proposal
    change = next(c for c in proposal.changes if c.op == "replace")
    assert change.bullet_id and change.before == "- Drinks tea, not coffee"
    apply_proposal(workspace, proposal.id)
    assert read_superseded(workspace.paths) == [SupersededFact(change.bullet_id, "Drinks tea, not coffee", "",
                                                               "2026-11-09", (), line=3)]
    assert f"(valid until 2026-11-09; replaced by {change.bullet_id}) <!-- id:{change.bullet_id}-was -->" in \
        superseded_path(workspace.paths).read_text(encoding="utf-8")
    assert "was: Drinks tea, not coffee (valid until 2026-11-09)" in format_provenance(why(workspace, change.bullet_id))


def test_superseded_md_is_no_daily_log_no_material_and_no_agent_activity(dreamed):
    ws, proposal = dreamed
    monitor = IdleMonitor(ws.paths, idle_minutes=1)
    apply_proposal(ws, proposal.id)
    assert superseded_path(ws.paths).exists()
    assert "superseded.md" not in [log.path.name for log in ws.daily_logs()]
    assert monitor.last_activity()[1] == "MEMORY.md written"        # written before superseded.md, and counted
    later = dt.datetime(2026, 11, 11, 3, 0, tzinfo=dt.timezone.utc)
    again = run_dream(ws, None, now=later)
    assert again.status == "nothing", again.reason        # its lines are not read as new facts
    write_log(ws, "2026-11-10", ["Maya keeps her notes in Obsidian"],
              mtime=dt.datetime(2026, 11, 10, 20, tzinfo=dt.timezone.utc).timestamp())
    third = run_dream(ws, None, now=later)
    assert third.proposal is not None
    assert all("superseded.md" not in ref for c in third.proposal.changes for ref in c.sources)
