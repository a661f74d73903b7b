"""The attention anchor: original goal, progress, blockers, next step, kept in `progress.md`.

Long tasks drift: the goal scrolls out of the model's attention. The anchor is
short, lives in a file the person can read and edit, goes at the end of every
system prompt, and is re-injected as a fresh message every N steps. Sections
the harness does not know (a person's notes) are kept as they are.

    # Progress
    ## Goal
    Migrate the billing service to Postgres
    ## Progress
    - schema converted
    ## Blockers
    - staging credentials missing
    ## Next step
    Run the data copy
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace

from core.errors import ConflictError

SECTIONS = {"goal": "Goal", "progress": "Progress", "blockers": "Blockers", "next step": "Next step"}
_ALIASES = {"original goal": "goal", "objective": "goal", "next": "next step", "next steps": "next step",
            "done": "progress", "blocked": "blockers"}
_HEADING = re.compile(r"^##\s+(?P<title>.+?)\s*$")
MAX_PROGRESS_ITEMS = 30


@dataclass(frozen=True)
class Anchor:
    goal: str = ""
    progress: tuple[str, ...] = ()
    blockers: tuple[str, ...] = ()
    next_step: str = ""
    extra: str = ""          # unknown sections, verbatim

    @property
    def empty(self) -> bool:
        return not (self.goal or self.progress or self.blockers or self.next_step)

    def render(self) -> str:
        def items(values: tuple[str, ...]) -> str:
            return "\n".join(f"- {v}" for v in values) if values else "- (none)"
        text = (f"# Progress\n\n## Goal\n{_paragraph_out(self.goal)}\n\n## Progress\n{items(self.progress)}\n\n"
                f"## Blockers\n{items(self.blockers)}\n\n## Next step\n{_paragraph_out(self.next_step)}\n")
        return text + ("\n" + self.extra.strip() + "\n" if self.extra.strip() else "")

    def for_prompt(self, max_items: int = 8) -> str:
        """The anchor as the last block of a system prompt (recent progress only)."""
        lines = ["## Current task (attention anchor)", f"Goal: {self.goal or '(not set)'}"]
        if self.progress:
            lines.append("Done so far: " + "; ".join(self.progress[-max_items:]))
        if self.blockers:
            lines.append("Blockers: " + "; ".join(self.blockers))
        lines.append(f"Next step: {self.next_step or '(decide the next step toward the goal)'}")
        return "\n".join(lines)


def _paragraph_out(text: str) -> str:
    """A goal or next step as one line that reads back as itself: one that starts like a heading
    ('## Heading ...') is written with a backslash before its '#', as markdown escapes it."""
    if not text:
        return "(not set)"
    return "\\" + text if text.lstrip("\\").startswith("#") else text


def parse_anchor(text: str) -> Anchor:
    found: dict[str, list[str]] = {}
    extra: list[str] = []
    current: str | None = None
    for raw in text.split("\n"):
        match = _HEADING.match(raw)
        if match:
            title = match.group("title").strip().lower().rstrip(":")
            key = _ALIASES.get(title, title)
            current = key if key in SECTIONS else None
            if current is None:
                extra.append(raw)
            continue
        if current is None:
            if extra or (raw.strip() and not raw.startswith("# ")):
                extra.append(raw)
            continue
        found.setdefault(current, []).append(raw)

    def bullets(key: str) -> tuple[str, ...]:
        out = []
        for line in found.get(key, []):
            item = line.strip().lstrip("-*").strip()
            if item and item != "(none)":
                out.append(item)
        return tuple(out)

    def paragraph(key: str) -> str:
        text = " ".join(line.strip() for line in found.get(key, []) if line.strip())
        if text.startswith("\\") and text.lstrip("\\").startswith("#"):
            text = text[1:]
        return "" if text == "(not set)" else text

    return Anchor(goal=paragraph("goal"), progress=bullets("progress"), blockers=bullets("blockers"),
                  next_step=paragraph("next step"), extra="\n".join(extra).strip())


class AnchorStore:
    """progress.md through the workspace (compare-and-swap, history, undo)."""

    def __init__(self, workspace):
        self.ws = workspace

    def load(self) -> Anchor:
        if not self.ws.paths.progress_md.exists():
            return Anchor()
        return parse_anchor(self.ws.read("progress.md").text)

    def save(self, anchor: Anchor, reason: str = "anchor update") -> Anchor:
        for _attempt in range(3):
            snap = self.ws.read("progress.md")
            # A person's own sections in the file as it is now are kept.
            anchor = replace(anchor, extra=parse_anchor(snap.text).extra if snap.text else anchor.extra)
            try:
                self.ws.write_document("progress.md", anchor.render(), snap.hash, reason=reason)
                return anchor
            except ConflictError:
                continue  # saved by someone meanwhile: our fields win, their sections are re-read
        raise ConflictError("progress.md keeps changing on disk; the anchor was not saved")

    def update(self, *, goal: str | None = None, done: str | None = None, blockers: list[str] | None = None,
               next_step: str | None = None) -> Anchor:
        anchor = self.load()
        if goal is not None and goal.strip():
            anchor = replace(anchor, goal=" ".join(goal.split()))
        if done is not None and done.strip():
            anchor = replace(anchor, progress=(anchor.progress + (" ".join(done.split()),))[-MAX_PROGRESS_ITEMS:])
        if blockers is not None:
            anchor = replace(anchor, blockers=tuple(" ".join(b.split()) for b in blockers if b.strip()))
        if next_step is not None:
            anchor = replace(anchor, next_step=" ".join(next_step.split()))
        return self.save(anchor)
