"""Condense: how a MEMORY.md over its budget is brought back under it, as a proposal a person reviews.

The budget (`memory.memory_md_chars_hint` characters, `memory.memory_md_tokens` tokens) is never met
by cutting what the person curated. When MEMORY.md, with this dream's changes, is over it, the dream
writes a second proposal, always held, of two kinds of change, each with its reason:
- merge: of two of the person's bullets that say the same (same words, or embeddings at the
  near-duplicate threshold with the same numbers and no contradiction), the later one is dropped;
- archive: a stale section (the newest date it mentions is the oldest of all sections, and more than
  `STALE_DAYS` ago; none of its bullets pinned) moves, heading, text and all, to
  `memory/archive/MEMORY-<year of that date>.md`. Applying writes the archive file first
  (core/dream/review/apply.py), so no line is ever only in neither file.
Sections are proposed oldest first until the estimate is back under budget; a section with no date
is never called stale.
"""
from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from core.dream.judgment.relations import contradicts
from core.dream.review.archive import OP as ARCHIVE
from core.dream.review.operations import Change
from core.dream.review.proposals import HELD, OPEN, Proposal, list_proposals, new_proposal_id
from core.dream.pipeline.working import WorkingMemory
from core.store.memory_md import parse_bullet, strip_comments

KIND = "condense"
MERGE = "condense-merge"
STALE_DAYS = 90
_HEADING = re.compile(r"^##\s+(?P<title>.+?)\s*#*\s*$")
_DATES = (re.compile(r"(?<!\d)(20\d\d)-(\d\d)-(\d\d)(?!\d)"), re.compile(r"(?<!\d)(20\d\d)/(\d{1,2})/(\d{1,2})(?!\d)"),
          re.compile(r"(20\d\d)年(\d{1,2})月(\d{1,2})日"))


@dataclass(frozen=True)
class Span:
    title: str
    start: int              # 0-based index of the `## ` heading
    end: int                # exclusive, trailing blank lines left out
    newest: str             # newest ISO date mentioned ("" when none)
    pinned: bool


def archive_path(year: str) -> str:
    return f"memory/archive/MEMORY-{year}.md"


def newest_date(text: str) -> str:
    found = []
    for pattern in _DATES:
        for match in pattern.finditer(text):
            try:
                found.append(dt.date(int(match.group(1)), int(match.group(2)), int(match.group(3))).isoformat())
            except ValueError:
                continue
    return max(found) if found else ""


def section_spans(lines: list[str]) -> list[Span]:
    heads = [i for i, line in enumerate(lines) if _HEADING.match(line.rstrip("\r"))]
    spans = []
    for n, start in enumerate(heads):
        end = heads[n + 1] if n + 1 < len(heads) else len(lines)
        while end > start + 1 and not lines[end - 1].strip():
            end -= 1
        body = lines[start:end]
        pinned = any((b := parse_bullet(line)) is not None and b.pinned for line in body)
        spans.append(Span(_HEADING.match(lines[start].rstrip("\r")).group("title"), start, end,
                          newest_date("\n".join(body)), pinned))
    return spans


def _size(lines) -> int:
    return sum(len(strip_comments(line.rstrip("\r"))) + 1 for line in lines)


