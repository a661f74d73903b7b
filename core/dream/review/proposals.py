"""Proposals: what a dream wants to change in MEMORY.md, kept for review in `.reverie/proposals/`.

A dream never writes MEMORY.md. It writes `<id>.json` here: the text it read (and its
hash), the new text, a unified diff, and the bullet-level changes with the sources of
every added or changed bullet and the reason for every dropped one. Guards decide
whether it is safe to apply without a person looking: pinned bullets intact, at most
25% of the existing bullets dropped, every new bullet sourced, the budget not crossed.
A proposal that fails one is `held`; a person can still accept it (all of it, or some
sections or hunks) or reject it. Applying lives in apply.py.
"""
from __future__ import annotations

import datetime as dt
import difflib
import hashlib
from dataclasses import dataclass, field

from core.dream.review.operations import Change, pins_kept
from core.errors import FormatError, NotFoundError
from core.store.memory_md import strip_comments
from core.store.paths import WorkspacePaths
from core.store.private import load_proposal_record, proposal_ids, save_proposal_record
from core.tokens import count_tokens

PENDING, HELD, APPLIED, REJECTED = "pending", "held", "applied", "rejected"
OPEN = (PENDING, HELD)


@dataclass(frozen=True)
class Hunk:
    id: str                       # "h1", "h2", ...
    section: str
    base_start: int               # 1-based first line in the text the dream read (0: insertion)
    base_lines: tuple[str, ...]
    new_start: int
    new_lines: tuple[str, ...]
    change_ids: tuple[str, ...]


@dataclass
class Proposal:
    id: str
    created: str
    status: str
    base_hash: str
    base_text: str
    new_text: str
    changes: list[Change]
    hold_reasons: list[str] = field(default_factory=list)
    decisions: dict[str, str] = field(default_factory=dict)   # change id -> applied | already | rejected
    summary: dict = field(default_factory=dict)
    applied: list[dict] = field(default_factory=list)          # one record per apply

    @property
    def diff(self) -> str:
        return unified_diff(self.base_text, self.new_text, self.id)

    @property
    def is_open(self) -> bool:
        return self.status in OPEN

    def change(self, change_id: str) -> Change:
        for change in self.changes:
            if change.id == change_id:
                return change
        raise NotFoundError(f"proposal {self.id} has no change {change_id!r} "
                            f"(it has {', '.join(c.id for c in self.changes) or 'none'})")

    def undecided(self) -> list[Change]:
        return [c for c in self.changes if c.id not in self.decisions]

    def sections(self) -> list[str]:
        return list(dict.fromkeys(c.section for c in self.changes))

    def hunks(self) -> list[Hunk]:
        return diff_hunks(self.base_text, self.new_text, self.changes)

    def select(self, *, change_ids=(), sections=(), hunk_ids=()) -> list[Change]:
        """Undecided changes named by id, section or hunk; a change brings its whole group
        (a merge's update and drop, a supersede's add and drop) so no half of one is applied."""
        wanted: set[str] = set(change_ids)
        for cid in change_ids:
            self.change(cid)
        lowered = {s.strip().lower() for s in sections}
        wanted |= {c.id for c in self.changes if c.section.lower() in lowered}
        if lowered and not any(c.section.lower() in lowered for c in self.changes):
            raise NotFoundError(f"proposal {self.id} changes no section named {', '.join(sections)} "
                                f"(it changes {', '.join(self.sections()) or 'nothing'})")
        hunks = {h.id: h for h in self.hunks()}
        for hid in hunk_ids:
            if hid not in hunks:
                raise NotFoundError(f"proposal {self.id} has no hunk {hid!r} (it has {', '.join(hunks) or 'none'})")
            wanted |= set(hunks[hid].change_ids)
        if not (change_ids or sections or hunk_ids):
            wanted = {c.id for c in self.changes}
        groups = {c.group for c in self.changes if c.id in wanted and c.group}
        wanted |= {c.id for c in self.changes if c.group and c.group in groups}
        return [c for c in self.changes if c.id in wanted and c.id not in self.decisions]

    def to_dict(self) -> dict:
        return {"id": self.id, "created": self.created, "status": self.status, "base_hash": self.base_hash,
                "hold_reasons": self.hold_reasons, "decisions": self.decisions, "summary": self.summary,
                "applied": self.applied, "changes": [c.to_dict() for c in self.changes],
                "diff": self.diff, "base_text": self.base_text, "new_text": self.new_text}

    @classmethod
    def from_dict(cls, data: dict) -> "Proposal":
        return cls(id=str(data["id"]), created=str(data["created"]), status=str(data["status"]),
                   base_hash=str(data["base_hash"]), base_text=str(data["base_text"]),
                   new_text=str(data["new_text"]), changes=[Change.from_dict(c) for c in data["changes"]],
                   hold_reasons=list(data.get("hold_reasons") or []), decisions=dict(data.get("decisions") or {}),
                   summary=dict(data.get("summary") or {}), applied=list(data.get("applied") or []))


def unified_diff(old: str, new: str, label: str = "") -> str:
    return "".join(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                        fromfile="MEMORY.md (read by the dream)",
                                        tofile=f"MEMORY.md (proposal {label})".replace(" ()", "")))


