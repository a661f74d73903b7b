"""Reverie's MCP server on stdio (`reverie mcp PATH`), with the official `mcp` SDK 2.x.

Tools: memory_search, memory_get, memory_recent, memory_append, checkpoint_save,
checkpoint_load, handoff_create, handoff_read, progress_update, each annotated with
read-only / destructive / idempotent hints. Every call is recorded in the workspace's
activity log under the client's name (core/mcp/activity.py), so an agent that only
reads keeps the workspace active. Resources: MEMORY.md (provenance
comments stripped) and today's daily log. The tools themselves live in
core/mcp/tools.py; this module only wires them to the protocol.

stdout carries protocol messages and nothing else. `reserve_stdout()` moves the
real stdout to a private descriptor and points fd 1 at stderr before anything
else runs, so a stray print, a library's progress bar or a child process can
never corrupt the stream; logs go to stderr or to a file.

Workspace calls run on one dedicated thread: the SDK runs synchronous tools on a
thread pool, but the search index's SQLite connection and the embedding model
belong to one thread, and one thread also keeps the calls of an agent in order.
"""
from __future__ import annotations

import asyncio
import logging
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from io import TextIOWrapper
from typing import Annotated, Any, Literal

from pydantic import Field

from core.errors import CoreError
from core.mcp.activity import ActivityMiddleware
from core.mcp.recent import memory_recent as recent_activity
from core.mcp.tools import MemoryTools
from core.mcp.wire import CheckedLines, claim_stdin

log = logging.getLogger("reverie.mcp")

SERVER_NAME = "reverie"
INSTRUCTIONS = (
    "Long-term memory of this agent, kept as plain files: MEMORY.md (curated facts), memory/YYYY-MM-DD.md "
    "(daily logs), sessions/, checkpoints/, handoffs/ and progress.md. Starting a task, memory_recent tells "
    "what happened lately. Search before you ask the person "
    "something they may have told you already (memory_search, then memory_get for the lines around a hit). "
    "Write new durable facts with memory_append (one fact per call). Keep progress.md current with "
    "progress_update, save a checkpoint before side effects, and read it back after a restart."
)
MEMORY_URI = "memory://MEMORY.md"
TODAY_URI = "memory://daily/today"


def reserve_stdout() -> TextIOWrapper:
    """The process's real stdout as a private text stream; fd 1 now goes to stderr."""
    sys.stdout.flush()
    private = os.dup(1)
    os.set_inheritable(private, False)   # child processes (the model worker) must not inherit the wire
    os.dup2(2, 1)
    return TextIOWrapper(os.fdopen(private, "wb", closefd=True), encoding="utf-8", newline="\n")


def configure_logging(level: str = "WARNING", log_file: str | None = None) -> None:
    """Logs to stderr (or a file), never stdout; set before the SDK would install its own handler."""
    handler: logging.Handler = logging.FileHandler(log_file, encoding="utf-8") if log_file \
        else logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())


class _OneThread:
    """Runs blocking workspace calls on a single worker thread, in order."""

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="reverie-mcp")

    async def __call__(self, fn, *args, **kwargs):
        from mcp.server.mcpserver.exceptions import ToolError

        try:
            return await asyncio.get_running_loop().run_in_executor(self._pool, partial(fn, *args, **kwargs))
        except CoreError as exc:
            # An error a person or agent can act on: its message goes back as the tool's error text.
            raise ToolError(str(exc)) from exc
        except OSError as exc:
            # The disk said no (read-only, full): say so in one line rather than "Error executing tool".
            where = f" ({exc.filename})" if getattr(exc, "filename", None) else ""
            raise ToolError(f"{exc.strerror or exc}{where}") from exc

    def shutdown(self, last=None) -> None:
        """Stop the thread, after running `last` on it (the index belongs to that thread)."""
        if last is not None:
            self._pool.submit(last).result()
        self._pool.shutdown(wait=True)


