"""A fact that only the learned kind head holds back (it reads a dated change of value as a single
event), and that the word rules find updates a bullet of MEMORY.md, is promoted after all: the bullet
it replaces shows the slot is a lasting one (core/dream/pipeline/stages._spare_updates). A line held
back the same way that updates nothing stays held back. Every line was written for this test."""
from __future__ import annotations

import datetime as dt

import pytest

from tests.support.dreamkit import write_log

from core.dream.judgment import kinds
from core.dream.pipeline.consolidator import run_dream

NOW = dt.datetime(2026, 12, 5, 22, tzinfo=dt.timezone.utc)

CASES = [
    # (MEMORY.md bullet, the log's update of it, a line held back the same way that updates nothing)
    ("Ola's studio hire: £24 an hour", "Ola bumped the studio hire to £30 an hour on 3 February; use that for quotes.",
     "Ola's cousin dropped by the studio on 3 February with a cake."),
    ("健身房月卡 299 元", "健身房月卡从 3 月 1 日起涨到 399 元", "3 月 1 日健身房停电，练到一半就回家了"),
    ("Alquiler del estudio de Ola: 24 € la hora", "El 3 de febrero Ola subió el alquiler del estudio a 30 € la hora.",
     "El 3 de febrero vino el primo de Ola al estudio con una tarta."),
]


@pytest.mark.parametrize("bullet,update,event", CASES)
def test_an_update_the_head_reads_as_an_event_still_replaces_its_bullet(workspace, bullet, update, event):
    judged = kinds.classify_facts_both([update, event])
    assert [k.by_head for k in judged] == [True, True], judged            # the head alone holds both back
    workspace.paths.memory_md.write_bytes(f"# Memory\n\n## Notes\n- {bullet}\n- Tea, never coffee\n".encode("utf-8"))
    write_log(workspace, "2026-12-04", [update, event])
    proposal = run_dream(workspace, None, now=NOW, apply=False).proposal
    updates = [c for c in proposal.changes if c.kind == "update"]
    assert [c.after for c in updates] and update in updates[0].after, proposal.changes
    assert not any(event in (c.after or "") for c in proposal.changes), proposal.changes


# (MEMORY.md bullet, an event whose "dropped off" reads to the word rules as "no longer so" of a bullet word)
NO_VALUE = [
    ("Night porter is Emil, ext 2210 for the loading bay",
     "A courier dropped off a tray of pastries for the night porter and the loading bay team."),
    ("The Tuesday choir meets in the church hall",
     "A neighbour dropped off a tray of biscuits for the Tuesday choir in the church hall."),
]


@pytest.mark.parametrize("bullet,event", NO_VALUE)
def test_an_event_that_brings_no_new_value_is_not_spared(workspace, bullet, event):
    # the head holds the event back; a change cue alone, with no new value of what the bullet states,
    # must neither promote it nor let it replace the bullet (signals.value_changed)
    assert kinds.classify_facts_both([event])[0].by_head
    workspace.paths.memory_md.write_bytes(f"# Memory\n\n## Notes\n- {bullet}\n- Tea, never coffee\n".encode("utf-8"))
    write_log(workspace, "2026-12-04", [event])
    proposal = run_dream(workspace, None, now=NOW, apply=False).proposal
    changes = proposal.changes if proposal is not None else []       # None: the dream changes nothing
    assert not any(event in (c.after or "") for c in changes), changes


def test_only_what_the_head_held_back_can_be_spared():
    # a marker, the scanner and the rules are never overruled; neither is the head's "secret"
    assert not kinds.classify_facts_both(["À faire : payer la salle, 30 € de l'heure"])[0].by_head
    assert not kinds.classify_facts_both(["TODO: studio hire up to £30"])[0].by_head
    assert not kinds.FactKind(kinds.SECRET, "held", 0.9).by_head
    assert kinds._learned(kinds.SECRET, 0.9).by_head is False and kinds._learned(kinds.ONE_OFF, 0.9).by_head