def diff_hunks(base: str, new: str, changes: list[Change]) -> list[Hunk]:
    old_lines, new_lines = base.split("\n"), new.split("\n")
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    hunks: list[Hunk] = []
    claimed: set[str] = set()
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        ids = []
        for change in changes:
            if change.id in claimed:
                continue
            if change.kind in ("update", "drop") and i1 < change.base_line <= i2:
                ids.append(change.id)
            elif change.kind == "add" and change.after in new_lines[j1:j2]:
                ids.append(change.id)
        claimed.update(ids)
        section = next((c.section for c in changes if c.id in ids), _section_at(old_lines, i1))
        hunks.append(Hunk(f"h{len(hunks) + 1}", section, i1 + 1 if i2 > i1 else 0, tuple(old_lines[i1:i2]),
                          j1 + 1, tuple(new_lines[j1:j2]), tuple(ids)))
    for change in changes:   # a change the diff folded into another hunk's lines still gets one
        if change.id not in claimed:
            hunks.append(Hunk(f"h{len(hunks) + 1}", change.section, change.base_line, (change.before,) if
                              change.before else (), 0, (change.after,) if change.after else (), (change.id,)))
    return hunks


def _section_at(lines: list[str], index: int) -> str:
    for line in reversed(lines[: index + 1]):
        if line.startswith("## "):
            return line[3:].strip()
    return ""


def not_proposed_line(summary: dict) -> str:
    """"12 more candidates, not proposed: budget" for a dream that found more new facts than
    `dream.max_new_facts` ("" when it proposed them all)."""
    left = summary.get("not_proposed") or []
    return f"{len(left)} more candidates, not proposed: budget" if left else ""


def held_warning(proposal: Proposal, changes: list[Change]) -> str:
    """One line saying why a held proposal waits and what applying `changes` of it would take out of
    MEMORY.md: what a person is asked before a held proposal is applied on purpose."""
    drops = [c for c in changes if c.kind == "drop"]
    replaced = [c for c in changes if c.kind == "update" and c.op in ("replace", "update")]
    taken = []
    if drops:
        shown = "; ".join(f"\"{_short(strip_comments(c.before))}\"" for c in drops[:3])
        taken.append(f"it drops {len(drops)} line(s) ({shown}{'; ...' if len(drops) > 3 else ''})")
    if replaced:
        taken.append(f"it replaces {len(replaced)} line(s)")
    what = ", ".join(taken) or "it drops nothing"
    return f"proposal {proposal.id} is held for review ({'; '.join(proposal.hold_reasons) or 'held'}); {what}"


def _short(text: str, width: int = 60) -> str:
    text = " ".join(text.split()).lstrip("-*+ ")
    return text if len(text) <= width else text[: width - 1] + "…"


# ----- guards ------------------------------------------------------------------------------------
def guard_reasons(base_text: str, new_text: str, changes: list[Change], base_count: int, *,
                  max_drop_fraction: float, budget_tokens: int) -> list[str]:
    """Why this proposal must wait for a person (empty: safe to apply on its own)."""
    reasons = []
    missing = pins_kept(base_text, new_text)
    if missing:
        reasons.append(f"{len(missing)} pinned bullet(s) would change; pinned bullets are kept as they are")
    drops = sum(1 for c in changes if c.kind == "drop")
    if base_count and drops / base_count > max_drop_fraction:
        reasons.append(f"it drops {drops} of {base_count} existing bullets ({drops / base_count:.0%}), "
                       f"more than {max_drop_fraction:.0%}")
    unsourced = [c.bullet_id for c in changes if c.kind != "drop" and "unsourced" in c.flags]
    if unsourced:
        reasons.append(f"{len(unsourced)} bullet(s) have no resolvable source: {', '.join(unsourced)}")
    # Only a proposal that takes MEMORY.md over its budget is held for it; one already over is
    # brought back by the condense proposal (core/dream/pipeline/condense.py), not by holding new facts.
    tokens = count_tokens(strip_comments(new_text))
    if tokens > budget_tokens >= count_tokens(strip_comments(base_text)):
        reasons.append(f"MEMORY.md would be {tokens} tokens, over its {budget_tokens}-token budget")
    return reasons


# ----- the store ------------------------------------------------------------------------------------
def new_proposal_id(now: dt.datetime, new_text: str) -> str:
    digest = hashlib.sha1(f"{now.isoformat()}\n{new_text}".encode("utf-8")).hexdigest()[:6]
    return f"d-{now.astimezone(dt.timezone.utc).strftime('%Y%m%d-%H%M%S')}-{digest}"


def save_proposal(paths: WorkspacePaths, proposal: Proposal) -> None:
    save_proposal_record(paths, proposal.id, proposal.to_dict())


def load_proposal(paths: WorkspacePaths, proposal_id: str) -> Proposal:
    data = load_proposal_record(paths, proposal_id)
    try:
        return Proposal.from_dict(data)
    except (KeyError, TypeError, ValueError) as exc:
        raise FormatError(f"proposal {proposal_id} is not a proposal ({exc}); move its file aside") from exc


def list_proposals(paths: WorkspacePaths, status: str | tuple[str, ...] | None = None) -> list[Proposal]:
    """Proposals, newest first; damaged files are skipped (`load_proposal` names them)."""
    wanted = (status,) if isinstance(status, str) else status
    found = []
    for proposal_id in proposal_ids(paths):
        try:
            proposal = load_proposal(paths, proposal_id)
        except (FormatError, NotFoundError):
            continue
        if wanted is None or proposal.status in wanted:
            found.append(proposal)
    return sorted(found, key=lambda p: (p.created, p.id), reverse=True)
