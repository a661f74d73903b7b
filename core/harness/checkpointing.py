"""Checkpoints of a running task: when to save, what goes in, where to resume.

The schema is the memory-engineering article's (see core/store/checkpoints.py):
timestamp, session, checkpoint id, target, completed and pending steps, sha256
of each artifact, a context summary, the last action and any error state, plus
an optional task graph. Saved before and after every side-effect tool, on
milestones and on a timer; written atomically by the store. A restarted agent
resumes at the first pending task whose dependencies are done.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import time
from typing import Any, Callable

from core.errors import CoreError
from core.store.checkpoints import new_checkpoint_id, next_task

SIDE_EFFECT_TOOLS = frozenset({"write_file", "edit_file", "delete_file", "shell", "run_command",
                               "progress_update", "checkpoint_save", "hand_off"})


class Checkpointer:
    def __init__(self, workspace, session_id: str, target: str = "", *, timer_s: float = 300.0,
                 clock: Callable[[], float] = time.monotonic):
        self.ws = workspace
        self.session_id = session_id
        self.target = target
        self.timer_s = timer_s
        self.clock = clock
        self.completed: list[str] = []
        self.pending: list[str] = []
        self.artifacts: set[str] = set()          # workspace-relative paths
        self.tasks: list[dict[str, Any]] = []
        self.last_action = ""
        self.error_state: str | dict | None = None
        self.context_summary = ""
        self._last_save = clock()
        self._last_id = ""
        self.saved: list[str] = []                # checkpoint ids written by this object

    # ----- the task graph ----------------------------------------------------------------------
    def set_tasks(self, titles: list[str], *, chain: bool = True) -> None:
        """A task per title, each depending on the one before when `chain`."""
        self.tasks = [{"id": f"t{i + 1}", "title": title, "status": "pending",
                       "depends_on": [f"t{i}"] if chain and i else []} for i, title in enumerate(titles)]
        self.pending = list(titles)

    def mark(self, task_id: str, status: str) -> None:
        for task in self.tasks:
            if task["id"] == task_id:
                task["status"] = status
                if status == "done":
                    if task["title"] in self.pending:
                        self.pending.remove(task["title"])
                    self.completed.append(task["title"])
                return
        raise CoreError(f"no task {task_id!r} in this checkpoint's task graph")

    def resume_from(self, checkpoint: dict[str, Any]) -> dict[str, Any] | None:
        """Take over a saved checkpoint's state; the task to resume at (None: nothing pending)."""
        self.target = checkpoint.get("target") or self.target
        self.completed = list(checkpoint.get("completed_steps", []))
        self.pending = list(checkpoint.get("pending_steps", []))
        self.artifacts = set(checkpoint.get("artifacts", {}))
        self.tasks = [dict(t) for t in checkpoint.get("tasks", [])]
        self.last_action = checkpoint.get("last_action", "")
        return next_task(checkpoint)

    def next_task(self) -> dict[str, Any] | None:
        return next_task({"tasks": self.tasks})

    # ----- saving --------------------------------------------------------------------------------
    def add_artifact(self, rel_path: str) -> None:
        self.artifacts.add(self.ws.relative(self.ws.resolve(rel_path)))

    def _hashes(self) -> dict[str, str]:
        out = {}
        for rel in sorted(self.artifacts):
            path = self.ws.resolve(rel)
            if path.is_file():
                out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
        return out

    def snapshot(self, reason: str) -> dict[str, Any]:
        cp_id = new_checkpoint_id()
        if cp_id <= self._last_id:    # two saves within one clock tick still get ordered ids
            cp_id = self._last_id + "a"
        data: dict[str, Any] = {
            "timestamp": dt.datetime.now().astimezone().isoformat(timespec="seconds"),
            "session_id": self.session_id, "checkpoint_id": cp_id, "target": self.target,
            "completed_steps": list(self.completed), "pending_steps": list(self.pending),
            "artifacts": self._hashes(), "context_summary": self.context_summary,
            "last_action": self.last_action, "error_state": self.error_state, "reason": reason,
        }
        if self.tasks:
            data["tasks"] = [dict(t) for t in self.tasks]
        return data

    def save(self, reason: str) -> dict[str, Any]:
        data = self.snapshot(reason)
        self.ws.save_checkpoint(data)
        self._last_id = data["checkpoint_id"]
        self._last_save = self.clock()
        self.saved.append(data["checkpoint_id"])
        return data

    def before_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any] | None:
        if name not in SIDE_EFFECT_TOOLS:
            return None
        self.last_action = f"about to run {name}"
        return self.save(f"before {name}")

    def after_tool(self, name: str, arguments: dict[str, Any], *, error: str = "") -> dict[str, Any] | None:
        for key in ("path", "file_path"):
            value = arguments.get(key)
            if name in ("write_file", "edit_file") and isinstance(value, str):
                try:
                    self.add_artifact(value)
                except CoreError:
                    pass   # a path outside the workspace is no artifact of ours
        if name not in SIDE_EFFECT_TOOLS:
            return None
        self.last_action = f"ran {name}" + (f" (failed: {error})" if error else "")
        self.error_state = {"tool": name, "error": error} if error else None
        return self.save(f"after {name}")

    def milestone(self, text: str) -> dict[str, Any]:
        self.last_action = f"milestone: {text}"
        return self.save("milestone")

    def maybe_timer(self) -> dict[str, Any] | None:
        if self.timer_s and self.clock() - self._last_save >= self.timer_s:
            return self.save("timer")
        return None

    def latest(self) -> dict[str, Any] | None:
        return self.ws.latest_checkpoint(self.session_id)
