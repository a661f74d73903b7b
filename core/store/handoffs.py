"""Hand-off packets `handoffs/<id>.json` between agents.

A packet says who hands what to whom and why, what is done, what failed and
how to know the task is finished. A task that would go back to an agent that
already handed it on is refused as a loop: two agents bouncing a task between
them forever is a known failure of multi-agent set-ups. The loop check and the
write happen under one lock, so two agents handing the same task at once cannot
both pass the check (A -> B and B -> A at the same moment: one is refused).
"""
from __future__ import annotations

import datetime as dt
import json
import uuid
from typing import Any

from core.errors import FormatError, HandoffLoopError
from core.store.atomic import atomic_write
from core.store.fileio import confined_glob, read_text
from core.store.checkpoints import read_json_record
from core.store.locks import locked
from core.store.paths import WorkspacePaths

FIELDS = ("from_agent", "to_agent", "original_target", "why_this_agent", "completed_work",
          "known_constraints", "failed_attempts", "current_state", "success_criteria",
          "termination_condition")
LIST_FIELDS = {"completed_work", "known_constraints", "failed_attempts"}


def validate_handoff(data: Any) -> list[str]:
    if not isinstance(data, dict):
        return ["a hand-off must be a JSON object"]
    problems = []
    for key in FIELDS:
        if key not in data:
            problems.append(f"missing field {key!r}")
        elif key in LIST_FIELDS and not isinstance(data[key], list):
            problems.append(f"field {key!r} must be a list")
        elif key not in LIST_FIELDS and not isinstance(data[key], str):
            problems.append(f"field {key!r} must be text")
    if data.get("from_agent") and data.get("from_agent") == data.get("to_agent"):
        problems.append("an agent cannot hand a task to itself")
    return problems


def list_handoffs(paths: WorkspacePaths) -> list[dict[str, Any]]:
    """Readable packets, oldest first."""
    found = []
    for path in confined_glob(paths.root, paths.handoffs_dir, "*.json"):
        try:
            found.append(json.loads(read_text(paths.root, path)))
        except (ValueError, RecursionError, UnicodeDecodeError):
            continue
    return sorted(found, key=lambda p: (p.get("created", ""), p.get("id", "")))


def create_handoff(paths: WorkspacePaths, packet: dict[str, Any], task_id: str | None = None) -> dict[str, Any]:
    problems = validate_handoff(packet)
    if problems:
        raise FormatError("invalid hand-off: " + "; ".join(problems))
    task_id = task_id or packet.get("task_id") or packet["original_target"]
    with locked(paths.locks_dir / "handoffs.lock"):
        return _create_unlocked(paths, packet, task_id)


def _create_unlocked(paths: WorkspacePaths, packet: dict[str, Any], task_id: str) -> dict[str, Any]:
    chain = sorted((p for p in list_handoffs(paths) if p.get("task_id") == task_id), key=lambda p: p.get("hop", 0))
    handed_on_by = {p["from_agent"] for p in chain}
    if packet["to_agent"] in handed_on_by:
        raise HandoffLoopError(f"refused: {packet['to_agent']} already handed task {task_id!r} on; "
                               f"sending it back would loop (chain: "
                               f"{' -> '.join([chain[0]['from_agent']] + [p['to_agent'] for p in chain])})")
    record = {**{k: packet[k] for k in FIELDS}, "id": packet.get("id") or f"ho-{uuid.uuid4().hex[:12]}",
              "task_id": task_id, "created": dt.datetime.now().astimezone().isoformat(timespec="seconds"),
              "hop": len(chain) + 1}
    atomic_write(paths.handoff(record["id"]), json.dumps(record, ensure_ascii=False, indent=2) + "\n",
                 root=paths.root)
    return record


def read_handoff(paths: WorkspacePaths, handoff_id: str) -> dict[str, Any]:
    return read_json_record(paths.root, paths.handoff(handoff_id), validate_handoff, label=f"hand-off {handoff_id!r}",
                            missing=f"no hand-off {handoff_id!r}")