def suggest(ctx) -> list[Change]:
    """The condense changes against the text the dream read, or [] when MEMORY.md stays within budget
    (or a condense proposal is already open: one question at a time)."""
    from core.tokens import count_tokens

    memory_settings = ctx.settings.memory
    after = strip_comments(ctx.memory.render())
    chars_over = len(after) - memory_settings.memory_md_chars_hint if memory_settings.memory_md_chars_hint else 0
    tokens = count_tokens(after)
    if chars_over <= 0 and tokens <= memory_settings.memory_md_tokens:
        return []
    if open_condense(ctx.paths):
        ctx.notes.append("MEMORY.md is over its budget; a condense proposal is already open for review")
        return []
    # Tokens and characters are both budgets; the share over the tokens one, in characters.
    over = max(chars_over, int(len(after) * (1 - memory_settings.memory_md_tokens / max(tokens, 1))))
    base = ctx.snapshot.text
    changes = merges(base, ctx.similarity)
    saved = sum(len(strip_comments(c.before)) + 1 for c in changes)
    lines = base.split("\n")
    cutoff = (ctx.now - dt.timedelta(days=STALE_DAYS)).date().isoformat()
    merged = {c.base_line for c in changes}
    stale = sorted((s for s in section_spans(lines) if s.newest and s.newest < cutoff and not s.pinned),
                   key=lambda s: (s.newest, s.start))
    for span in stale:
        if saved >= over:
            break
        if any(span.start < line <= span.end for line in merged):
            continue
        year = span.newest[:4]
        group = f"g-archive-{span.start + 1}"
        reason = (f"section \"{span.title}\" is stale: the newest date it mentions is {span.newest}; "
                  f"MEMORY.md is over its budget, so it moves to {archive_path(year)} (kept there as it is)")
        for index in range(span.start, span.end):
            changes.append(Change(id="", kind="drop", op=ARCHIVE, section=span.title, bullet_id="",
                                  before=lines[index], reason=reason, sources=(archive_path(year),), group=group,
                                  base_line=index + 1))
        saved += _size(lines[span.start:span.end])
    if not changes:
        ctx.notes.append(f"MEMORY.md is over its budget; no repeated line and no section older than {STALE_DAYS} "
                         f"days was found to condense, so nothing is proposed for it")
    return [Change(**{**c.to_dict(), "id": f"c{n}", "sources": tuple(c.sources), "flags": tuple(c.flags)})
            for n, c in enumerate(sorted(changes, key=lambda c: c.base_line), start=1)]


def merges(base: str, similarity) -> list[Change]:
    """Drops of the person's bullets that repeat an earlier one (the earlier stays as it is)."""
    memory = WorkingMemory(base)
    live = [e for e in memory.live() if e.editable]
    for first, second, score in similarity.duplicate_pairs([e.text for e in live], semantic=True):
        keep, gone = live[first], live[second]
        if keep.dropped or gone.dropped or (score < 0.9999 and contradicts(keep.text, gone.text)):
            continue
        how = "same text" if score >= 0.9999 else f"cosine {score:.2f}"
        memory.drop(gone, op=MERGE, reason=f"says the same as line {keep.base_line} (\"{keep.text[:80]}\", {how}); "
                                           f"MEMORY.md is over its budget")
    return memory.changes()


def open_condense(paths) -> bool:
    return any(p.summary.get("kind") == KIND for p in list_proposals(paths, OPEN))


def condense_proposal(base_text: str, base_hash: str, changes: list[Change], moment: dt.datetime,
                      budget: int) -> Proposal:
    """The condense changes as a proposal, always held: nothing leaves MEMORY.md until a person accepts."""
    from core.dream.review.operations import apply_changes

    new_text = apply_changes(base_text, changes).text
    archived = sorted({c.sources[0] for c in changes if c.op == ARCHIVE})
    merged = sum(1 for c in changes if c.op == MERGE)
    sections = len({c.group for c in changes if c.op == ARCHIVE})
    what = ", ".join(x for x in (f"{merged} near-duplicate line(s) merged" if merged else "",
                                 f"{sections} stale section(s) moved to {', '.join(archived)}" if sections else "") if x)
    return Proposal(id=new_proposal_id(moment, "condense\n" + new_text), created=moment.isoformat(timespec="seconds"),
                    status=HELD, base_hash=base_hash, base_text=base_text, new_text=new_text, changes=changes,
                    hold_reasons=[f"condense: MEMORY.md is over its {budget:,}-character budget; {what}; nothing "
                                  f"moves until a person accepts"],
                    summary={"kind": KIND, "archive": archived})
