"""Which files are daily logs: flat, hook-named (-slug, -HHMM), nested month folders, archives."""
from __future__ import annotations

import datetime as dt
import os

import pytest

from core.store.daily import archive_daily_log, list_daily_logs
from core.store.paths import WorkspacePaths, daily_date


@pytest.mark.parametrize("name, day", [
    ("2026-02-03.md", dt.date(2026, 2, 3)),
    ("2026-02-03-vendor-pitch.md", dt.date(2026, 2, 3)),
    ("2026-02-03-1430.md", dt.date(2026, 2, 3)),
    ("2026-02-03.1767000000.md", dt.date(2026, 2, 3)),
    ("2026-02-30.md", None),          # no such day
    ("notes-2026-02-03.md", None),    # the date must open the name
    ("2026-02-03.txt", None),
    ("2026-02-03-.md", dt.date(2026, 2, 3)),
])
def test_a_daily_log_is_named_by_its_date_with_any_tail(name, day, tmp_path):
    assert daily_date(tmp_path / name) == day


def _write(root, rel, text="- a line\n"):
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_every_log_the_agent_wrote_is_listed_and_archives_only_when_asked(tmp_path):
    paths = WorkspacePaths(tmp_path)
    for rel in ("memory/2026-02-01.md", "memory/2026-02-02-standup.md", "memory/2026-02-02-0915.md",
                "memory/2026-01/2026-01-15.md", "memory/archive/2025-12/2025-12-24.md",
                "memory/archive/2025-11-02.md", "memory/notes.md", "memory/.hidden/2026-02-05.md"):
        _write(tmp_path, rel)
    live = [paths.relative(log.path) for log in list_daily_logs(paths, include_archive=False)]
    assert live == ["memory/2026-01/2026-01-15.md", "memory/2026-02-01.md",
                    "memory/2026-02-02-0915.md", "memory/2026-02-02-standup.md"]
    every = {paths.relative(log.path): log.archived for log in list_daily_logs(paths, include_archive=True)}
    assert every["memory/archive/2025-12/2025-12-24.md"] is True
    assert every["memory/archive/2025-11-02.md"] is True
    assert every["memory/2026-01/2026-01-15.md"] is False
    assert "memory/notes.md" not in every and "memory/.hidden/2026-02-05.md" not in every


def test_a_nested_folder_that_links_out_is_not_entered(tmp_path):
    outside = tmp_path / "outside"
    _write(outside, "2026-02-09.md")
    ws = tmp_path / "ws"
    _write(ws, "memory/2026-02-10.md")
    os.symlink(outside, ws / "memory" / "linked")
    names = [log.path.name for log in list_daily_logs(WorkspacePaths(ws))]
    assert names == ["2026-02-10.md"]


def test_archiving_a_nested_log_keeps_its_folder_and_its_mtime(tmp_path):
    paths = WorkspacePaths(tmp_path)
    source = _write(tmp_path, "memory/2026-01/2026-01-15-retro.md", "- kept\n")
    os.utime(source, (1_700_000_000, 1_700_000_000))
    rel = archive_daily_log(paths, "memory/2026-01/2026-01-15-retro.md")
    assert rel == "memory/archive/2026-01/2026-01-15-retro.md"
    moved = tmp_path / rel
    assert moved.read_text() == "- kept\n" and moved.stat().st_mtime == 1_700_000_000
    assert not source.exists()
