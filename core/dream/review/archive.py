"""Where an accepted "archive" change's lines go: `memory/archive/MEMORY-<year>.md`, before they leave MEMORY.md.

A condense proposal (core/dream/pipeline/condense.py) moves a stale section out of MEMORY.md as
a group of drops whose `sources` name the archive file. Applying writes the section's lines, as
they were, to the end of that file first and MEMORY.md second, so a crash between the two leaves
the section in both files, never in neither. A block already in the archive file (a re-run after a
crash) is not written twice.
"""
from __future__ import annotations

from core.dream.review.operations import ApplyOutcome, Change

OP = "archive"


def archive_blocks(selected: list[Change], outcome: ApplyOutcome) -> dict[str, list[str]]:
    """{archive path: [block, ...]}: the applied archive changes' lines, each group as one block."""
    applied = set(outcome.applied)
    groups: dict[tuple[str, str], list[Change]] = {}
    for change in selected:
        if change.op == OP and change.id in applied and change.sources:
            groups.setdefault((change.sources[0], change.group), []).append(change)
    blocks: dict[str, list[str]] = {}
    for (path, _group), changes in groups.items():
        lines = [c.before.rstrip("\r") for c in sorted(changes, key=lambda c: c.base_line)]
        blocks.setdefault(path, []).append("\n".join(lines) + "\n")
    return blocks


def archive_sections(ws, proposal, selected: list[Change], outcome: ApplyOutcome) -> None:
    """Append the sections the applied changes move out of MEMORY.md to their archive files."""
    for path, blocks in archive_blocks(selected, outcome).items():
        current = ws.read(path)
        text = current.text
        for block in blocks:
            if block in text:
                continue
            if text and not text.endswith("\n"):
                text += "\n"
            text += ("\n" if text else "") + block
        if text != current.text:
            ws.write_document(path, text, current.hash, reason=f"dream proposal {proposal.id}: archived from MEMORY.md")
