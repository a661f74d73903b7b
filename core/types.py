"""Small values shared across core and the GUI."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Changes:
    """What a mutation changed, so the GUI can refresh exactly the views that show it.

    `paths` are workspace-relative POSIX paths; `kinds` name the areas touched
    ("memory", "daily", "session", "checkpoint", "handoff", "progress", "settings",
    "proposal", "index"); `info` carries small extra facts (line range appended, new hash).
    """

    paths: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    info: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def empty(self) -> bool:
        return not self.paths and not self.kinds

    def __or__(self, other: "Changes") -> "Changes":
        return Changes(paths=tuple(dict.fromkeys(self.paths + other.paths)),
                       kinds=tuple(dict.fromkeys(self.kinds + other.kinds)),
                       info={**self.info, **other.info})


NO_CHANGES = Changes()


def kind_of(rel_path: str) -> str:
    """The area a workspace-relative path belongs to."""
    if rel_path == "MEMORY.md":
        return "memory"
    if rel_path == "progress.md":
        return "progress"
    head = rel_path.split("/", 1)[0]
    return {"memory": "daily", "sessions": "session", "checkpoints": "checkpoint", "handoffs": "handoff",
            "large_tool_results": "evicted", ".reverie": "private"}.get(head, "file")
