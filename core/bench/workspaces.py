"""`reverie bench workspaces DIR [--no-model] [--out F]`: what a dream does to real workspaces.

Every sub-folder of DIR holding a MEMORY.md or a memory/ folder is a workspace. For each:
1. its markdown (MEMORY.md, memory/**, the top-level OpenClaw files) is copied into a fresh
   temporary workspace; a dated file (`memory/2026-02-03-slug.md`) gets its date as mtime;
2. one dream runs at the day after the newest dated file, with the production code;
3. its proposal is applied as a person's "Apply" does, a held one too (the person chose to
   apply it anyway: the measurement is of what the proposal would do). Separate proposals
   the dream also wrote (condense, relevance prune) are counted, not applied;
4. the resulting MEMORY.md is scored (_workspaces_score.py): kept, added, junk, secrets.

stdout: one line per workspace and a summary line
  workspace name=NAME logs=N seconds=S kept=R replaced=N added=N junk=N secrets=N held=0|1 other_proposals=N
  workspaces n=N kept=R replaced=N added=N junk=N junk_share=R secrets=N
kept in the summary is over all original lines together; junk_share is junk / added.
`--out F` writes the figures, the junk and secret lines' kinds, each replaced line (old, new, the
relation's reason) and the dream's notes as JSON.
"""
from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from core.bench._workspaces_score import WorkspaceScore, junk_reason, score_workspace
from core.errors import CoreError

TOP_LEVEL = ("MEMORY.md", "USER.md", "SOUL.md", "TOOLS.md", "IDENTITY.md", "AGENTS.md", "HEARTBEAT.md",
             "BOOTSTRAP.md", "BOOT.md")


@dataclass
class WorkspaceRun:
    name: str
    logs: int = 0                    # daily logs the dream read
    seconds: float = 0.0
    held: bool = False
    other_proposals: int = 0         # condense / relevance proposals, reviewed separately
    not_proposed: int = 0            # candidates the per-dream budget left in the logs
    score: WorkspaceScore = field(default_factory=WorkspaceScore)
    error: str = ""
    notes: list[str] = field(default_factory=list)

    def line(self) -> str:
        s = self.score
        return (f"workspace name={self.name} logs={self.logs} seconds={self.seconds:.1f} kept={s.kept:.3f} "
                f"replaced={s.replaced} added={s.added} junk={len(s.junk)} secrets={len(s.secrets)} held={int(self.held)} "
                f"other_proposals={self.other_proposals} not_proposed={self.not_proposed}"
                + (f" error={self.error!r}" if self.error else ""))

    def to_dict(self) -> dict:
        s = self.score
        return {"name": self.name, "logs": self.logs, "seconds": self.seconds, "held": self.held,
                "other_proposals": self.other_proposals, "not_proposed": self.not_proposed,
                "kept": round(s.kept, 4), "original_lines": s.original_lines, "kept_lines": s.kept_lines,
                "replaced": s.replaced, "replaced_lines": s.replaced_lines,
                "added": s.added, "junk": [{"kind": junk_reason(line), "line": line} for line in s.junk],
                "secrets": len(s.secrets), "error": self.error, "notes": self.notes}


def workspace_dirs(root: Path) -> list[Path]:
    found = [p for p in sorted(root.iterdir()) if p.is_dir()
             and ((p / "MEMORY.md").is_file() or (p / "memory").is_dir())]
    if not found:
        raise CoreError(f"no workspaces under {root}: no folder there holds a MEMORY.md or a memory/ folder")
    return found


def copy_workspace(source: Path, target: Path) -> dt.date | None:
    """Copy the workspace's markdown; dated files get their date (noon UTC) as mtime. Returns the newest date."""
    from core.store.paths import daily_date

    target.mkdir(parents=True)
    for name in TOP_LEVEL:
        if (source / name).is_file():
            shutil.copyfile(source / name, target / name)
    newest = None
    memory = source / "memory"
    if memory.is_dir():
        for path in sorted(memory.rglob("*.md")):
            if not path.is_file():
                continue
            dest = target / path.relative_to(source)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, dest)
            day = daily_date(dest)
            if day is not None:
                stamp = dt.datetime.combine(day, dt.time(12), tzinfo=dt.timezone.utc).timestamp()
                os.utime(dest, (stamp, stamp))
                newest = day if newest is None or day > newest else newest
    return newest


