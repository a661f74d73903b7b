"""The review shows the patch as the person's own MEMORY.md (tables, numbered lists, CRLF kept) with
the lines the dream adds marked, not a re-rendered file."""
from __future__ import annotations

from desktop.views.diff_view import ADDED, EQUAL

from tests.support.blocking_llm import dream_in_view
from tests.support.dreamkit import write_log

PERSON = ("# Memory\r\n\r\n## Accounts\r\n\r\n| service | account |\r\n|---|---|\r\n| mail | ops@example.org |\r\n"
          "\r\n## Lessons\r\n\r\n1. Run the migration on a copy first\r\n2. Staging restarts at 04:00 UTC\r\n")


def test_the_review_shows_the_persons_file_with_the_added_lines_marked(qtbot, workspace, make_controller):
    ws = workspace
    ws.paths.memory_md.write_bytes(PERSON.encode("utf-8"))
    write_log(ws, "2026-12-04", ["Jonas covers on-call for Orchard on weekends",
                                 "The billing service moved to the Frankfurt region"])
    view = dream_in_view(qtbot, make_controller, ws)
    alignment = view.review.diff.alignment
    person = PERSON.replace("\r\n", "\n").split("\n")
    assert [line for line, kind in zip(alignment.left, alignment.left_kinds) if kind == EQUAL] == person
    right = [line for line, kind in zip(alignment.right, alignment.right_kinds) if kind == EQUAL]
    assert right == person, "every line of the person's file is shown as it is"
    added = [line for line, kind in zip(alignment.right, alignment.right_kinds) if kind == ADDED]
    assert [line.split(" <!--")[0] for line in added] == ["3. Jonas covers on-call for Orchard on weekends",
                                                          "4. The billing service moved to the Frankfurt region"]
    assert view.review.diff.right.toPlainText().count("\r") == 0
