"""Bullet-level changes: applied by line surgery, idempotent, conflicts detected."""
from __future__ import annotations

from tests.support.dreamkit import GOLDEN

from core.dream.review.operations import Change, apply_changes, pins_kept
from core.dream.pipeline.working import ReadOnlyBullet, WorkingMemory

import pytest

TEA = "- Drinks tea, not coffee <!-- id:m-b002 src:memory/2026-11-02.md#L3 -->"


def test_add_update_drop_and_everything_else_untouched():
    memory = WorkingMemory(GOLDEN)
    tea = memory.by_id("m-b002")
    memory.update(tea, text="Drinks green tea, not coffee", add_sources=("memory/2026-11-05.md#L3",),
                  reason="newer fact")
    memory.drop(memory.by_id("m-d001"), op="supersede", reason="superseded by firmware fix")
    added = memory.add("Projects", "CSV export per farm", ("memory/2026-11-05.md#L4",), reason="new fact")
    changes = memory.changes()
    assert [c.kind for c in changes] == ["update", "drop", "add"]
    text = memory.render()
    assert "- Drinks green tea, not coffee <!-- id:m-b002 src:memory/2026-11-02.md#L3 src:memory/2026-11-05.md#L3 -->" in text
    assert "Device 17" not in text
    assert f"- CSV export per farm <!-- id:{added.bullet.id} src:memory/2026-11-05.md#L4 -->" in text
    old_lines = [l for l in GOLDEN.split("\n") if "m-b002" not in l and "m-d001" not in l]
    new_lines = text.split("\n")
    assert all(line in new_lines for line in old_lines), "lines no change names pass through"
    assert text.index("CSV export") > text.index("## Projects")
    assert pins_kept(GOLDEN, text) == []


def test_applying_twice_is_a_no_op():
    memory = WorkingMemory(GOLDEN)
    memory.update(memory.by_id("m-b002"), text="Drinks green tea", reason="r")
    memory.drop(memory.by_id("m-d001"), op="budget", reason="r")
    memory.add("Brand new section", "A fact", ("memory/2026-11-05.md#L3",), reason="r")
    once = apply_changes(GOLDEN, memory.changes())
    twice = apply_changes(once.text, memory.changes())
    assert once.clean and twice.clean
    assert twice.text == once.text and len(twice.already) == 3 and not twice.applied
    assert once.text.rstrip().endswith("## Brand new section\n- A fact <!-- id:" + memory.changes()[2].bullet_id
                                       + " src:memory/2026-11-05.md#L3 -->")


def test_a_change_to_an_edited_bullet_is_a_conflict():
    memory = WorkingMemory(GOLDEN)
    memory.update(memory.by_id("m-b002"), text="Drinks green tea", reason="r")
    memory.drop(memory.by_id("m-d002"), op="budget", reason="r")
    edited = GOLDEN.replace("Drinks tea, not coffee", "Drinks only water").replace(
        "needs SET LOCAL per transaction", "needs SET LOCAL (checked)")
    outcome = apply_changes(edited, memory.changes())
    assert len(outcome.conflicts) == 2 and not outcome.applied


def test_a_drop_of_a_bullet_someone_already_removed_is_done():
    memory = WorkingMemory(GOLDEN)
    memory.drop(memory.by_id("m-d002"), op="budget", reason="r")
    removed = "\n".join(l for l in GOLDEN.split("\n") if "m-d002" not in l)
    outcome = apply_changes(removed, memory.changes())
    assert outcome.clean and outcome.already == ["c1"] and outcome.text == removed


def test_pinned_and_nested_bullets_are_read_only():
    text = GOLDEN + "- parent\n  - child\n"
    memory = WorkingMemory(text)
    with pytest.raises(ReadOnlyBullet):
        memory.update(memory.by_id("m-a001"), text="changed")
    with pytest.raises(ReadOnlyBullet):
        memory.drop(memory.by_id("m-b001"), op="budget", reason="r")
    parent = next(e for e in memory.entries if e.text == "parent")
    child = next(e for e in memory.entries if e.text == "child")
    assert not parent.editable and not child.editable


def test_a_drop_needs_a_reason():
    memory = WorkingMemory(GOLDEN)
    with pytest.raises(ValueError):
        memory.drop(memory.by_id("m-b002"), op="budget", reason="")


def test_a_bullet_without_id_gets_one_when_a_dream_changes_it():
    memory = WorkingMemory(GOLDEN)
    entry = next(e for e in memory.entries if e.text.startswith("Written by the person"))
    # The same fact seen again changes nothing in the person's line (the log keeps that source) ...
    assert not memory.update(entry, add_sources=("memory/2026-11-05.md#L3",), op="sources", reason="seen again")
    assert memory.changes() == []
    # ... a new value does, and the line gets an id and its source
    memory.update(entry, text="Written by the person, with provenance now",
                  add_sources=("memory/2026-11-05.md#L3",), op="replace", reason="a new value")
    line = memory.changes()[0].after
    assert line.startswith("- Written by the person, with provenance now <!-- id:m-") and "src:memory/2026-11-05.md#L3" in line


def test_change_round_trips_through_json():
    change = Change(id="c1", kind="add", op="add", section="Preferences", bullet_id="m-1", after=TEA,
                    sources=("memory/2026-11-02.md#L3",), flags=("unsourced",))
    assert Change.from_dict(change.to_dict()) == change
    with pytest.raises(ValueError):
        Change.from_dict({**change.to_dict(), "kind": "rewrite"})
