"""What a dream may read: a MEMORY.md or a daily log too large for it is refused with one clear line.

A dream compares every bullet of MEMORY.md with the others and reads each new log whole: a
100,000-line MEMORY.md ran 344 s and then asked for 37 GiB; a 200 MB log was still being read
after ten minutes. Before any of that, the sizes are checked against the settings
(dream.max_input_bytes, dream.max_memory_lines) and the dream stops at once with the file, its
size and what to do.
"""
from __future__ import annotations

import os

from core.errors import CoreError
from core.store.daily import list_daily_logs
from core.store.paths import WorkspacePaths


class InputTooLargeError(CoreError):
    """A file is over the size a dream reads."""


def count_lines(path, limit: int) -> int:
    """Lines of `path`, counted a block at a time; counting stops once past `limit`."""
    total = 0
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            total += block.count(b"\n")
            if total > limit:
                break
    return total


def check_dream_inputs(paths: WorkspacePaths, settings, since_mtime: float = 0.0) -> None:
    """InputTooLargeError naming the first file a dream must not read: MEMORY.md over
    `settings.max_input_bytes` or `settings.max_memory_lines`, or a daily log changed after
    `since_mtime` (one the dream would read) over `settings.max_input_bytes`."""
    limit, max_lines = settings.max_input_bytes, settings.max_memory_lines
    try:
        size = os.stat(paths.memory_md).st_size
    except OSError:
        size = 0
    if limit > 0 and size > limit:
        raise InputTooLargeError(f"MEMORY.md is {size / 1e6:,.1f} MB, over the {limit / 1e6:,.1f} MB a dream reads "
                                 "(dream.max_input_bytes): move old sections into another file, or raise the setting")
    if size and max_lines > 0:
        lines = count_lines(paths.memory_md, max_lines)
        if lines > max_lines:
            raise InputTooLargeError(f"MEMORY.md has over {max_lines:,} lines, more than a dream compares "
                                     "(dream.max_memory_lines): move old sections into another file, "
                                     "or raise the setting")
    for log in list_daily_logs(paths):
        try:
            stat = os.stat(log.path)
        except OSError:
            continue
        if limit > 0 and stat.st_mtime > since_mtime and stat.st_size > limit:
            raise InputTooLargeError(f"{paths.relative(log.path)} is {stat.st_size / 1e6:,.1f} MB, over the "
                                     f"{limit / 1e6:,.1f} MB a dream reads (dream.max_input_bytes): split it or "
                                     "archive it (search still finds its lines), or raise the setting")
