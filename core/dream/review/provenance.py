"""`reverie why`: where a MEMORY.md fact came from, down to the lines and messages.

For a bullet id: the bullet (or, when a dream dropped it, the proposal that did and
why), each source resolved to the daily-log lines or session messages it names,
the dream proposals that added or changed it, and the values accepted updates
replaced (kept in memory/superseded.md with the dates they held), and the flushes that
wrote its daily-log lines with the session messages they read (flush_trace.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from core.dream.review.flush_trace import FlushTrace, trace_lines
from core.dream.review.proposals import list_proposals
from core.dream.review.sources import Resolved, SourceResolver
from core.errors import NotFoundError
from core.store.memory_md import parse_document


@dataclass(frozen=True)
class DreamEdit:
    proposal_id: str
    created: str
    op: str
    kind: str
    reason: str
    decision: str            # applied | already | rejected | "" (still open)


@dataclass
class Provenance:
    bullet_id: str
    text: str
    section: str = ""
    line: int = 0                         # line in MEMORY.md (0 when no longer there)
    flags: tuple[str, ...] = ()
    sources: list[Resolved] = field(default_factory=list)
    edits: list[DreamEdit] = field(default_factory=list)
    was: list = field(default_factory=list)   # SupersededFact: what the bullet said before, oldest first
    flushes: list[FlushTrace] = field(default_factory=list)   # the flushes that wrote its log lines

    @property
    def in_memory(self) -> bool:
        return self.line > 0


def why(ws, bullet_id: str) -> Provenance:
    found = _why(ws, bullet_id)
    seen = set()
    for source in found.sources:
        if not (source.ok and source.lines):
            continue
        for trace in trace_lines(ws, source.path, [n for n, _text in source.lines]):
            key = (trace.when, trace.session_id, trace.lines)
            if key not in seen:
                seen.add(key)
                found.flushes.append(trace)
    return found


def _why(ws, bullet_id: str) -> Provenance:
    bullet_id = bullet_id.strip()
    if bullet_id.endswith("-was"):          # an id copied from memory/superseded.md
        bullet_id = bullet_id[: -len("-was")]
    document = parse_document(ws.read_memory().text)
    found = None
    for section in document.sections:
        for bullet in section.bullets():
            if bullet.id == bullet_id:
                found = (section.title, bullet)
                break
        if found:
            break
    edits = _edits(ws, bullet_id)
    was = ws.superseded(bullet_id)
    resolver = SourceResolver(ws.paths)
    if found is not None:
        title, bullet = found
        return Provenance(bullet_id, bullet.text, title, bullet.line, tuple(sorted(bullet.flags)),
                          [resolver.resolve(s.ref) for s in bullet.sources], edits, was)
    last = _last_known(ws, bullet_id)
    if last is None and not was:
        raise NotFoundError(f"no bullet {bullet_id!r} in MEMORY.md or in any dream proposal "
                            f"(ids look like m-3f2a; they are in the trailing <!-- id:... --> comments)")
    if last is None:
        return Provenance(bullet_id, was[-1].text, "", 0, (), [resolver.resolve(r) for r in was[-1].sources],
                          edits, was)
    text, section, refs, flags = last
    return Provenance(bullet_id, text, section, 0, flags, [resolver.resolve(r) for r in refs], edits, was)


def _edits(ws, bullet_id: str) -> list[DreamEdit]:
    found = []
    for proposal in reversed(list_proposals(ws.paths)):     # oldest first
        for change in proposal.changes:
            if change.bullet_id == bullet_id:
                found.append(DreamEdit(proposal.id, proposal.created, change.op, change.kind, change.reason,
                                       proposal.decisions.get(change.id, "")))
    return found


def _last_known(ws, bullet_id: str):
    """A bullet that is gone from MEMORY.md, as the newest proposal that mentions it saw it."""
    from core.store.memory_md import parse_bullet

    for proposal in list_proposals(ws.paths):
        for change in proposal.changes:
            if change.bullet_id != bullet_id:
                continue
            raw = change.after or change.before
            bullet = parse_bullet(raw)
            if bullet is not None:
                return bullet.text, change.section, tuple(s.ref for s in bullet.sources), tuple(sorted(bullet.flags))
    return None


def format_provenance(p: Provenance, width: int = 160) -> str:
    """The text `reverie why` prints."""
    def cut(text: str) -> str:
        text = " ".join(text.split())
        return text if len(text) <= width else text[: width - 1] + "…"

    flags = f"  [{', '.join(p.flags)}]" if p.flags else ""
    out = [f"{p.bullet_id}  {p.text}{flags}"]
    out.append(f"  MEMORY.md line {p.line}, section {p.section or '(none)'}" if p.in_memory
               else "  no longer in MEMORY.md")
    if not p.sources:
        out.append("  no sources recorded (written by a person, or unsourced)")
    for source in p.sources:
        state = "" if source.ok else "  (unresolved)"
        note = f"  ({source.note})" if source.note and source.ok else ""
        out.append(f"  src {source.ref}{state}{note}")
        if not source.ok and source.note:
            out.append(f"      {source.note}")
        for number, text in source.lines:
            out.append(f"      {source.path}:{number}  {cut(text)}")
        for number, role, content in source.messages:
            label = f"#{number} {role}" if number else role
            out.append(f"      {label}: {cut(content)}")
    for trace in p.flushes:
        extra = (f", {trace.more} more" if trace.more else "") + (f", {trace.missing} no longer in the log"
                                                                   if trace.missing else "")
        out.append(f"  flush {trace.when}: session {trace.session_id or '(none)'} -> {trace.log_path} "
                   f"L{trace.lines[0]}-L{trace.lines[1]} ({len(trace.messages)} message(s){extra})")
        for message_id, role, content in trace.messages:
            out.append(f"      {message_id} {role}: {cut(content)}")
    for old in p.was:
        refs = f"  [{', '.join(old.sources)}]" if old.sources else ""
        out.append(f"  was: {cut(old.text)} ({old.validity}){refs}")
    for edit in p.edits:
        decision = edit.decision or "open"
        out.append(f"  dream {edit.proposal_id} ({edit.created}): {edit.op} [{decision}] {cut(edit.reason)}")
    return "\n".join(out)
