"""MEMORY.md as a dream edits it: the bullets it read, what happened to each, and why.

Stages change entries (add, update, mark superseded, drop) and never touch text;
`changes()` turns the net result into bullet-level Changes against the text the
dream read, and `render()` applies them with the same code that applies a proposal.
Pinned bullets are read-only: a dream keeps them byte-identical. Nested bullets and
bullets with nested or continuation lines are never dropped (their neighbours would lose
their subject) but are facts like any other: a new fact can repeat one, or replace its
line (the nested lines stay). List items of any style ("-", "*", "+", "1.") are bullets.
Every drop carries a reason.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from core.dream.review.operations import Change, apply_changes
from core.store.memory_md import Bullet, Source, bullet_id_for, parse_document, strip_comments
from core.tokens import count_tokens

# A daily log's date: memory/2026-02-03.md, hook-named memory/2026-02-03-slug.md or -0327.md, nested too.
_DATE_IN_REF = re.compile(r"(?:^|/)(\d{4}-\d{2}-\d{2})(?:-[^/#]*)?\.md")
MAX_SOURCES = 8


def source_days(refs) -> set[str]:
    """The dates of the daily logs among `refs`."""
    return {m.group(1) for ref in refs for m in [_DATE_IN_REF.search(ref)] if m}


def source_day(refs) -> str:
    """The newest date among daily-log refs ("" when none names a date)."""
    days = source_days(refs)
    return max(days) if days else ""


@dataclass
class Entry:
    key: str
    section: str
    bullet: Bullet
    base_raw: str = ""            # the line as read ("" for a bullet this dream adds)
    base_line: int = 0
    editable: bool = True         # may be dropped or merged away (not pinned, not nested, no nested lines)
    is_new: bool = False
    modified: bool = False
    dropped: bool = False
    op: str = ""
    reasons: list[str] = field(default_factory=list)
    group: str = ""
    superseded_by: str = ""
    base_provenance: bool = False  # the line as read carried a dream's comment (an id or sources)

    @property
    def text(self) -> str:
        return self.bullet.text

    @property
    def refs(self) -> tuple[str, ...]:
        return tuple(s.ref for s in self.bullet.sources)

    @property
    def day(self) -> str:
        return source_day(self.refs)

    @property
    def persons_line(self) -> bool:
        """A line the person wrote, with no comment of a dream's: a dream may replace it or, when a
        condense proposal says so, merge it, but never adds a comment to it (that would change their
        line while saying the same)."""
        return not self.is_new and not self.base_provenance

    @property
    def replaceable(self) -> bool:
        """A line a dream may rewrite in place (every bullet but a pinned one)."""
        return not self.bullet.pinned

    @property
    def reason(self) -> str:
        return "; ".join(dict.fromkeys(self.reasons))


class ReadOnlyBullet(ValueError):
    """A stage tried to change a pinned (or otherwise read-only) bullet."""


class WorkingMemory:
    def __init__(self, text: str):
        self.base_text = text
        lines = text.split("\n")
        document = parse_document(text)
        self.sections = [s.title for s in document.sections if s.heading_line]
        self.entries: list[Entry] = []
        self._keys: set[str] = set()
        for section in document.sections:
            for bullet in section.bullets():
                raw = lines[bullet.line - 1]
                following = lines[bullet.line] if bullet.line < len(lines) else ""
                has_children = bool(following.strip()) and following[:1].isspace()
                key = bullet.id or f"L{bullet.line}"
                if key in self._keys:
                    key = f"{key}@L{bullet.line}"
                self._keys.add(key)
                self.entries.append(Entry(key=key, section=section.title, bullet=bullet, base_raw=raw,
                                          base_line=bullet.line,
                                          base_provenance=bool(bullet.id or bullet.sources),
                                          editable=not bullet.pinned and not bullet.indent and not has_children))
        self.base_count = len(self.entries)
        self._version = 0
        self._rendered: tuple[int, str] | None = None

    # ----- reading ------------------------------------------------------------------------
    def live(self) -> list[Entry]:
        return [e for e in self.entries if not e.dropped]

    def get(self, key: str) -> Entry | None:
        return next((e for e in self.entries if e.key == key), None)

    def by_id(self, bullet_id: str) -> Entry | None:
        return next((e for e in self.entries if e.bullet.id == bullet_id and not e.dropped), None)

    def taken_ids(self) -> set[str]:
        return {e.bullet.id for e in self.entries if e.bullet.id}

    def section_title(self, wanted: str) -> str:
        """An existing section's title for `wanted` (case-insensitive), or `wanted` itself."""
        for title in self.sections:
            if title.lower() == wanted.strip().lower():
                return title
        return wanted.strip() or "Learnings"

    # ----- editing ------------------------------------------------------------------------
    def add(self, section: str, text: str, sources: tuple[str, ...], *, op: str = "add", reason: str = "",
            flags: tuple[str, ...] = (), group: str = "") -> Entry:
        title = self.section_title(section)
        ident = bullet_id_for(text, self.taken_ids())
        bullet = Bullet(text=text, id=ident, sources=tuple(Source(r) for r in _cap(sources)),
                        flags=frozenset(flags))
        entry = Entry(key=ident, section=title, bullet=bullet, is_new=True, modified=True, op=op,
                      reasons=[reason] if reason else [], group=group)
        self.entries.append(entry)
        self._version += 1
        if title not in self.sections:
            self.sections.append(title)
        return entry

    def update(self, entry: Entry, *, text: str | None = None, add_sources: tuple[str, ...] = (),
               add_flags: tuple[str, ...] = (), op: str = "update", reason: str = "", group: str = "") -> bool:
        """Change a bullet's text, sources or flags. False when nothing would change."""
        self._check(entry, dropping=False)
        bullet = entry.bullet
        refs = _cap(tuple(dict.fromkeys(tuple(s.ref for s in bullet.sources) + tuple(add_sources))))
        flags = frozenset(bullet.flags | set(add_flags))
        new_text = text if text is not None else bullet.text
        if new_text == bullet.text and refs == tuple(s.ref for s in bullet.sources) and flags == bullet.flags:
            return False
        if new_text == entry.text and entry.persons_line and not entry.modified:
            return False      # the same fact again: the person's line stays byte for byte (the log keeps the source)
        ident = bullet.id or bullet_id_for(new_text, self.taken_ids())
        entry.bullet = replace(bullet, text=new_text, id=ident, sources=tuple(Source(r) for r in refs), flags=flags)
        entry.modified = True
        self._version += 1
        entry.op = op if entry.op in ("", "sources") or entry.is_new else entry.op
        if reason:
            entry.reasons.append(reason)
        if group:
            entry.group = entry.group or group
        return True

    def drop(self, entry: Entry, *, op: str, reason: str, group: str = "") -> None:
        self._check(entry)
        if not reason:
            raise ValueError("a dream never drops a bullet without a reason")
        entry.dropped = True
        self._version += 1
        entry.op = op
        entry.reasons.append(reason)
        if group:
            entry.group = entry.group or group

    def _check(self, entry: Entry, dropping: bool = True) -> None:
        if entry.bullet.pinned or (dropping and not entry.editable):
            why = "pinned" if entry.bullet.pinned else "nested or multi-line"
            raise ReadOnlyBullet(f"bullet {entry.key} is {why}; a dream keeps it as it is")

    # ----- result ---------------------------------------------------------------------------
    def changes(self) -> list[Change]:
        out: list[Change] = []
        for entry in self.entries:
            if entry.is_new and entry.dropped:
                continue          # added and superseded within one dream: never existed
            if entry.is_new:
                kind, before, after = "add", "", entry.bullet.render()
            elif entry.dropped:
                kind, before, after = "drop", entry.base_raw, ""
            elif entry.modified:
                kind, before, after = "update", entry.base_raw, entry.bullet.render()
            else:
                continue
            out.append(Change(id=f"c{len(out) + 1}", kind=kind, op=entry.op or kind, section=entry.section,
                              bullet_id=entry.bullet.id, before=before, after=after, reason=entry.reason,
                              sources=entry.refs, group=entry.group, base_line=entry.base_line,
                              flags=tuple(sorted(entry.bullet.flags))))
        return out

    def render(self) -> str:
        if self._rendered is None or self._rendered[0] != self._version:
            self._rendered = (self._version, apply_changes(self.base_text, self.changes()).text)
        return self._rendered[1]

    def tokens(self) -> int:
        """MEMORY.md's size as the model sees it (provenance comments stripped)."""
        return count_tokens(strip_comments(self.render()))

    def dropped_base(self) -> list[Entry]:
        return [e for e in self.entries if e.dropped and not e.is_new]


def _cap(refs: tuple[str, ...]) -> tuple[str, ...]:
    """At most MAX_SOURCES refs: the first (where the fact started) and the newest."""
    refs = tuple(dict.fromkeys(refs))
    if len(refs) <= MAX_SOURCES:
        return refs
    return refs[:1] + refs[-(MAX_SOURCES - 1):]
