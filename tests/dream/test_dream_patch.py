"""A dream is a patch on the person's MEMORY.md: every byte it does not change stays as it was.

Each style of tests/dream/memory_styles.py (tables, numbered and nested lists, prose, front matter,
code blocks, comments, Chinese, CRLF, no final newline, no `##` sections, 1,000+ lines) is dreamed
with no new material (nothing changes) and with new material (only inserted lines, in the list style
of the section they join)."""
from __future__ import annotations

import datetime as dt
import difflib
import re

import pytest
from tests.dream.memory_styles import STYLES
from tests.support.dreamkit import write_log

from core.dream.pipeline.consolidator import run_dream
from core.dream.review.apply import apply_proposal
from core.dream.review.operations import Change, apply_changes
from core.dream.review.proposals import list_proposals
from core.store.memory_md import parse_bullet

NOW = dt.datetime(2026, 12, 5, 22, tzinfo=dt.timezone.utc)
NEW_FACTS = ["The billing service moved to the Frankfurt region in November",
             "Jonas covers on-call for Orchard on weekends",
             "馆长决定每周一发布周报，附上数据来源链接"]


def set_memory(ws, text: str) -> None:
    ws.paths.memory_md.write_bytes(text.encode("utf-8"))


def memory_bytes(ws) -> bytes:
    return ws.paths.memory_md.read_bytes()


def assert_only_inserted(original: str, result: str, ids: set[str]) -> list[str]:
    """Every line of `original` is in `result`, in order, byte for byte; the lines in between are the
    added bullets (carrying one of `ids`), blank lines or a new section's heading. Returns the added lines."""
    a, b = original.split("\n"), result.split("\n")
    added = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        assert tag == "insert", f"{tag}: {a[i1:i2]!r} -> {b[j1:j2]!r}"
        for line in b[j1:j2]:
            bare = line.rstrip("\r")
            if not bare or bare.startswith("## "):
                continue
            assert any(f"id:{i}" in bare for i in ids), bare
            added.append(line)
    return added


@pytest.mark.parametrize("style", sorted(STYLES))
def test_a_dream_with_no_new_material_leaves_every_byte(workspace, style):
    set_memory(workspace, STYLES[style])
    result = run_dream(workspace, None, now=NOW)
    assert result.status == "nothing", result.reason
    assert memory_bytes(workspace) == STYLES[style].encode("utf-8")
    # Over the budget (the 1,000-line file), a condense proposal waits for review; nothing was cut.
    for proposal in list_proposals(workspace.paths):
        assert proposal.summary.get("kind") in ("condense", "relevance") and proposal.status == "held"


@pytest.mark.parametrize("style", sorted(STYLES))
def test_a_dream_with_new_material_only_inserts_lines_in_the_files_own_style(workspace, style):
    original = STYLES[style]
    set_memory(workspace, original)
    write_log(workspace, "2026-12-04", NEW_FACTS)
    result = run_dream(workspace, None, now=NOW, apply=False)
    proposal = result.proposal
    assert proposal is not None and not [c for c in proposal.changes if c.kind == "drop"]
    applied = apply_proposal(workspace, proposal.id, reviewed=True, now=NOW)
    text = memory_bytes(workspace).decode("utf-8")
    added = assert_only_inserted(original, text, {c.bullet_id for c in proposal.changes if c.kind == "add"})
    assert len(added) == len(applied.applied) == len(NEW_FACTS)
    assert text.endswith("\n") == original.endswith("\n")
    if "\r\n" in original:
        assert text.count("\n") == text.count("\r\n"), "CRLF line endings are kept on the new lines too"


def _after(section: str, text: str, ident: str) -> Change:
    return Change(id="c1", kind="add", op="add", section=section, bullet_id=ident,
                  after=f"- {text} <!-- id:{ident} src:memory/2026-12-04.md#L3 -->")