async def read_resource(run: _OneThread, uri: str, read) -> str:
    """`read()` on the workspace thread; a failure is the resource's error with its reason in one line
    (the SDK would answer only "Error reading resource <uri>")."""
    from mcp.server.mcpserver.exceptions import ResourceError, ToolError

    try:
        return await run(read)
    except ToolError as exc:            # a CoreError or OSError, already put in words
        raise ResourceError(f"cannot read {uri}: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise ResourceError(f"cannot read {uri}: the file is not UTF-8 text (byte {exc.start})") from exc
    except Exception as exc:   # noqa: BLE001 - any other failure still says what it was
        raise ResourceError(f"cannot read {uri}: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}") from exc


def build_server(workspace, *, tools: MemoryTools | None = None, runner: _OneThread | None = None,
                 activity: ActivityMiddleware | None = None):
    """An MCPServer with Reverie's tools and resources over `workspace`."""
    from mcp.server.mcpserver import MCPServer
    from mcp_types import ToolAnnotations

    tools = tools or MemoryTools(workspace)
    run = runner or _OneThread()
    server = MCPServer(SERVER_NAME, instructions=INSTRUCTIONS, version=_version(), log_level="WARNING")
    gap = workspace.settings.dream.idle_minutes * 60.0
    server.middleware.append(activity or ActivityMiddleware(workspace.paths, run, session_gap_s=gap))
    reads = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
    adds = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False,
                           open_world_hint=False)
    # progress_update replaces the blockers and the next step of progress.md (its history keeps the old)
    replaces = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False,
                               open_world_hint=False)

    @server.tool(annotations=reads)
    async def memory_search(
        query: Annotated[str, Field(description="what to look for, in plain words (any language)")],
        k: Annotated[int, Field(description="how many hits", ge=1, le=50)] = 8,
        mode: Annotated[Literal["keyword", "meaning", "hybrid", "vector"] | None,
                        Field(description="keyword (the words), meaning (similar sense) or hybrid (both); "
                                          "default: the workspace setting. 'vector' is the older name of meaning")] = None,
        kinds: Annotated[list[Literal["memory", "daily", "session", "handoff", "checkpoint", "progress", "tasks"]] | None,
                         Field(description="only these kinds of file (tasks = hand-offs, checkpoints, progress.md); "
                                           "default: all")] = None,
        since: Annotated[str | None, Field(description="only lines dated on or after this day, YYYY-MM-DD")] = None,
        until: Annotated[str | None, Field(description="only lines dated on or before this day, YYYY-MM-DD")] = None,
    ) -> dict[str, Any]:
        """Search MEMORY.md (and USER.md, AGENTS.md ...), the daily logs, past sessions, hand-offs, checkpoints
        and progress.md. `hits` (`count` of them) are path:line with the line's text and why it matched
        (match: words / meaning / both); `nearby` lists lines found only through their neighbours' words,
        as context, not counted. Read around a hit with memory_get."""
        return await run(tools.memory_search, query, k, mode, kinds, since, until)

    @server.tool(annotations=reads)
    async def memory_get(
        path: Annotated[str, Field(description="workspace-relative path, e.g. MEMORY.md or memory/2026-11-30.md")],
        start: Annotated[int, Field(description="first line, 1-based", ge=1)] = 1,
        end: Annotated[int | None, Field(description="last line, inclusive (default: to the end)", ge=1)] = None,
    ) -> str:
        """Read numbered lines of a file in the memory workspace (never outside it). A file that does
        not exist yet reads as empty."""
        return await run(tools.memory_get, path, start, end)

    @server.tool(annotations=reads)
    async def memory_recent(
        days: Annotated[int, Field(description="how many days back, today included", ge=1, le=90)] = 7,
    ) -> dict[str, Any]:
        """What happened lately: the daily-log lines of the last N days, the sessions that ended and
        each agent's last activity. Call it when you start a task."""
        return await run(recent_activity, workspace, days)

    @server.tool(annotations=adds)
    async def memory_append(
        text: Annotated[str, Field(description="one durable fact, one line")],
        source: Annotated[str | None, Field(description="where the fact comes from (a file, a URL, "
                                                        "'conversation')")] = None,
    ) -> dict[str, Any]:
        """Append one fact as a bullet to today's daily log (memory/YYYY-MM-DD.md). A dream later
        consolidates the logs into MEMORY.md."""
        return await run(tools.memory_append, text, source)

    @server.tool(annotations=adds)
    async def checkpoint_save(
        target: Annotated[str, Field(description="what the task is meant to achieve")],
        completed_steps: Annotated[list[str], Field(description="steps done so far")],
        pending_steps: Annotated[list[str], Field(description="steps still to do")],
        session_id: Annotated[str, Field(description="your session id (letters, digits, . _ -)")] = "mcp",
        context_summary: str = "",
        last_action: str = "",
        artifacts: Annotated[dict[str, str] | None,
                             Field(description="produced files: path -> sha256 hex digest")] = None,
        error_state: str | None = None,
        tasks: Annotated[list[dict[str, Any]] | None,
                         Field(description="optional task graph: [{id, title, status: pending|in_progress|"
                                           "done|failed, depends_on: [ids]}]")] = None,
    ) -> dict[str, Any]:
        """Save a checkpoint of the current task, so a restarted agent can resume where this one stopped.
        Save one before every side effect."""
        return await run(tools.checkpoint_save, target, completed_steps, pending_steps, session_id=session_id,
                         context_summary=context_summary, last_action=last_action, artifacts=artifacts,
                         error_state=error_state, tasks=tasks)

    @server.tool(annotations=reads)
    async def checkpoint_load(
        session_id: Annotated[str | None, Field(description="a session id; default: the newest of any")] = None,
    ) -> dict[str, Any]:
        """The newest checkpoint (of a session, or of any), with the next task to resume."""
        return await run(tools.checkpoint_load, session_id)

    @server.tool(annotations=adds)
    async def handoff_create(
        from_agent: str, to_agent: str,
        original_target: Annotated[str, Field(description="the task as first given")],
        why_this_agent: str,
        completed_work: list[str], known_constraints: list[str], failed_attempts: list[str],
        current_state: str, success_criteria: str, termination_condition: str,
        task_id: Annotated[str | None, Field(description="groups the hops of one task; default: the "
                                                         "original target")] = None,
    ) -> dict[str, Any]:
        """Hand the task to another agent with everything it needs. Refused when the task would go back
        to an agent that already handed it on (a loop)."""
        packet = {"from_agent": from_agent, "to_agent": to_agent, "original_target": original_target,
                  "why_this_agent": why_this_agent, "completed_work": completed_work,
                  "known_constraints": known_constraints, "failed_attempts": failed_attempts,
                  "current_state": current_state, "success_criteria": success_criteria,
                  "termination_condition": termination_condition}
        return await run(tools.handoff_create, packet, task_id)

    @server.tool(annotations=reads)
    async def handoff_read(
        handoff_id: Annotated[str, Field(description="a hand-off id; empty: the newest one")] = "",
        to_agent: Annotated[str, Field(description="with no id: the newest addressed to this agent")] = "",
    ) -> dict[str, Any]:
        """Read a hand-off packet."""
        return await run(tools.handoff_read, handoff_id, to_agent)

    @server.tool(annotations=replaces)
    async def progress_update(
        goal: Annotated[str | None, Field(description="the task's original goal (set once)")] = None,
        done: Annotated[str | None, Field(description="what was just finished")] = None,
        blockers: Annotated[list[str] | None, Field(description="the current blockers (replaces them)")] = None,
        next_step: Annotated[str | None, Field(description="the next step")] = None,
    ) -> str:
        """Update progress.md, the attention anchor of the current task (goal, progress, blockers,
        next step). Returns the file as it is now."""
        return await run(tools.progress_update, goal=goal, done=done, blockers=blockers, next_step=next_step)

    @server.resource(MEMORY_URI, name="MEMORY.md", mime_type="text/markdown",
                     description="Curated long-term memory (provenance comments stripped)")
    async def memory_resource() -> str:
        return await read_resource(run, MEMORY_URI, tools.memory_md)

    @server.resource(TODAY_URI, name="today's daily log", mime_type="text/markdown",
                     description="memory/YYYY-MM-DD.md for today (empty until something is logged)")
    async def today_resource() -> str:
        return await read_resource(run, TODAY_URI, tools.today_log)

    return server


