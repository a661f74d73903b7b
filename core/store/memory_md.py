"""The MEMORY.md format: `##` sections, one fact per list item, provenance in a trailing comment.

    ## Preferences
    - Prefers tea over coffee <!-- id:m-3f2a src:memory/2026-11-30.md#L12-L14 pin -->

A list item is any markdown list line: "-", "*", "+" or numbered ("1." / "1)"), at any
indentation. Everything else in the file (tables, prose, code, front matter) is the
person's and is never re-rendered.

The comment carries `id:<id>`, any number of `src:<ref>` entries (a workspace path
with an optional `#Lstart-Lend` line range, or `session:<id>#<message>`), and bare
flags (`pin`, `superseded`, `unsourced`). Comments are stripped before MEMORY.md is
put into a prompt. Parsing is lossless: render(parse(text)) == text, so the
editor, the dream and the index all agree on line numbers.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field, replace

_COMMENT = re.compile(r"\s*<!--(?P<body>.*?)-->\s*$")
_ANY_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
# A list item: "-", "*", "+" or a number ("1." / "1)"), as people write MEMORY.md.
_BULLET = re.compile(r"^(?P<indent>\s*)(?P<mark>[-*+]|\d{1,4}[.)])\s+(?P<rest>.*)$")
_SECTION = re.compile(r"^##\s+(?P<title>.+?)\s*#*\s*$")
_RANGE = re.compile(r"^(?P<path>[^#]+)(?:#L(?P<start>\d+)(?:-L?(?P<end>\d+))?)?$")


@dataclass(frozen=True)
class Source:
    """Where a fact came from: a file range or a session message."""

    ref: str                     # as written: "memory/2026-11-30.md#L12-L14" or "session:abc#17"

    @property
    def is_session(self) -> bool:
        return self.ref.startswith("session:")

    @property
    def path(self) -> str:
        if self.is_session:
            return "sessions/" + self.ref[len("session:"):].split("#", 1)[0] + ".log.jsonl"
        match = _RANGE.match(self.ref)
        return match.group("path") if match else self.ref

    @property
    def lines(self) -> tuple[int, int] | None:
        if self.is_session:
            _, _, msg = self.ref.partition("#")
            return (int(msg), int(msg)) if msg.isdigit() else None
        match = _RANGE.match(self.ref)
        if not match or not match.group("start"):
            return None
        start = int(match.group("start"))
        return start, int(match.group("end") or start)


@dataclass(frozen=True)
class Bullet:
    text: str                              # the fact, without marker or comment
    id: str = ""
    sources: tuple[Source, ...] = ()
    flags: frozenset[str] = frozenset()
    line: int = 0                          # 1-based line in the file (0 when not from a file)
    indent: str = ""
    mark: str = "-"                        # "-", "*", "+", or "3." / "3)" in a numbered list

    @property
    def pinned(self) -> bool:
        return "pin" in self.flags

    def comment(self) -> str:
        parts = []
        if self.id:
            parts.append(f"id:{self.id}")
        parts.extend(f"src:{s.ref}" for s in self.sources)
        parts.extend(sorted(self.flags))
        return f" <!-- {' '.join(parts)} -->" if parts else ""

    def render(self) -> str:
        return f"{self.indent}{self.mark} {self.text}{self.comment()}"


def parse_bullet(line: str, line_no: int = 0) -> Bullet | None:
    """A Bullet for a markdown list line, or None for any other line."""
    match = _BULLET.match(line.rstrip("\n"))
    if not match:
        return None
    rest = match.group("rest")
    ident, sources, flags = "", [], set()
    comment = _COMMENT.search(rest)
    if comment:
        rest = rest[: comment.start()]
        for token in comment.group("body").split():
            if token.startswith("id:"):
                ident = token[3:]
            elif token.startswith("src:"):
                sources.append(Source(token[4:]))
            else:
                flags.add(token)
    return Bullet(text=rest.strip(), id=ident, sources=tuple(sources), flags=frozenset(flags),
                  line=line_no, indent=match.group("indent"), mark=match.group("mark"))


def fenced(lines: list[str]) -> set[int]:
    """Indexes of the lines inside fenced code blocks (``` or ~~~), the fences included."""
    inside, fence, found = False, "", set()
    for index, line in enumerate(lines):
        stripped = line.strip()
        if not inside and stripped.startswith(("```", "~~~")):
            inside, fence = True, stripped[:3]
            found.add(index)
        elif inside:
            found.add(index)
            if stripped.startswith(fence):
                inside = False
    return found


@dataclass
class Section:
    title: str                             # "" for the preamble before the first ## heading
    heading_line: int                      # 1-based, 0 for the preamble
    lines: list[str] = field(default_factory=list)   # raw lines after the heading
    first_line: int = 1                    # 1-based line number of lines[0]

    def bullets(self) -> list[Bullet]:
        found = []
        code = fenced(self.lines)
        for offset, raw in enumerate(self.lines):
            if offset in code:
                continue          # a list line inside a code block is code, not a fact
            bullet = parse_bullet(raw, self.first_line + offset)
            if bullet is not None:
                found.append(bullet)
        return found


@dataclass
class MemoryDocument:
    sections: list[Section]
    trailing_newline: bool = True

    def bullets(self) -> list[Bullet]:
        return [b for s in self.sections for b in s.bullets()]

    def section(self, title: str) -> Section | None:
        wanted = title.strip().lower()
        return next((s for s in self.sections if s.title.lower() == wanted), None)

    def find(self, bullet_id: str) -> Bullet | None:
        return next((b for b in self.bullets() if b.id == bullet_id), None)

    def render(self) -> str:
        out: list[str] = []
        for section in self.sections:
            if section.heading_line:
                out.append(f"## {section.title}")
            out.extend(section.lines)
        text = "\n".join(out)
        return text + "\n" if self.trailing_newline and out else text


def parse_document(text: str) -> MemoryDocument:
    lines = text.split("\n")
    trailing = text.endswith("\n")
    if trailing:
        lines = lines[:-1]
    sections = [Section(title="", heading_line=0, first_line=1)]
    for number, raw in enumerate(lines, start=1):
        match = _SECTION.match(raw)
        if match:
            sections.append(Section(title=match.group("title"), heading_line=number, first_line=number + 1))
        else:
            sections[-1].lines.append(raw)
    if not sections[0].lines:
        sections.pop(0)
    return MemoryDocument(sections=sections, trailing_newline=trailing)


def strip_comments(text: str) -> str:
    """MEMORY.md as it goes into a prompt: provenance comments removed, lines kept."""
    return "\n".join(line.rstrip() for line in _ANY_COMMENT.sub("", text).split("\n"))


def bullet_id_for(text: str, taken: set[str] | frozenset[str] = frozenset()) -> str:
    """A short stable id derived from the fact's text, unique among `taken`."""
    digest = hashlib.sha1(" ".join(text.lower().split()).encode("utf-8")).hexdigest()
    for width in range(4, len(digest) + 1):
        candidate = f"m-{digest[:width]}"
        if candidate not in taken:
            return candidate
    raise ValueError("could not allocate a bullet id")  # unreachable: 40 hex digits


def set_flag(text: str, line_no: int, flag: str, on: bool) -> str:
    """MEMORY.md text with `flag` set or cleared on the bullet at `line_no` (1-based)."""
    lines = text.split("\n")
    if not 1 <= line_no <= len(lines):
        raise ValueError(f"line {line_no} is outside the file ({len(lines)} lines)")
    bullet = parse_bullet(lines[line_no - 1], line_no)
    if bullet is None:
        raise ValueError(f"line {line_no} is not a bullet")
    flags = set(bullet.flags)
    (flags.add if on else flags.discard)(flag)
    if on and not bullet.id:
        taken = {b.id for b in parse_document(text).bullets()}
        bullet = replace(bullet, id=bullet_id_for(bullet.text, taken))
    lines[line_no - 1] = replace(bullet, flags=frozenset(flags)).render()
    return "\n".join(lines)
