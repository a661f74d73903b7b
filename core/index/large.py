"""Indexing a file too large to hold in memory: read in blocks of lines, rows written block by block.

A 200 MB daily log read whole took 4 GB (its bytes, its text, every row at once) and two minutes of
every sync that saw it change. Over `LARGE_FILE_BYTES` (the setting search.large_file_bytes) a file
is read BLOCK_LINES lines at a time: each block becomes rows with the ordinary rules (core/index/lines.py;
the heading a block starts under is carried over, so its rows keep their section), written in a
transaction of its own, and the block is let go. Memory stays bounded by one block, whatever the size.

Its rows are keyword-searchable only (vec = KEYWORD_ONLY): a vector per line of a log that large would
cost hours of embedding and gigabytes of vector index. When the file only grew since it was indexed
(an append-only log), only the lines after the indexed ones are read and added.
"""
from __future__ import annotations

import dataclasses
import hashlib
import re
from pathlib import Path
from typing import BinaryIO, Iterator

from core.index.lines import _HEADING, IndexOptions, Row, file_rows
from core.store.textio import decode_lossy

LARGE_FILE_BYTES = 10_000_000
BLOCK_LINES = 20_000
KEYWORD_ONLY = 2          # lines.vec: never embedded (0 = waiting for its vector, 1 = in the vector index)


def is_large(size: int, limit: int = LARGE_FILE_BYTES) -> bool:
    return limit > 0 and size > limit


@dataclasses.dataclass
class Prefix:
    """What the index already holds of a file that only grew: its byte size, lines and heading."""
    size: int = 0
    lines: int = 0
    heading: str = ""


_HEADING_LINE = re.compile(rb"^[ \t]{0,3}#{1,6}[ \t]+[^\n]*$", re.MULTILINE)


def grown_from(handle: BinaryIO, old_size: int, old_hash: str):
    """(the indexed prefix, the running digest after it) when the file's first `old_size` bytes are still
    the ones indexed (their blake2b is `old_hash`) and end a line; None when the file changed otherwise
    (it is then read whole again). Read a block at a time: an append to a 200 MB log costs one pass at
    disk speed, not a line-by-line walk."""
    if old_size <= 0:
        return None
    digest = hashlib.blake2b(digest_size=16)
    prefix = Prefix(size=old_size)
    handle.seek(0)
    left, last = old_size, b""
    while left > 0:
        chunk = handle.read(min(1 << 20, left))
        if not chunk:
            return None
        digest.update(chunk)
        left -= len(chunk)
        prefix.lines += chunk.count(b"\n")
        last = chunk[-1:]
    prefix.heading = _last_heading(handle, old_size)
    if last != b"\n" or digest.copy().hexdigest() != old_hash:
        return None
    return prefix, digest


def _last_heading(handle: BinaryIO, end: int) -> str:
    """The last heading line before byte `end`, searched backwards a block at a time ("" when none)."""
    while end > 0:
        start = max(0, end - (1 << 20))
        handle.seek(start)
        chunk = handle.read(end - start)
        if start > 0:                       # the first, partial line belongs to the block before
            cut = chunk.find(b"\n") + 1
            if cut == 0:
                end = start
                continue
            chunk, end = chunk[cut:], start + cut
        else:
            end = 0
        headings = _HEADING_LINE.findall(chunk)
        if headings:
            return headings[-1].decode("utf-8", "replace").rstrip("\r")
    return ""


def blocks(handle: BinaryIO, rel: str, options: IndexOptions, digest, start: Prefix | None = None
           ) -> Iterator[tuple[list[Row], list[str]]]:
    """(rows, problems) of each block of lines from where `start` left off (the start of the file when
    None), line numbers the file's own; `digest` is updated with every byte read."""
    start = start or Prefix()
    handle.seek(start.size)
    markdown = rel.endswith(".md")
    heading, first_line = start.heading, start.lines + 1
    while True:
        raw_lines = []
        for raw in handle:
            raw_lines.append(raw)
            if len(raw_lines) >= BLOCK_LINES:
                break
        if not raw_lines:
            return
        data = b"".join(raw_lines)
        digest.update(data)
        text = decode_lossy(data).text
        carried = markdown and bool(heading)
        rows, problems = file_rows(rel, (heading + "\n" + text) if carried else text, options)
        shift = first_line - (2 if carried else 1)
        rows = [Row(row.line + shift, row.text, row.body, row.context, row.etext, row.sources, row.day)
                for row in rows if not (carried and row.line == 1)]
        problems = [_renumber(problem, rel, shift) for problem in problems]
        if markdown:
            for line in text.split("\n"):
                if _HEADING.match(line):
                    heading = line.rstrip("\r")
        first_line += len(raw_lines)
        yield rows, problems


def _renumber(problem: str, rel: str, shift: int) -> str:
    """A problem `rel:N: ...` of a block, with N as the file's own line number."""
    head, sep, rest = problem.partition(": ")
    name, colon, number = head.rpartition(":")
    if sep and colon and name == rel and number.isdigit():
        return f"{rel}:{int(number) + shift}: {rest}"
    return problem