async def serve(server, stdin=None, stdout=None) -> None:
    """Serve one client over stdio until its stdin closes."""
    import anyio
    from mcp.server.stdio import stdio_server

    out = anyio.wrap_file(stdout) if stdout is not None else None
    lines = CheckedLines(stdin if stdin is not None else claim_stdin())   # malformed lines get their error reply
    async with stdio_server(stdin=lines, stdout=out) as (read_stream, write_stream):
        lines.attach(write_stream)
        lowlevel = server._lowlevel_server   # MCPServer.run_stdio_async() offers no way to pass our stream
        await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())


def run_stdio(workspace_path: str, *, protocol_out: TextIOWrapper | None = None) -> int:
    from core.workspace import Workspace

    workspace = Workspace.open(workspace_path)
    runner = _OneThread()
    activity = ActivityMiddleware(workspace.paths, runner, session_gap_s=workspace.settings.dream.idle_minutes * 60.0)
    server = build_server(workspace, runner=runner, activity=activity)
    log.info("serving %s over stdio", workspace.root)
    try:
        asyncio.run(serve(server, stdout=protocol_out))
    finally:
        runner.shutdown(last=lambda: (activity.finish(), workspace.close()))
    return 0


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("reverie")
    except Exception:   # a frozen bundle may carry no distribution metadata
        return "0"