def run_workspace(source: Path, llm) -> WorkspaceRun:
    from core.dream.pipeline.consolidator import dream_history, run_dream
    from core.dream.review.apply import apply_proposal
    from core.dream.review.proposals import OPEN, list_proposals
    from core.workspace import Workspace

    run = WorkspaceRun(source.name)
    original = (source / "MEMORY.md").read_bytes().decode("utf-8", "replace") if (source / "MEMORY.md").is_file() else ""
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="reverie-bench-ws-") as tmp:
        root = Path(tmp) / source.name
        newest = copy_workspace(source, root)
        day = (newest or dt.date.today()) + dt.timedelta(days=1)
        now = dt.datetime.combine(day, dt.time(3), tzinfo=dt.timezone.utc)
        ws = Workspace.open(root)
        applied = []
        try:
            result = run_dream(ws, llm, now=now, apply=False)
            run.notes = list(result.notes)
            summary = result.proposal.summary if result.proposal is not None else {}
            history = dream_history(ws, limit=1)      # every finished dream logs what it read
            run.logs = int(history[0].get("files_read") or 0) if history else 0
            run.not_proposed = len(summary.get("not_proposed") or ())
            proposal = result.proposal
            if proposal is not None and proposal.is_open:
                run.held = result.held
                outcome = apply_proposal(ws, proposal.id, reviewed=True, now=now)
                done = set(outcome.applied)
                applied = [c for c in proposal.changes if c.id in done]
            run.other_proposals = sum(1 for p in list_proposals(ws.paths, OPEN)
                                      if proposal is None or p.id != proposal.id)
            final = ws.read_memory().text
        except CoreError as exc:
            run.error = f"{type(exc).__name__}: {exc}"
            final = original
        finally:
            ws.close()
    run.seconds = round(time.perf_counter() - started, 1)
    run.score = score_workspace(original, final, applied)
    return run


def summary_line(runs: list[WorkspaceRun]) -> str:
    original = sum(r.score.original_lines for r in runs)
    kept = sum(r.score.kept_lines for r in runs) / original if original else 1.0
    added = sum(r.score.added for r in runs)
    replaced = sum(r.score.replaced for r in runs)
    junk = sum(len(r.score.junk) for r in runs)
    secrets = sum(len(r.score.secrets) for r in runs)
    share = junk / added if added else 0.0
    return (f"workspaces n={len(runs)} kept={kept:.3f} replaced={replaced} added={added} junk={junk} "
            f"junk_share={share:.3f} secrets={secrets}")


def cmd_bench_workspaces(args) -> int:
    from core.bench.consolidation import open_model

    root = Path(args.dir).expanduser()
    if not root.is_dir():
        raise CoreError(f"no folder at {root}")
    dirs = workspace_dirs(root)
    llm, model = open_model(args)
    print(f"workspaces: {len(dirs)} workspace(s), model {model}", file=sys.stderr, flush=True)
    runs = []
    try:
        for source in dirs:
            print(f"workspaces: dreaming {source.name} ...", file=sys.stderr, flush=True)
            run = run_workspace(source, llm)
            runs.append(run)
            print(run.line(), flush=True)
    finally:
        if llm is not None and hasattr(llm, "close"):
            llm.close()
    line = summary_line(runs)
    print(line, flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps({"summary": line, "model": model,
                                              "workspaces": [r.to_dict() for r in runs]},
                                             ensure_ascii=False, indent=1), encoding="utf-8")
    return 1 if any(r.error for r in runs) else 0


def register(sub) -> None:
    from core.llm.cli_args import add_model_arguments

    p = sub.add_parser("workspaces", help="dream a copy of every workspace under DIR, apply, score what it kept "
                                          "and added")
    p.add_argument("dir", help="a folder whose sub-folders are workspaces (MEMORY.md and memory/)")
    p.add_argument("--out", metavar="FILE", help="write the figures and the junk lines as JSON here")
    p.add_argument("--no-model", action="store_true", help="decide every operation without a model")
    add_model_arguments(p)
    p.set_defaults(func=cmd_bench_workspaces)
