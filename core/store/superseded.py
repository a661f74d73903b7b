"""`memory/superseded.md`: the values an accepted dream update replaced, with the dates they held.

    # Superseded facts

    - Drinks coffee (valid 2026-10-01 to 2026-11-04; replaced by m-3f2a) <!-- id:m-3f2a-was src:memory/2026-10-01.md#L3 -->

An update takes the old value out of MEMORY.md; this file keeps it where search (it is
indexed like every `memory/*.md`) and `reverie why <id>` find it. It is not a daily log
(its name is not a date), so no dream reads it as new material. Only accepted changes
are written, by the apply path; each record is written once, however often an apply is
re-run, so a crashed apply can simply be repeated. Undoing the accept takes its records
back out (`forget_superseded`): the old value is in MEMORY.md again, not superseded.
"""
from __future__ import annotations

from dataclasses import dataclass

from core.store.atomic import atomic_write
from core.store.fileio import read_bytes
from core.store.locks import locked
from core.store.memory_md import parse_bullet
from core.store.paths import WorkspacePaths

HEADING = "# Superseded facts"
SUFFIX = "-was"


@dataclass(frozen=True)
class SupersededFact:
    bullet_id: str          # the MEMORY.md bullet that now says what is true
    text: str               # what it said before
    valid_from: str = ""    # ISO dates, "" when unknown
    valid_until: str = ""
    sources: tuple[str, ...] = ()
    line: int = 0           # 1-based line in memory/superseded.md (0 when not from the file)

    @property
    def validity(self) -> str:
        if self.valid_from and self.valid_until:
            return f"valid {self.valid_from} to {self.valid_until}"
        if self.valid_until:
            return f"valid until {self.valid_until}"
        if self.valid_from:
            return f"valid from {self.valid_from}"
        return "validity unknown"

    def render(self) -> str:
        text = " ".join(self.text.replace("<!--", "<!- -").split())     # one line, no comment inside
        refs = "".join(f" src:{ref}" for ref in self.sources if ref and " " not in ref)
        return f"- {text} ({self.validity}; replaced by {self.bullet_id}) <!-- id:{self.bullet_id}{SUFFIX}{refs} -->"


def superseded_path(paths: WorkspacePaths):
    return paths.memory_dir / "superseded.md"


def _parse_line(raw: str, number: int) -> SupersededFact | None:
    bullet = parse_bullet(raw, number)
    if bullet is None or not bullet.id.endswith(SUFFIX):
        return None
    bullet_id = bullet.id[: -len(SUFFIX)]
    text, valid_from, valid_until = bullet.text, "", ""
    tail = f"; replaced by {bullet_id})"
    if text.endswith(tail) and " (" in text:
        text, _, validity = text[: -len(tail)].rpartition(" (")
        if validity.startswith("valid until "):
            valid_until = validity[len("valid until "):]
        elif validity.startswith("valid from "):
            valid_from = validity[len("valid from "):]
        elif validity.startswith("valid ") and " to " in validity:
            valid_from, _, valid_until = validity[len("valid "):].partition(" to ")
    return SupersededFact(bullet_id, text, valid_from, valid_until, tuple(s.ref for s in bullet.sources), number)


def read_superseded(paths: WorkspacePaths, bullet_id: str | None = None) -> list[SupersededFact]:
    """The records in the file (of one bullet, when `bullet_id` is given), in file order."""
    try:
        text = read_bytes(paths.root, superseded_path(paths)).decode("utf-8", errors="replace")
    except FileNotFoundError:
        return []
    found = []
    for number, raw in enumerate(text.split("\n"), start=1):
        fact = _parse_line(raw, number)
        if fact is not None and (bullet_id is None or fact.bullet_id == bullet_id):
            found.append(fact)
    return found


def _key(fact: SupersededFact) -> tuple[str, str]:
    return fact.bullet_id, " ".join(fact.text.split())


def record_superseded(paths: WorkspacePaths, facts: list[SupersededFact]) -> int:
    """Append the records not yet in the file (same bullet and same old text: already there).
    Returns how many were written; 0 writes nothing."""
    path = superseded_path(paths)
    with locked(paths.locks_dir / "superseded.lock"):
        try:
            text = read_bytes(paths.root, path).decode("utf-8")
        except FileNotFoundError:
            text = ""
        have = {_key(f) for f in read_superseded(paths)}
        lines = []
        for fact in facts:
            key = _key(fact)
            if not fact.bullet_id or not fact.text.strip() or key in have:
                continue
            have.add(key)
            lines.append(fact.render())
        if not lines:
            return 0
        if not text.strip():
            text = f"{HEADING}\n\n"     # no prose under it: every line here is a search hit
        elif not text.endswith("\n"):
            text += "\n"
        atomic_write(path, text + "\n".join(lines) + "\n", root=paths.root)
        return len(lines)


def forget_superseded(paths: WorkspacePaths, facts: list[SupersededFact]) -> int:
    """Take these records (same bullet and same old text) out of the file, every other line kept as it
    is. Returns how many lines went; 0 writes nothing."""
    path = superseded_path(paths)
    gone = {_key(fact) for fact in facts}
    with locked(paths.locks_dir / "superseded.lock"):
        try:
            text = read_bytes(paths.root, path).decode("utf-8")
        except FileNotFoundError:
            return 0
        lines = text.split("\n")
        kept = [raw for number, raw in enumerate(lines, start=1)
                if (fact := _parse_line(raw, number)) is None or _key(fact) not in gone]
        if len(kept) == len(lines):
            return 0
        atomic_write(path, "\n".join(kept), root=paths.root)
        return len(lines) - len(kept)
