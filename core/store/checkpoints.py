"""Checkpoints `checkpoints/<session>/<checkpoint_id>.json`, written atomically.

The schema is the memory-engineering article's: what the task is, what is done
and pending, hashes of the artifacts produced, a summary of the context, the
last action and any error state, plus an optional task graph so a restarted
agent resumes at the first pending task whose dependencies are done.
"""
from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any, Callable

from core.errors import FormatError, NotFoundError
from core.store.atomic import atomic_write
from core.store.fileio import confined_glob, read_text
from core.store.paths import WorkspacePaths, safe_id

REQUIRED = {
    "timestamp": str, "session_id": str, "checkpoint_id": str, "target": str,
    "completed_steps": list, "pending_steps": list, "artifacts": dict,
    "context_summary": str, "last_action": str,
}
OPTIONAL = {"error_state": (str, dict, type(None)), "tasks": list, "reason": str}
TASK_STATUSES = {"pending", "in_progress", "done", "failed"}


def validate_checkpoint(data: Any) -> list[str]:
    """Problems with a checkpoint object, as sentences; empty when it is valid."""
    if not isinstance(data, dict):
        return ["a checkpoint must be a JSON object"]
    problems = []
    for key, kind in REQUIRED.items():
        if key not in data:
            problems.append(f"missing field {key!r}")
        elif not isinstance(data[key], kind):
            problems.append(f"field {key!r} must be a {kind.__name__}")
    for key, kinds in OPTIONAL.items():
        if key in data and not isinstance(data[key], kinds):
            problems.append(f"field {key!r} has the wrong type")
    unknown = set(data) - set(REQUIRED) - set(OPTIONAL)
    if unknown:
        problems.append(f"unknown field(s): {', '.join(sorted(unknown))}")
    if isinstance(data.get("artifacts"), dict):
        for path, digest in data["artifacts"].items():
            if not isinstance(digest, str) or len(digest) != 64:
                problems.append(f"artifact {path!r} needs a sha256 hex digest")
    if isinstance(data.get("timestamp"), str):
        try:
            dt.datetime.fromisoformat(data["timestamp"])
        except ValueError:
            problems.append("timestamp must be ISO 8601")
    ids = set()
    for task in data.get("tasks", []) if isinstance(data.get("tasks"), list) else []:
        if not isinstance(task, dict) or not isinstance(task.get("id"), str):
            problems.append("each task needs an 'id'")
            continue
        ids.add(task["id"])
        if task.get("status", "pending") not in TASK_STATUSES:
            problems.append(f"task {task['id']!r} has unknown status {task.get('status')!r}")
    for task in data.get("tasks", []) if isinstance(data.get("tasks"), list) else []:
        if isinstance(task, dict):
            for dep in task.get("depends_on", []):
                if dep not in ids:
                    problems.append(f"task {task.get('id')!r} depends on unknown task {dep!r}")
    return problems


def new_checkpoint_id(now: dt.datetime | None = None) -> str:
    now = now or dt.datetime.now(dt.timezone.utc)
    return "cp-" + now.strftime("%Y%m%dT%H%M%S%fZ")


def save_checkpoint(paths: WorkspacePaths, data: dict[str, Any]) -> Path:
    problems = validate_checkpoint(data)
    if problems:
        raise FormatError("invalid checkpoint: " + "; ".join(problems))
    folder = paths.checkpoint_dir(data["session_id"])
    path = folder / f"{safe_id(data['checkpoint_id'], 'checkpoint id')}.json"
    atomic_write(path, json.dumps(data, ensure_ascii=False, indent=2) + "\n", root=paths.root)
    return path


def read_json_record(root: Path, path: Path, validate: Callable[[Any], list[str]], *, label: str,
                     missing: str) -> dict[str, Any]:
    """A JSON record file (a checkpoint, a hand-off), parsed and validated.

    NotFoundError(`missing`) when there is no file; FormatError naming `label` when it is not
    JSON or `validate` lists problems.
    """
    try:
        data = json.loads(read_text(root, path))
    except FileNotFoundError as exc:
        raise NotFoundError(missing) from exc
    except (ValueError, RecursionError, UnicodeDecodeError) as exc:
        raise FormatError(f"{label} is not valid JSON ({exc})") from exc
    problems = validate(data)
    if problems:
        raise FormatError(f"{label}: " + "; ".join(problems))
    return data


def read_checkpoint(paths: WorkspacePaths, path: Path) -> dict[str, Any]:
    return read_json_record(paths.root, path, validate_checkpoint, label=str(path), missing=f"no checkpoint at {path}")


def list_checkpoints(paths: WorkspacePaths, session_id: str | None = None) -> list[Path]:
    """Checkpoint files, oldest first (ids sort by time)."""
    root = paths.checkpoint_dir(session_id) if session_id else paths.checkpoints_dir
    pattern = "*.json" if session_id else "*/*.json"
    return sorted(confined_glob(paths.root, root, pattern), key=lambda p: (p.stem, p.parent.name))


def latest_checkpoint(paths: WorkspacePaths, session_id: str | None = None) -> dict[str, Any] | None:
    """The newest readable checkpoint; damaged ones are passed over, never fatal."""
    for path in reversed(list_checkpoints(paths, session_id)):
        try:
            return read_checkpoint(paths, path)
        except FormatError:
            continue
    return None


def next_task(checkpoint: dict[str, Any]) -> dict[str, Any] | None:
    """The first pending task whose dependencies are all done (resume point of a task graph)."""
    tasks = checkpoint.get("tasks") or []
    done = {t["id"] for t in tasks if t.get("status") == "done"}
    for task in tasks:
        if task.get("status", "pending") in ("pending", "in_progress", "failed") and \
                all(dep in done for dep in task.get("depends_on", [])):
            return task
    return None
