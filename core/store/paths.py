"""The workspace layout (docs/architecture.md, "On disk") and confinement of caller-given paths.

Every path that comes from a person, an agent, or a tool call goes through
`confine()`: it is resolved (symlinks followed) and refused unless it stays
inside the workspace. Derived state lives under `.reverie/`.
"""
from __future__ import annotations

import datetime as dt
import os
import re
from dataclasses import dataclass
from pathlib import Path

from core.errors import PathEscapeError

# memory/YYYY-MM-DD.md, and OpenClaw's session-memory hook names: YYYY-MM-DD-<slug>.md, YYYY-MM-DD-HHMM.md
# (also the `YYYY-MM-DD.<mtime>.md` an archive collision gets).
DAILY_NAME = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?:[-_.][^/\\]*)?\.md$")
# OpenClaw's top-level files: indexed and read as context, never rewritten by Reverie.
OPENCLAW_FILES = ("USER.md", "SOUL.md", "TOOLS.md", "IDENTITY.md", "AGENTS.md", "HEARTBEAT.md")
_SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


@dataclass(frozen=True)
class WorkspacePaths:
    root: Path

    @property
    def memory_md(self) -> Path: return self.root / "MEMORY.md"
    @property
    def memory_dir(self) -> Path: return self.root / "memory"
    @property
    def archive_dir(self) -> Path: return self.root / "memory" / "archive"
    @property
    def consolidation_state(self) -> Path: return self.root / "memory" / ".consolidation_state"
    @property
    def sessions_dir(self) -> Path: return self.root / "sessions"
    @property
    def session_cache(self) -> Path: return self.root / "sessions" / "cache.jsonl"
    @property
    def checkpoints_dir(self) -> Path: return self.root / "checkpoints"
    @property
    def progress_md(self) -> Path: return self.root / "progress.md"
    @property
    def agents_md(self) -> Path: return self.root / "AGENTS.md"
    @property
    def handoffs_dir(self) -> Path: return self.root / "handoffs"
    @property
    def large_results_dir(self) -> Path: return self.root / "large_tool_results"
    @property
    def private_dir(self) -> Path: return self.root / ".reverie"
    @property
    def index_db(self) -> Path: return self.root / ".reverie" / "index.db"
    @property
    def history_dir(self) -> Path: return self.root / ".reverie" / "history"
    @property
    def proposals_dir(self) -> Path: return self.root / ".reverie" / "proposals"
    @property
    def config_toml(self) -> Path: return self.root / ".reverie" / "config.toml"
    @property
    def locks_dir(self) -> Path: return self.root / ".reverie" / "locks"
    @property
    def flush_record(self) -> Path: return self.root / ".reverie" / "flushes.jsonl"
    @property
    def recovery_dir(self) -> Path: return self.root / ".reverie" / "recovery"

    def layout_dirs(self) -> list[Path]:
        return [self.memory_dir, self.archive_dir, self.sessions_dir, self.checkpoints_dir,
                self.handoffs_dir, self.large_results_dir, self.private_dir, self.history_dir,
                self.proposals_dir, self.locks_dir]

    def daily_log(self, day: dt.date) -> Path:
        return self.memory_dir / f"{day.isoformat()}.md"

    def session_log(self, session_id: str) -> Path:
        return self.sessions_dir / f"{safe_id(session_id, 'session id')}.log.jsonl"

    def checkpoint_dir(self, session_id: str) -> Path:
        return self.checkpoints_dir / safe_id(session_id, "session id")

    def handoff(self, handoff_id: str) -> Path:
        return self.handoffs_dir / f"{safe_id(handoff_id, 'hand-off id')}.json"

    def evicted_result(self, session_id: str, call_id: str) -> Path:
        return self.large_results_dir / safe_id(session_id, "session id") / f"{safe_id(call_id, 'tool call id')}.txt"

    def relative(self, path: Path) -> str:
        """A workspace-relative POSIX path ('memory/2026-11-30.md')."""
        return Path(os.path.relpath(path, self.root)).as_posix()


def safe_id(value: str, what: str = "id") -> str:
    """An id that is safe as one file-name component (no separators, no dot-dot)."""
    if not isinstance(value, str) or not _SAFE_ID.match(value) or ".." in value:
        raise PathEscapeError(f"invalid {what} {value!r}: use letters, digits, '.', '_' or '-' (at most 128)")
    return value


MAX_PATH_BYTES = 4096      # PATH_MAX on Linux and macOS (1024 there, but the OS says so itself)
MAX_NAME_BYTES = 255       # one file or folder name


def check_length(raw: str) -> None:
    """PathEscapeError naming the limit when a path is too long for the file system."""
    encoded = os.fsencode(raw)
    if len(encoded) > MAX_PATH_BYTES:
        raise PathEscapeError(f"path is too long ({len(encoded):,} bytes; at most {MAX_PATH_BYTES:,})")
    longest = max((len(part) for part in encoded.split(b"/")), default=0)
    if longest > MAX_NAME_BYTES:
        raise PathEscapeError(f"a name in the path is too long ({longest:,} bytes; at most {MAX_NAME_BYTES} per name)")


def inside(root: Path, path: str | os.PathLike[str]) -> Path:
    """The one confinement rule: the real location of `path` (every symbolic link of its existing
    parts followed), refused with PathEscapeError unless it is the workspace or inside it.

    Every read and write of a workspace file goes through this (core/store/fileio.py then opens the
    result folder by folder from the root without following a link, core/store/dirfd.py, so a link
    planted after the check, in any folder of the path, is not followed either).
    """
    raw = os.fspath(path)
    if not raw or "\x00" in raw:
        raise PathEscapeError(f"invalid path {raw!r}")
    check_length(raw)
    base = Path(os.path.realpath(root))
    real = Path(os.path.realpath(raw))
    if real != base and base not in real.parents:
        raise PathEscapeError(f"{raw} leads outside the workspace {base} (a symbolic link or '..'); "
                              "Reverie reads and writes only inside it")
    return real


def confine(root: Path, user_path: str | os.PathLike[str]) -> Path:
    """Resolve `user_path` (relative to the workspace, or absolute) and refuse it unless it is inside.

    Symlinks are resolved first, so a link inside the workspace that points out is refused too.
    """
    raw = os.fspath(user_path)
    if not raw or "\x00" in raw:
        raise PathEscapeError(f"invalid path {raw!r}")
    check_length(raw)
    candidate = Path(raw)
    if not candidate.is_absolute():
        candidate = Path(os.path.realpath(root)) / candidate
    try:
        return inside(root, candidate)
    except PathEscapeError:
        raise PathEscapeError(f"path {raw!r} is outside the workspace {Path(os.path.realpath(root))}; "
                              "only files inside it can be read or written") from None


def daily_date(path: Path) -> dt.date | None:
    """The date of a daily-log file name, or None for any other name."""
    match = DAILY_NAME.match(path.name)
    if not match:
        return None
    try:
        return dt.date(int(match.group(1)), int(match.group(2)), int(match.group(3)))
    except ValueError:
        return None