def test_an_added_line_continues_a_numbered_list_with_its_delimiter():
    text = STYLES["numbered"]
    out = apply_changes(text, [_after("Rules", "Tag releases from main only", "m-aa01"),
                               _after("Lessons", "Rotate the deploy key yearly", "m-aa02")]).text
    assert "2) Review bot comments before merging\n3) Tag releases from main only <!-- id:m-aa01" in out
    assert "3. Keep release notes under one page\n4. Rotate the deploy key yearly <!-- id:m-aa02" in out


def test_an_added_line_follows_the_last_item_with_its_nested_lines_and_marker():
    out = apply_changes(STYLES["nested"], [_after("Projects", "Kestrel: the staging box", "m-bb01")]).text
    assert ("    continuation line that belongs to the item above\n"
            "- Kestrel: the staging box <!-- id:m-bb01") in out
    out = apply_changes(STYLES["nested"], [_after("Notes", "Drinks oat milk", "m-bb02")]).text
    assert "* Works from Porto on Fridays\n* Drinks oat milk <!-- id:m-bb02" in out


def test_a_section_without_a_list_gets_the_line_after_its_text_with_a_blank_line():
    out = apply_changes(STYLES["tables"], [_after("Accounts", "The mail account is shared with Jonas", "m-cc01")]).text
    assert "| git | deploy-bot | read only |\n\n- The mail account is shared with Jonas <!-- id:m-cc01" in out
    assert out.replace("\n- The mail account is shared with Jonas <!-- id:m-cc01 src:memory/2026-12-04.md#L3 -->\n",
                       "", 1) == STYLES["tables"]


def test_numbered_items_are_facts_so_a_repeat_is_not_added_again(workspace):
    set_memory(workspace, STYLES["numbered"])
    write_log(workspace, "2026-12-04", ["The staging gateway restarts at 04:00 UTC", NEW_FACTS[1]])
    proposal = run_dream(workspace, None, now=NOW, apply=False).proposal
    added = [c.after for c in proposal.changes if c.kind == "add"]
    assert len(added) == 1 and NEW_FACTS[1] in added[0]
    assert parse_bullet("12) twelve things").mark == "12)" and parse_bullet("3. three").text == "three"


def test_nested_bullets_are_facts_not_pins(workspace):
    set_memory(workspace, STYLES["nested"])
    write_log(workspace, "2026-12-04", ["Orchard runs on the Hetzner box in Falkenstein"])
    result = run_dream(workspace, None, now=NOW, apply=False)
    assert result.proposal is None or not [c for c in result.proposal.changes if c.kind in ("add", "drop")]
    assert any("repeats nested bullet" in note for note in result.notes)
    assert not any("pinned" in note for note in result.notes)


def test_the_added_lines_of_a_1000_line_file_stay_within_the_per_dream_limit(workspace):
    set_memory(workspace, STYLES["big"])
    write_log(workspace, "2026-12-04", [f"Service {n} of the fleet runs on host rack-{n:03d} in Porto"
                                        for n in range(60)])
    result = run_dream(workspace, None, now=NOW, apply=False)
    adds = [c for c in result.proposal.changes if c.kind == "add"]
    assert len(adds) == 20 and len(result.proposal.summary["not_proposed"]) == 40
    assert not [c for c in result.proposal.changes if c.kind == "drop"]
    assert re.search(r"40 more candidates, not proposed: budget", " ".join(result.notes))


def test_list_lines_inside_a_code_block_are_code_not_facts():
    from core.store.memory_md import parse_document

    text = "## Setup\n\n- Use the deploy script\n\n```\n1. ssh kestrel\n- not a fact\n```\n"
    assert [b.text for b in parse_document(text).bullets()] == ["Use the deploy script"]
    out = apply_changes(text, [_after("Setup", "Backups run at 01:00", "m-dd01")]).text
    assert out.startswith("## Setup\n\n- Use the deploy script\n- Backups run at 01:00 <!-- id:m-dd01")
    assert out.endswith("```\n1. ssh kestrel\n- not a fact\n```\n")
