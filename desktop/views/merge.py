"""A three-way merge of lines: the person's edits and an outside change, both kept.

The common ancestor is the text the editor loaded. Each side's edits against it are
line ranges replaced by new lines (difflib). Edits that touch different lines are
both applied; the same edit made on both sides is applied once; two insertions at
the same place are both kept (the outside one first, then the person's). Edits that
change the same lines differently cannot be merged: `merge3` returns None and the
person compares instead. Pure functions, no Qt.
"""
from __future__ import annotations

import difflib
from typing import NamedTuple


class Edit(NamedTuple):
    start: int                 # first base line replaced (0-based)
    end: int                   # one past the last (== start: an insertion)
    lines: tuple[str, ...]
    side: str                  # "theirs" | "mine"


def edits(base: list[str], other: list[str], side: str) -> list[Edit]:
    matcher = difflib.SequenceMatcher(a=base, b=other, autojunk=False)
    return [Edit(i1, i2, tuple(other[j1:j2]), side)
            for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


def merge3(base: str, mine: str, theirs: str) -> str | None:
    """`base` with both sides' edits, or None when they change the same lines differently."""
    if mine == base or mine == theirs:
        return theirs
    if theirs == base:
        return mine
    old = base.split("\n")
    both = sorted(edits(old, theirs.split("\n"), "theirs") + edits(old, mine.split("\n"), "mine"),
                  key=lambda e: (e.start, e.end, e.side != "theirs"))
    kept: list[Edit] = []
    for edit in both:
        previous = kept[-1] if kept else None
        if previous is not None and edit.start < previous.end:
            if (edit.start, edit.end, edit.lines) == (previous.start, previous.end, previous.lines):
                continue          # the same change on both sides
            return None           # both changed these lines, differently
        if (previous is not None and edit.start == previous.start == previous.end == edit.end
                and edit.lines == previous.lines):
            continue              # the same lines inserted at the same place on both sides
        kept.append(edit)
    out: list[str] = []
    at = 0
    for edit in kept:
        out.extend(old[at:edit.start])
        out.extend(edit.lines)
        at = max(at, edit.end)
    out.extend(old[at:])
    return "\n".join(out)
