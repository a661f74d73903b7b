"""Fresh restart (tier 4): a new context built from what is on disk, not from the old one.

When compaction cannot bring a context back under the window, or it has gone
bad, the agent starts over from: AGENTS.md (standing instructions), progress.md
(the anchor), the latest checkpoint (and the task to resume at), `git diff`
when the workspace is in a git repository, and a failing-tests file when there
is one. Each part has a share of the budget so none crowds out the others.
"""
from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from core.store.checkpoints import next_task
from core.tokens import count_tokens, truncate_to_tokens

FAILING_TESTS_FILES = ("failing_tests.txt", "failing-tests.txt", "FAILING_TESTS.md", ".reverie/failing_tests.txt",
                       ".pytest_cache/v/cache/lastfailed")
GIT_TIMEOUT_S = 10


@dataclass
class FreshStart:
    text: str
    sections: dict[str, str] = field(default_factory=dict)   # name -> text put in
    checkpoint: dict | None = None
    resume_task: dict | None = None


def _git_diff(root: Path) -> str:
    if shutil.which("git") is None:
        return ""
    try:
        inside = subprocess.run(["git", "-C", str(root), "rev-parse", "--is-inside-work-tree"],
                                capture_output=True, text=True, timeout=GIT_TIMEOUT_S)
        if inside.returncode != 0 or inside.stdout.strip() != "true":
            return ""
        stat = subprocess.run(["git", "-C", str(root), "diff", "HEAD", "--stat"], capture_output=True, text=True,
                              timeout=GIT_TIMEOUT_S)
        diff = subprocess.run(["git", "-C", str(root), "diff", "HEAD"], capture_output=True, text=True,
                              timeout=GIT_TIMEOUT_S)
        if diff.returncode != 0:  # a repository without commits yet: show what is staged
            diff = subprocess.run(["git", "-C", str(root), "diff", "--cached"], capture_output=True, text=True,
                                  timeout=GIT_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return (stat.stdout.strip() + "\n\n" + diff.stdout.strip()).strip()


def _checkpoint_text(cp: dict, task: dict | None) -> str:
    lines = [f"Checkpoint {cp['checkpoint_id']} ({cp['timestamp']}, session {cp['session_id']})",
             f"Target: {cp['target']}",
             "Completed: " + ("; ".join(cp["completed_steps"]) or "(nothing yet)"),
             "Pending: " + ("; ".join(cp["pending_steps"]) or "(nothing)"),
             f"Last action: {cp['last_action'] or '(none)'}"]
    if cp.get("error_state"):
        lines.append(f"Error state: {json.dumps(cp['error_state'], ensure_ascii=False)}")
    if cp.get("context_summary"):
        lines.append(f"Context summary: {cp['context_summary']}")
    if cp.get("artifacts"):
        lines.append("Artifacts: " + ", ".join(f"{p} (sha256 {h[:12]})" for p, h in cp["artifacts"].items()))
    if task is not None:
        lines.append(f"Resume at task {task['id']}: {task.get('title', '')}")
    return "\n".join(lines)


def fresh_restart(workspace, *, session_id: str | None = None, budget_tokens: int = 3000,
                  count=count_tokens) -> FreshStart:
    root = workspace.root
    parts: dict[str, str] = {}
    if workspace.paths.agents_md.is_file():
        parts["AGENTS.md"] = workspace.read("AGENTS.md").text.strip()
    if workspace.paths.progress_md.is_file():
        parts["progress.md"] = workspace.read("progress.md").text.strip()
    checkpoint = workspace.latest_checkpoint(session_id)
    task = next_task(checkpoint) if checkpoint else None
    if checkpoint:
        parts["latest checkpoint"] = _checkpoint_text(checkpoint, task)
    diff = _git_diff(root)
    if diff:
        parts["git diff"] = diff
    for name in FAILING_TESTS_FILES:
        path = root / name
        if path.is_file():
            parts[f"failing tests ({name})"] = workspace.read(name).text.strip()
            break
    share = max(64, budget_tokens // max(1, len(parts)))
    sections = {name: truncate_to_tokens(text, share) + ("\n…(cut)" if count(text) > share else "")
                for name, text in parts.items() if text}
    body = "\n\n".join(f"## {name}\n{text}" for name, text in sections.items())
    text = ("[Fresh restart: the earlier context was dropped. Continue the task from what is saved on disk.]\n\n"
            + (body or "(nothing saved yet: no AGENTS.md, progress.md or checkpoint)"))
    return FreshStart(text=text, sections=sections, checkpoint=checkpoint, resume_task=task)
