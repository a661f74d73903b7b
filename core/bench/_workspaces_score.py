"""Scoring one workspace of `reverie bench workspaces`: what an applied dream did to MEMORY.md.

- kept: the share of the original MEMORY.md's non-blank lines that are still there byte for
  byte (as many times as they were), or that an applied "replace" change turned into a line
  that cites them (the change's `before` is the original line, and its `after` is in the file);
- replaced: of the kept lines, those kept only as such a replace made them, each listed (old line,
  new line, the relation's reason) so a person can read what the dream rewrote;
- added: the lines the applied proposal added;
- junk: added bullets that are not a fact: header-only ("**Label:**", "## Title"), a
  separator, code, a table row, or under four letters;
- secrets: added lines the secret scanner flags.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from core.secrets import holds_secret
from core.store.memory_md import parse_bullet, strip_comments

_HEADING = re.compile(r"^#+\s")
_SEPARATOR = re.compile(r"^([-*_=~]\s*){3,}$")
_CODE = re.compile(r"^(```|~~~|\$ |>>> |(def|class|import|from|const|let|var|function|return|if|for)\b.*[:;{(]$)"
                   r"|[{};]$|^[}\])]")
_TABLE_ROW = re.compile(r"^\||\|.*\|.*\|")


@dataclass
class WorkspaceScore:
    original_lines: int = 0           # non-blank lines of the original MEMORY.md
    kept_lines: int = 0
    replaced: int = 0                 # of the kept lines, those kept only as an applied "replace" made them
    replaced_lines: list[dict] = field(default_factory=list)   # {"old", "new", "reason"} of each of them
    added: int = 0
    junk: list[str] = field(default_factory=list)
    secrets: list[str] = field(default_factory=list)

    @property
    def kept(self) -> float:
        return self.kept_lines / self.original_lines if self.original_lines else 1.0


def fact_text(line: str) -> str:
    """An added line's words: the list marker and the provenance comment taken off."""
    bullet = parse_bullet(line)
    text = bullet.text if bullet is not None else line
    return strip_comments(text).strip()


def junk_reason(line: str) -> str:
    """Why an added line is not a fact ("" when it may be one)."""
    text = fact_text(line)
    if _SEPARATOR.match(text):
        return "separator"
    bare = text.replace("*", "").replace("_", "").strip()
    if _HEADING.match(text) or bare.endswith((":", "：")):
        return "header-only"
    if _TABLE_ROW.search(text):
        return "table row"
    if _CODE.search(text):
        return "code"
    if sum(1 for ch in text if ch.isalpha()) < 4:
        return "under four letters"
    return ""


def score_workspace(original: str, result: str, applied_changes: list) -> WorkspaceScore:
    """Score the MEMORY.md a dream left (`result`) against the one it started from (`original`);
    `applied_changes` are the Change records the apply wrote."""
    score = WorkspaceScore()
    result_lines = Counter(line.rstrip("\r") for line in result.split("\n"))
    replaced, reasons = {}, {}
    for change in applied_changes:
        if change.kind == "update" and change.before:
            replaced.setdefault(change.before.rstrip("\r"), []).append(change.after.rstrip("\r"))
            reasons[(change.before.rstrip("\r"), change.after.rstrip("\r"))] = change.reason
    for line in original.split("\n"):
        line = line.rstrip("\r")
        if not line.strip():
            continue
        score.original_lines += 1
        if result_lines[line] > 0:
            result_lines[line] -= 1
            score.kept_lines += 1
            continue
        afters = replaced.get(line) or []
        hit = next((after for after in afters if result_lines[after] > 0), None)
        if hit is not None:
            result_lines[hit] -= 1
            afters.remove(hit)
            score.kept_lines += 1
            score.replaced += 1
            score.replaced_lines.append({"old": line, "new": hit, "reason": reasons.get((line, hit), "")})
    for change in applied_changes:
        if change.kind != "add":
            continue
        score.added += 1
        if junk_reason(change.after):
            score.junk.append(change.after)
        if holds_secret(fact_text(change.after)):
            score.secrets.append(change.after)
    return score
