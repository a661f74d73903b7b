"""The HarnessAgent's tools: memory_search, memory_get, read_file, checkpoint_save/load, progress_update.

Each tool takes a dict of arguments and returns text for the model. A tool that
fails returns its error as text (the model can try something else), never
raises into the agent loop. Reads are confined to the workspace, and bounded:
read_file and memory_get are exempt from eviction, so they page by lines.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Callable

from core.errors import CoreError
from core.harness.transcript import clip

MAX_READ_CHARS = 12_000
MEMORY_PREFIXES = ("MEMORY.md", "memory/", "sessions/", "progress.md")
PATH_INPUTS = ("path",)
_QUOTED = re.compile(r'"[^"]*"')


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    primary: str                      # the argument a one-string call fills ("input")
    run: Callable[[dict[str, Any]], str]
    side_effect: bool = False


def _int(value: Any, default: int) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


class ToolBox:
    def __init__(self, workspace, checkpointer, anchor_store, *, search_k: int = 5, extra: tuple[Tool, ...] = ()):
        self.ws = workspace
        self.checkpointer = checkpointer
        self.anchor = anchor_store
        self.search_k = search_k
        self.tools: dict[str, Tool] = {t.name: t for t in [
            Tool("memory_search", 'search long-term memory, daily logs and past sessions; input: the words to '
                                  'look for, e.g. "database port"', "query", self.memory_search),
            Tool("memory_get", 'read lines of MEMORY.md or a memory/ file; input: a path, e.g. "MEMORY.md" or '
                               '"memory/2026-11-30.md:10-20" for lines 10 to 20', "path", self.memory_get),
            Tool("read_file", 'read a workspace file, e.g. an evicted tool result; input: a path, e.g. '
                              '"progress.md" or "AGENTS.md:1-40"', "path", self.read_file),
            Tool("checkpoint_save", 'save a checkpoint of the task; input: what was just achieved, e.g. '
                                    '"the parser tests pass"', "note", self.checkpoint_save, side_effect=True),
            Tool("checkpoint_load", 'show the latest checkpoint; input: "" (nothing)', "session",
                 self.checkpoint_load),
            Tool("progress_update", 'record progress in progress.md; input: what is done now, e.g. '
                                    '"CSV export written"', "done", self.progress_update, side_effect=True),
        ]}
        self.tools.update({t.name: t for t in extra})    # the agent's own (hand_off when it has peers)

    @property
    def names(self) -> list[str]:
        return list(self.tools)

    def describe(self) -> str:
        return "\n".join(f"- {t.name}: {t.description}" for t in self.tools.values())

    def free_text(self, name: str) -> bool:
        """Whether a tool's input is words (a query, a note) rather than a path: a path is checked by
        the tool itself, words copied from the prompt only by the harness."""
        tool = self.tools.get(name)
        return tool is not None and tool.primary not in PATH_INPUTS

    def wording(self) -> str:
        """The descriptions as a copied input would repeat them: every word, and the examples of the
        free-text inputs; a path example ("MEMORY.md") is left out, since reading it is a real call."""
        return "\n".join(t.description if t.primary not in PATH_INPUTS else _QUOTED.sub(" ", t.description)
                         for t in self.tools.values())

    def arguments_for(self, name: str, text: str) -> dict[str, Any]:
        """A one-string call as the tool's arguments ({"query": text} for memory_search)."""
        tool = self.tools[name]
        if name in ("memory_get", "read_file") and ":" in text:
            path, _, span = text.rpartition(":")
            start, _, end = span.partition("-")
            if start.strip().isdigit():
                args: dict[str, Any] = {"path": path.strip(), "start": int(start)}
                if end.strip().isdigit():
                    args["end"] = int(end)
                return args
        return {tool.primary: text.strip()} if text.strip() else {}

    def call(self, name: str, arguments: dict[str, Any]) -> tuple[str, str]:
        """(result text, error) — error is "" on success."""
        tool = self.tools.get(name)
        if tool is None:
            return f"error: no tool {name!r}; tools are {', '.join(self.tools)}", "unknown tool"
        try:
            return tool.run(arguments), ""
        except CoreError as exc:
            return f"error: {exc}", str(exc)

    # ----- the tools --------------------------------------------------------------------------
    def memory_search(self, args: dict[str, Any]) -> str:
        query = str(args.get("query") or "").strip()
        if not query:
            return "error: memory_search needs a query"
        try:
            result = self.ws.search(query, k=_int(args.get("k"), self.search_k))
        except ImportError as exc:  # an install without the search engine
            raise CoreError(f"search is not available: {exc}") from exc
        hits = getattr(result, "hits", result)
        if not hits:
            return f"no results for {query!r}"
        return "\n".join(f"{h.path}:{h.line}: {clip(' '.join(str(h.text).split()), 300)}" for h in hits)

    def _read_lines(self, args: dict[str, Any]) -> str:
        path = str(args.get("path") or "").strip()
        if not path:
            raise CoreError("give a path")
        resolved = self.ws.resolve(path)          # PathEscapeError outside the workspace
        if not resolved.is_file():
            raise CoreError(f"no file {path!r} in the workspace")
        rel = self.ws.relative(resolved)
        lines = self.ws.read(rel).text.split("\n")
        start = max(1, _int(args.get("start"), 1))
        end = min(len(lines), _int(args.get("end"), len(lines)))
        out, used, last = [], 0, start - 1
        for n in range(start, end + 1):
            line = lines[n - 1]
            if used + len(line) > MAX_READ_CHARS and out:
                break
            out.append(f"{n}: {line[:MAX_READ_CHARS]}")
            used += len(line) + 1
            last = n
        more = f"\n…({rel} continues: read {rel}:{last + 1}-{end})" if last < end else ""
        return f"{rel} lines {start}-{last} of {len(lines)}:\n" + "\n".join(out) + more

    def memory_get(self, args: dict[str, Any]) -> str:
        path = str(args.get("path") or "MEMORY.md").strip()
        rel = self.ws.relative(self.ws.resolve(path))
        if not rel.startswith(MEMORY_PREFIXES):
            raise CoreError(f"memory_get reads MEMORY.md, memory/, sessions/ and progress.md; use read_file for {rel}")
        return self._read_lines({**args, "path": rel})

    def read_file(self, args: dict[str, Any]) -> str:
        return self._read_lines(args)

    def checkpoint_save(self, args: dict[str, Any]) -> str:
        note = " ".join(str(args.get("note") or "").split())
        if note:
            self.checkpointer.completed.append(note)
        data = self.checkpointer.milestone(note or "checkpoint")
        return f"saved checkpoint {data['checkpoint_id']}"

    def checkpoint_load(self, args: dict[str, Any]) -> str:
        data = self.checkpointer.latest()
        if data is None:
            return "no checkpoint saved yet in this session"
        keep = {k: data[k] for k in ("checkpoint_id", "timestamp", "target", "completed_steps", "pending_steps",
                                     "last_action", "error_state") if k in data}
        return json.dumps(keep, ensure_ascii=False)

    def progress_update(self, args: dict[str, Any]) -> str:
        blockers = args.get("blockers")
        anchor = self.anchor.update(goal=args.get("goal"), done=args.get("done"),
                                    blockers=[str(b) for b in blockers] if isinstance(blockers, list) else None,
                                    next_step=args.get("next_step"))
        return f"progress.md updated ({len(anchor.progress)} item(s) done; next: {anchor.next_step or '(not set)'})"
