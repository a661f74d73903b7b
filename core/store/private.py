"""Reverie's own records in a workspace: settings, dream proposals, the dream watermark, the dream
log, agent activity and cache files.

They are private state (under `.reverie/`, and `memory/.consolidation_state` where the
AgentScope layout keeps the watermark), written only here, always atomically. What a
record means belongs to its owner (core/dream for proposals and the watermark); this
module only keeps the bytes safe: JSON in and out, damaged files named, never half-written.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

from core.config import Settings, settings_from_toml
from core.errors import ConfigError, FormatError, NotFoundError, PathEscapeError, StorageError
from core.store.atomic import atomic_write
from core.store.fileio import read_bytes, read_text
from core.store.locks import locked
from core.store.paths import WorkspacePaths, safe_id
from core.store.sessions import append_jsonl, read_jsonl


def _json_text(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, indent=1) + "\n"


# ----- settings ------------------------------------------------------------------------------------
def read_settings(paths: WorkspacePaths) -> Settings:
    """The workspace's settings, read only from a config.toml that really lies in its `.reverie/` (a
    link out is refused with the reason, never read); defaults when there is none."""
    try:
        data = read_bytes(paths.root, paths.config_toml)
    except FileNotFoundError:
        return Settings()
    except (PathEscapeError, StorageError) as exc:
        raise ConfigError(f"the settings {paths.config_toml} are not read: {exc}") from exc
    return settings_from_toml(data, paths.config_toml)


def write_config(paths: WorkspacePaths, text: str) -> None:
    atomic_write(paths.config_toml, text, root=paths.root)


# ----- dream proposals -----------------------------------------------------------------------------
def proposal_file(paths: WorkspacePaths, proposal_id: str) -> Path:
    return paths.proposals_dir / f"{safe_id(proposal_id, 'proposal id')}.json"


def save_proposal_record(paths: WorkspacePaths, proposal_id: str, record: dict) -> None:
    atomic_write(proposal_file(paths, proposal_id), _json_text(record), root=paths.root)


def load_proposal_record(paths: WorkspacePaths, proposal_id: str) -> dict:
    """The stored record; NotFoundError when there is none, FormatError when the file is damaged."""
    path = proposal_file(paths, proposal_id)
    try:
        data = json.loads(read_text(paths.root, path))
    except FileNotFoundError as exc:
        known = ", ".join(proposal_ids(paths)[:5])
        raise NotFoundError(f"no proposal {proposal_id!r}" + (f" (recent: {known})" if known else "")) from exc
    except (ValueError, RecursionError, UnicodeDecodeError) as exc:
        raise FormatError(f"proposal file {path} is damaged ({exc}); move it aside") from exc
    if not isinstance(data, dict):
        raise FormatError(f"proposal file {path} is not a proposal (not a JSON object); move it aside")
    return data


def proposal_ids(paths: WorkspacePaths) -> list[str]:
    """Ids of the stored proposals, newest first (ids start with their UTC time)."""
    if not paths.proposals_dir.is_dir():
        return []
    return sorted((p.stem for p in paths.proposals_dir.glob("*.json")), reverse=True)


# ----- the dream watermark -------------------------------------------------------------------------
def read_state_record(paths: WorkspacePaths) -> dict:
    """The watermark's JSON object; {} when it is missing or damaged (the next dream reads everything)."""
    try:
        data = json.loads(read_text(paths.root, paths.consolidation_state))
    except (FileNotFoundError, ValueError, UnicodeDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def update_state_record(paths: WorkspacePaths, change: Callable[[dict], dict]) -> dict:
    """Read, change and write the watermark under its lock, so two writers at once both count."""
    with locked(paths.locks_dir / "consolidation_state.lock"):
        record = change(read_state_record(paths))
        atomic_write(paths.consolidation_state, json.dumps(record, indent=2) + "\n", root=paths.root)
        return record


# ----- the dream log -------------------------------------------------------------------------------
def dream_log_file(paths: WorkspacePaths) -> Path:
    return paths.private_dir / "dreams.jsonl"


def append_dream_log(paths: WorkspacePaths, record: dict) -> None:
    append_jsonl(dream_log_file(paths), [record], root=paths.root)


def read_dream_log(paths: WorkspacePaths) -> list[dict]:
    return read_jsonl(dream_log_file(paths), paths.root).objects


# ----- agent activity ------------------------------------------------------------------------------
def activity_file(paths: WorkspacePaths) -> Path:
    return paths.private_dir / "agent_activity"


def read_activity(paths: WorkspacePaths) -> str:
    """The last agent turn recorded by versions before the activity log (core/store/activity.py), as ISO
    time; "" when none was recorded or the file is unreadable."""
    try:
        return read_text(paths.root, activity_file(paths)).strip()
    except (OSError, UnicodeDecodeError):
        return ""


# ----- caches ---------------------------------------------------------------------------------------
def cache_file(paths: WorkspacePaths, name: str) -> Path:
    return paths.private_dir / safe_id(name, "cache name")


def write_cache(paths: WorkspacePaths, name: str, data: bytes) -> None:
    atomic_write(cache_file(paths, name), data, root=paths.root)


# ----- who schedules a workspace ------------------------------------------------------------------------
def scheduler_owner_file(paths: WorkspacePaths) -> Path:
    return paths.locks_dir / "scheduler.owner.json"


def write_scheduler_owner(paths: WorkspacePaths, record: dict) -> None:
    atomic_write(scheduler_owner_file(paths), _json_text(record), root=paths.root)


def read_scheduler_owner(paths: WorkspacePaths) -> dict:
    """The record the scheduler holding the lock wrote ({} when there is none or it cannot be read)."""
    try:
        data = json.loads(read_text(paths.root, scheduler_owner_file(paths)))
    except (FileNotFoundError, ValueError, OSError):
        return {}
    return data if isinstance(data, dict) else {}
