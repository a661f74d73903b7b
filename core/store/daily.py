"""Daily logs `memory/YYYY-MM-DD.md`: append-only, one fact per bullet.

Appends are never replaces: one write with flush + fsync under a lock, so an
agent's appends and a flush running at the same moment both land whole. The
line numbers an append landed on are returned, so a fact's provenance can
point at them. Secret values (a pasted password, a token) are redacted before
the write, whoever appends: a flush, an agent's tool call, a person's CLI line.
"""
from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass
from pathlib import Path

from core.errors import CoreError
from core.secrets import redact_count
from core.store.atomic import append_counted, fsync_dir
from core.store.fileio import confined_tree, make_folder
from core.store.paths import WorkspacePaths, confine, daily_date, inside
from core.store.textio import escape_controls

FLUSH_HEADING = "## Memory Flush — "


@dataclass(frozen=True)
class DailyLog:
    date: dt.date
    path: Path
    archived: bool


@dataclass(frozen=True)
class Appended:
    path: Path
    first_line: int   # 1-based, inclusive
    last_line: int
    redacted: int = 0   # secret values replaced by `[redacted <kind>]` before the write
    text: str = ""      # what was appended (after redaction, before the title)


def as_bullets(text: str) -> str:
    """Each non-empty line as a `- ` bullet (lines already bullets are kept)."""
    out = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        out.append(stripped if stripped[:2] in ("- ", "* ") else f"- {stripped}")
    return "\n".join(out)


def append_to_daily(paths: WorkspacePaths, text: str, day: dt.date | None = None) -> Appended:
    """Append `text` to the day's log (creating it with a `# YYYY-MM-DD` title) and say which lines it took."""
    day = day or dt.date.today()
    path = paths.daily_log(day)
    content, redacted = redact_count(escape_controls(text.rstrip("\n"), keep="\t\n"))
    leading_blank = len(content) - len(content.lstrip("\n"))  # kept: a blank line before a heading
    real = inside(paths.root, path)        # PathEscapeError for a log that is a link out
    title = ""
    if not real.exists() or real.stat().st_size == 0:
        title = f"# {day.isoformat()}\n\n"  # two racing first appenders may both add one: harmless
    _offset, before = append_counted(real, title + content + "\n", root=paths.root)
    first = before + 1 + title.count("\n") + leading_blank
    return Appended(path=path, first_line=first, last_line=first + content.lstrip("\n").count("\n"),
                    redacted=redacted, text=content)


def flush_block(bullets: str, when: dt.datetime | None = None) -> str:
    when = when or dt.datetime.now().astimezone()
    return f"\n{FLUSH_HEADING}{when.isoformat(timespec='seconds')}\n{bullets.rstrip()}\n"


def list_daily_logs(paths: WorkspacePaths, include_archive: bool = True) -> list[DailyLog]:
    """Every daily log, oldest first: dated files directly in memory/ and in folders nested under it
    (`memory/2026-02/…`), hook-named ones too (`2026-02-03-slug.md`); anything under memory/archive/
    counts as archived and is listed only with `include_archive`."""
    logs = []
    archive = paths.archive_dir
    for path in confined_tree(paths.root, paths.memory_dir, ".md"):
        day = daily_date(path)
        if day is None:
            continue
        archived = archive in path.parents
        if archived and not include_archive:
            continue
        logs.append(DailyLog(date=day, path=path, archived=archived))
    return sorted(logs, key=lambda log: (log.date, log.archived, str(log.path)))


def archive_daily_log(paths: WorkspacePaths, rel_path: str) -> str:
    """Move one daily log into memory/archive/ by rename (atomic, and the mtime is kept so the dream
    watermark is not disturbed), keeping the folders it was nested in. Returns its new relative path."""
    source = confine(paths.root, rel_path)
    memory = paths.memory_dir.resolve()
    archive_root = paths.archive_dir.resolve()
    if memory not in source.parents or archive_root in source.parents or daily_date(source) is None:
        raise CoreError(f"{rel_path} is not a daily log in memory/ outside its archive")
    inside(paths.root, paths.archive_dir)     # an archive/ that is a link out is refused
    nested = source.parent.relative_to(memory)
    archive = make_folder(paths.root, archive_root / nested)     # made without following a link
    target = archive / source.name
    if target.exists():
        # Both exist (an agent re-created an archived day): keep both, the newer under a suffix.
        target = archive / f"{source.stem}.{int(source.stat().st_mtime)}.md"
    os.replace(source, target)
    fsync_dir(archive)
    fsync_dir(source.parent)
    return paths.relative(paths.archive_dir / nested / target.name)
