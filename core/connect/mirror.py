"""Mirror MEMORY.md into Claude Code's own memory file, within what Claude Code loads of it.

Claude Code keeps a memory file per project, `~/.claude/projects/<project>/memory/MEMORY.md`
(the project folder's path with every character other than a letter or digit as "-"),
and loads only its first 200 lines and 25 KB into a session. Reverie writes its curated
MEMORY.md (provenance comments stripped) as one marked block at the top of that file,
line by line while it fits beside what Claude Code wrote there itself, and reports a
meter: how much of MEMORY.md fits and how much of the load limit the file uses. Running
it again replaces the block; Claude Code's own lines stay as they are.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from core.connect.clients import Target
from core.connect.writer import Planned, read_text
from core.store.memory_md import strip_comments

LINE_LIMIT = 200
BYTE_LIMIT = 25 * 1024
BEGIN = "<!-- reverie:begin: mirrored from {source} by `reverie connect claude-code --mirror-memory`; " \
        "edits inside this block are replaced -->"
END = "<!-- reverie:end -->"
_BLOCK = re.compile(r"<!-- reverie:begin:.*?<!-- reverie:end -->\n?", re.S)


@dataclass(frozen=True)
class Meter:
    kept_lines: int            # lines of MEMORY.md in the mirror
    total_lines: int           # lines of MEMORY.md (comments stripped, blank runs kept)
    file_lines: int            # lines of the whole file after the mirror
    file_bytes: int

    def describe(self) -> str:
        left = self.total_lines - self.kept_lines
        fit = f"all {self.total_lines} lines of MEMORY.md fit" if not left else \
            f"{self.kept_lines} of {self.total_lines} lines of MEMORY.md fit ({left} left out: trim MEMORY.md or " \
            f"Claude Code's own notes)"
        return (f"{fit}; the file uses {self.file_lines}/{LINE_LIMIT} lines and "
                f"{self.file_bytes / 1024:.1f}/{BYTE_LIMIT // 1024} KB of what Claude Code loads")


def encode_project(project: Path) -> str:
    return re.sub(r"[^A-Za-z0-9]", "-", str(Path(project).expanduser().resolve()))


def memory_target(project: Path, home: Path | None = None) -> Target:
    path = Path(home or Path.home()) / ".claude" / "projects" / encode_project(project) / "memory" / "MEMORY.md"
    return Target("claude-code", "user", path, "markdown")


def plan_mirror(ws, target: Target) -> tuple[Planned, Meter]:
    old = read_text(target.path)
    own = _BLOCK.sub("", old)
    own_lines = own.splitlines()
    lines = strip_comments(ws.read_memory().text).rstrip("\n").splitlines()
    begin = BEGIN.format(source=ws.paths.memory_md)
    room_lines = LINE_LIMIT - len(own_lines) - 2
    room_bytes = BYTE_LIMIT - len(own.encode("utf-8")) - len(begin.encode("utf-8")) - len(END) - 2
    kept = []
    for line in lines:
        size = len(line.encode("utf-8")) + 1
        if len(kept) + 1 > room_lines or size > room_bytes:
            break
        kept.append(line)
        room_bytes -= size
    block = "\n".join([begin, *kept, END]) + "\n"
    new = block + own
    meter = Meter(len(kept), len(lines), len(new.splitlines()), len(new.encode("utf-8")))
    return Planned(target, old, new), meter
