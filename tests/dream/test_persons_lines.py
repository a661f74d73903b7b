"""A fact that repeats a line the person wrote leaves that line byte for byte: no source comment is
added to it, and two of the person's lines that a log repeats are never merged by a dream (only a
condense proposal suggests that)."""
from __future__ import annotations

import datetime as dt

from tests.support.dreamkit import write_log

from core.dream.pipeline.consolidator import run_dream
from core.dream.review.apply import apply_proposal

NOW = dt.datetime(2026, 12, 5, 22, tzinfo=dt.timezone.utc)

MEMORY = """# Memory

## Infrastructure
- The vault NAS lives in the office closet
- Quality gate: five checks before each release
- Quality gates are reliable (five checks)
- 部署脚本在 scripts/deploy.sh

## Learnings
- Backups run at 02:00 <!-- id:m-b001 src:memory/2026-11-01.md#L3 -->
"""


def test_a_repeated_plain_line_stays_byte_for_byte_and_near_duplicates_of_the_person_stay(workspace):
    workspace.paths.memory_md.write_bytes(MEMORY.encode("utf-8"))
    write_log(workspace, "2026-12-04", ["The vault NAS lives in the office closet",
                                        "Quality gate: five checks before each release",
                                        "Quality gates are reliable (five checks)",
                                        "部署脚本在 scripts/deploy.sh",
                                        "Backups run at 02:00",
                                        "The printer on the second floor is named kestrel"])
    result = run_dream(workspace, None, now=NOW)
    changes = result.proposal.changes
    assert not [c for c in changes if c.kind != "add" and c.base_line <= 7], changes
    apply_proposal(workspace, result.proposal.id, reviewed=True, now=NOW)
    after = workspace.paths.memory_md.read_text(encoding="utf-8")
    for line in MEMORY.split("\n")[:7]:
        assert line in after.split("\n"), line
    # a line a dream wrote (it carries an id) still collects the new source
    assert "src:memory/2026-12-04.md#L7" in next(line for line in after.split("\n") if "Backups run" in line)
    assert any("kestrel" in line for line in after.split("\n"))
