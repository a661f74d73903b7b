"""One case of the consolidation benchmark: a fresh workspace, one real dream, everything accepted.

The protocol of a labelled case (see consolidation.py):
1. copy only the case's MEMORY.md and memory/ into a new temporary workspace: the
   labels and the ideal result stay outside it, so the dream cannot see them;
2. run one dream with the production code and its normal guards at the case's clock (with no
   per-dream limit on new facts: every labelled fact is judged);
3. accept everything it proposes, held proposals included, through the same call a
   person's "Accept all" makes (`apply_proposal(..., reviewed=True)`);
4. write the resulting MEMORY.md, comments included, where the scorer reads it.

A case whose dream or accept fails still gets a result: its starting MEMORY.md (a fair
"nothing changed"), and the failure is kept for the report instead of stopping the run.
"""
from __future__ import annotations

import datetime as dt
import shutil
import tempfile
import time
import traceback
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

from core.errors import CoreError

# What a dream may see of a case; everything else in the case folder is for scoring only.
SEEN = ("MEMORY.md", "memory")
UNLIMITED = 1_000_000
# A watermark copied along would make the dream skip logs it has never read.
NOT_COPIED = (".consolidation_state",)


@dataclass
class CaseRun:
    name: str
    ok: bool = False                 # the dream ran and its proposal (if any) was dealt with
    status: str = ""                 # the dream's status (nothing | proposed | ...), or "failed"
    reason: str = ""
    held: bool = False
    hold_reasons: list[str] = field(default_factory=list)
    changes: int = 0                 # bullet-level changes proposed
    applied: int = 0                 # changes written by the accept
    accept_error: str = ""           # the apply path refused (a guard of the product, not a crash)
    error: str = ""                  # the dream or the bench itself failed: the result is the start
    notes: list[str] = field(default_factory=list)
    stats: dict = field(default_factory=dict)   # the dream's own: model_calls, fallbacks, seconds, ...
    seconds: float = 0.0             # wall time of dream and accept
    workspace_files: list[str] = field(default_factory=list)   # what the dream's workspace held

    def to_dict(self) -> dict:
        return asdict(self)

    def describe(self) -> str:
        if self.error:
            return f"dream failed ({self.error}); scored as the starting MEMORY.md"
        stats = self.stats
        parts = [f"{self.status}: {self.changes} change(s)"]
        if self.held:
            parts.append(f"held ({'; '.join(self.hold_reasons)}) and accepted anyway")
        if self.accept_error:
            parts.append(f"accept refused: {self.accept_error}")
        elif self.changes:
            parts.append(f"{self.applied} applied")
        parts.append(f"model calls {stats.get('model_calls', 0)}, fallbacks {stats.get('fallbacks', 0)}, "
                     f"{self.seconds:.1f} s")
        return "; ".join(parts)


def case_clock(now: str) -> dt.datetime:
    """The moment the case's dream runs, from labels.json's "now". A time without a zone is
    taken as UTC, as the dream's gates do (core/dream/schedule/gates.py)."""
    try:
        moment = dt.datetime.fromisoformat(str(now))
    except ValueError as exc:
        raise CoreError(f"'now' is not an ISO date and time: {now!r}") from exc
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.timezone.utc)


def copy_workspace(case_dir: Path, root: Path) -> list[str]:
    """A workspace at `root` holding only the case's MEMORY.md and memory/; the files it holds."""
    root.mkdir(parents=True)
    for name in SEEN:
        source = case_dir / name
        if source.is_dir():
            shutil.copytree(source, root / name, ignore=shutil.ignore_patterns(*NOT_COPIED))
        elif source.is_file():
            shutil.copyfile(source, root / name)
    return listing(root)


def listing(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def dream_case(case_dir: Path, result_path: Path, llm, now: dt.datetime, *,
               progress: Callable | None = None, judgment: str | None = None) -> CaseRun:
    """Run the protocol on one case; the result MEMORY.md is always written to `result_path`.
    `progress(ws, event)` sees every DreamEvent together with the dream's workspace."""
    case_dir = Path(case_dir)
    run = CaseRun(case_dir.name)
    result_path.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    try:
        with tempfile.TemporaryDirectory(prefix="reverie-consolidation-") as tmp:
            root = Path(tmp) / case_dir.name
            run.workspace_files = copy_workspace(case_dir, root)
            _dream_and_accept(run, root, llm, now, progress, judgment)
            # Byte for byte: comments (ids, sources, pins) are part of the result.
            shutil.copyfile(root / "MEMORY.md", result_path)
        run.ok = True
    except Exception as exc:   # noqa: BLE001 - one broken case must not stop the others
        run.status = "failed"
        run.error = f"{type(exc).__name__}: {exc}"
        run.notes.append(traceback.format_exc(limit=6))
        shutil.copyfile(case_dir / "MEMORY.md", result_path)
    run.seconds = round(time.perf_counter() - started, 3)
    return run


def _dream_and_accept(run: CaseRun, root: Path, llm, now: dt.datetime, progress: Callable | None,
                      judgment: str | None = None) -> None:
    from core.dream.review.apply import apply_proposal
    from core.dream.pipeline.consolidator import run_dream
    from core.errors import ProposalError
    from core.workspace import Workspace

    ws = Workspace.open(root)
    # A case is weeks of logs read by one dream, labelled fact by fact: the benchmark measures the
    # judgment of every fact, so the per-dream limit on new facts (a volume policy for real
    # workspaces, measured by `reverie bench workspaces`) does not apply here.
    ws.settings = ws.settings.replace("dream", max_new_facts=UNLIMITED)
    if judgment:
        ws.settings = ws.settings.replace("dream", judgment=judgment)
    try:
        on_event = (lambda event: progress(ws, event)) if progress is not None else None
        # apply=False whatever the settings say: the accept below is the person's path, held or not.
        result = run_dream(ws, llm, now=now, apply=False, progress=on_event)
        run.status, run.reason, run.notes = result.status, result.reason, list(result.notes)
        run.stats = dict(result.stats or {})
        proposal = result.proposal
        if proposal is None:
            return
        run.held, run.hold_reasons, run.changes = result.held, list(proposal.hold_reasons), len(proposal.changes)
        if not proposal.is_open:
            return
        try:
            accepted = apply_proposal(ws, proposal.id, reviewed=True, now=now)
            run.applied = len(accepted.applied)
        except ProposalError as exc:
            run.accept_error = str(exc)
    finally:
        ws.close()
