"""The changes a dream makes to MEMORY.md, and the deterministic code that applies them.

A dream never rewrites the file wholesale. Its result is a list of bullet-level
changes: `add` a bullet to a section, `update` one line into another, `drop` one
line. Applying them is line surgery on whatever text MEMORY.md has now, which is
what makes rebasing safe and applying idempotent:

- a change whose "before" line is there is applied;
- a change whose "after" state is already there counts as applied (a re-run after a
  crash, or the same change made by hand);
- anything else is a conflict: someone changed the bullet this change touches, and
  the proposal is held for review instead of overwriting their edit.

Lines no change names (everything a person or an agent wrote) pass through as they are.
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field, replace

from core.store.memory_md import Bullet, fenced, parse_bullet

_SECTION = re.compile(r"^##\s+(?P<title>.+?)\s*#*\s*$")
KINDS = ("add", "update", "drop")


@dataclass(frozen=True)
class Change:
    id: str                    # "c1", "c2", ... in document order
    kind: str                  # add | update | drop
    op: str                    # what it means: add, update, supersede, merge, sources, expired, budget, ...
    section: str
    bullet_id: str             # the bullet it adds, edits or drops ("" for a dropped bullet without id)
    before: str = ""           # the raw line in the text the dream read ("" for add)
    after: str = ""            # the raw line it becomes ("" for drop)
    reason: str = ""           # why, in words a person can check
    sources: tuple[str, ...] = ()   # provenance of the added or changed bullet
    group: str = ""            # changes that belong together (merge: update + drop) are accepted together
    base_line: int = 0         # 1-based line of `before` in the text the dream read
    flags: tuple[str, ...] = ()     # flags of the resulting bullet (pin, unsourced, ...)

    def to_dict(self) -> dict:
        data = asdict(self)
        data["sources"] = list(self.sources)
        data["flags"] = list(self.flags)
        return data

    @classmethod
    def from_dict(cls, data: dict) -> "Change":
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        known["sources"] = tuple(known.get("sources") or ())
        known["flags"] = tuple(known.get("flags") or ())
        change = cls(**known)
        if change.kind not in KINDS:
            raise ValueError(f"unknown change kind {change.kind!r}")
        return change


@dataclass
class ApplyOutcome:
    text: str
    applied: list[str] = field(default_factory=list)     # change ids applied now
    already: list[str] = field(default_factory=list)     # change ids whose result was already there
    conflicts: list[tuple[str, str]] = field(default_factory=list)   # (change id, why)

    @property
    def clean(self) -> bool:
        return not self.conflicts


def _ids_in(lines: list[str]) -> dict[str, int]:
    found: dict[str, int] = {}
    for index, line in enumerate(lines):
        bullet = parse_bullet(line)
        if bullet is not None and bullet.id and bullet.id not in found:
            found[bullet.id] = index
    return found


def _find_line(lines: list[str], wanted: str, start_hint: int = 0) -> int | None:
    """Index of a line equal to `wanted`, the one nearest `start_hint` when several are.
    A blank line (a condense change moves a section's blank lines too) is only found where it was."""
    if not wanted.strip():
        return start_hint if 0 <= start_hint < len(lines) and lines[start_hint] == wanted else None
    hits = [i for i, line in enumerate(lines) if line == wanted]
    if not hits:
        return None
    return min(hits, key=lambda i: abs(i - start_hint))


def _section_bounds(lines: list[str], title: str) -> tuple[int, int] | None:
    """(heading index, end index exclusive) of `## title`, matched without case."""
    wanted = title.strip().lower()
    start = None
    for index, line in enumerate(lines):
        match = _SECTION.match(line)
        if not match:
            continue
        if start is not None:
            return start, index
        if match.group("title").strip().lower() == wanted:
            start = index
    return (start, len(lines)) if start is not None else None


def _insert_into_section(lines: list[str], title: str, line: str, eol: str = "") -> None:
    """Add `line` to section `title` in the section's own list style: after the last item of its
    (last) list, with that list's indentation and marker, a numbered list continuing its numbering.
    A section without a list gets the line after its last text, a blank line between; a missing
    section is appended at the end of the file."""
    bounds = _section_bounds(lines, title)
    if bounds is None:
        while lines and not lines[-1].strip():
            lines.pop()
        if lines:
            lines.append(eol)
        lines.extend([f"## {title}{eol}", line + eol])
        return
    heading, end = bounds
    place = list_place(lines, heading + 1, end)
    if place is not None:
        index, model = place
        lines.insert(index, styled(line, model) + eol)
        return
    last = heading
    for index in range(heading + 1, end):
        if lines[index].strip():
            last = index
    if last > heading:
        lines.insert(last + 1, eol)
        last += 1
    lines.insert(last + 1, line + eol)


def list_place(lines: list[str], start: int, end: int) -> tuple[int, Bullet] | None:
    """(insertion index, the list item the new one follows) for the last top-level list of lines
    start..end, or None when there is no list there. The item's nested lines and continuation
    lines stay with it."""
    code = {start + i for i in fenced(lines[start:end])}
    items = [(i, b) for i in range(start, end) if i not in code and (b := parse_bullet(lines[i])) is not None]
    if not items:
        return None
    top = min(len(b.indent) for _i, b in items)
    index, model = [(i, b) for i, b in items if len(b.indent) == top][-1]
    after = index + 1
    while after < end:
        text = lines[after].rstrip("\r")
        if not text.strip():
            following = next((lines[j] for j in range(after + 1, end) if lines[j].strip()), "")
            if following[:1].isspace() and len(following) - len(following.lstrip()) > top:
                after += 1          # a blank line inside the item: its nested text goes on below
                continue
            break
        indent = len(text) - len(text.lstrip())
        bullet = parse_bullet(text)
        if indent > top or (bullet is None and not _block_start(text)):
            after += 1              # a nested line, or a lazy continuation of the item's text
            continue
        break
    return after, model


def _block_start(text: str) -> bool:
    stripped = text.lstrip()
    return stripped.startswith(("#", "|", "```", "~~~", ">", "<!--")) or not stripped


def styled(line: str, model: Bullet) -> str:
    """`line` (a "- text <!-- ... -->" bullet) with the marker and indentation of `model`."""
    bullet = parse_bullet(line)
    if bullet is None:
        return line
    mark = model.mark
    if mark[:-1].isdigit():
        mark = f"{int(mark[:-1]) + 1}{mark[-1]}"
    return replace(bullet, indent=model.indent, mark=mark).render()


def apply_changes(text: str, changes: list[Change]) -> ApplyOutcome:
    """Apply `changes` to `text`. Updates and drops go first (they find lines by content),
    then adds in order, so bullets added to one section keep the order the dream gave them.
    A file with CRLF line endings keeps them on the lines a change writes."""
    trailing = text.endswith("\n")
    lines = text.split("\n")
    if trailing:
        lines.pop()
    eol = "\r" if lines and sum(line.endswith("\r") for line in lines) * 2 > len(lines) else ""
    outcome = ApplyOutcome(text="")
    drop_marks: set[int] = set()
    for change in changes:
        if change.kind == "add":
            continue
        index = _find_line(lines, change.before, change.base_line - 1)
        if index is not None and index not in drop_marks:
            if change.kind == "update":
                lines[index] = change.after + ("\r" if lines[index].endswith("\r") and eol else "")
            else:
                drop_marks.add(index)
            outcome.applied.append(change.id)
            continue
        ids = _ids_in(lines)
        if change.kind == "update":
            if _find_line([line.rstrip("\r") for line in lines], change.after.rstrip("\r")) is not None:
                outcome.already.append(change.id)
            else:
                outcome.conflicts.append((change.id, f"bullet {change.bullet_id or change.before!r} was changed "
                                                      f"since the dream read MEMORY.md"))
        else:
            still_there = change.bullet_id and change.bullet_id in ids and ids[change.bullet_id] not in drop_marks
            if still_there:
                outcome.conflicts.append((change.id, f"bullet {change.bullet_id} was edited since the dream read "
                                                      f"MEMORY.md; it is not dropped"))
            else:
                outcome.already.append(change.id)
    lines = [line for index, line in enumerate(lines) if index not in drop_marks]
    ids = set(_ids_in(lines))
    present = {line.rstrip("\r") for line in lines}
    for change in changes:
        if change.kind != "add":
            continue
        if (change.bullet_id and change.bullet_id in ids) or change.after in present:
            outcome.already.append(change.id)
            continue
        _insert_into_section(lines, change.section or "Learnings", change.after, eol)
        ids.add(change.bullet_id)
        present.add(change.after)
        outcome.applied.append(change.id)
    outcome.text = "\n".join(lines) + ("\n" if trailing or not text else "")
    return outcome


def pinned_lines(text: str) -> list[str]:
    """The raw lines of pinned bullets: they must come out of every dream byte-identical."""
    found = []
    for line in text.split("\n"):
        bullet = parse_bullet(line)
        if bullet is not None and bullet.pinned:
            found.append(line)
    return found


def pins_kept(before: str, after: str) -> list[str]:
    """Pinned lines of `before` missing from `after` (empty when every pin is intact)."""
    remaining = after.split("\n")
    missing = []
    for line in pinned_lines(before):
        if line in remaining:
            remaining.remove(line)
        else:
            missing.append(line)
    return missing
