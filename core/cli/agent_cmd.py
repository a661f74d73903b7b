"""Harness commands: `reverie agent` (interactive chat), `compact`, `flush`, `flushes`.

    reverie agent PATH [--model ID] [--session ID]     chat with the HarnessAgent in a terminal
    (agent, compact and flush also take --backend openai --base-url URL [--server-model NAME]
    [--api-key KEY] [--context N]: a model server the person already runs)
    reverie compact PATH MESSAGES.jsonl [--out FILE]    compact an agent's context (offloads to sessions/)
    reverie flush PATH --session ID                     flush a session log's messages into today's log
    reverie flushes PATH                                every recorded flush and its outcome
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from core.llm.cli_args import add_model_arguments

HELP = """commands: /quit  /compact  /flush  /status  /anchor  /checkpoint  /restart  /handoff AGENT WHY  /help"""


def register(sub) -> None:
    p = sub.add_parser("agent", help="chat with the memory-harness agent on the local model")
    p.add_argument("path", help="the workspace")
    add_model_arguments(p)
    p.add_argument("--session", default="", help="session id (default: a new one)")
    p.add_argument("--max-steps", type=int, default=6, help="model steps per turn at most")
    p.add_argument("--quiet", action="store_true", help="do not show tool calls and harness actions")
    p.add_argument("--name", default="reverie agent", help="this agent's name in hand-offs and the activity log")
    p.add_argument("--peer", action="append", default=[], help="an agent this one may hand its task to (repeatable)")
    p.set_defaults(func=cmd_agent)

    p = sub.add_parser("compact", help="compact a JSONL file of chat messages; the raw prefix goes to sessions/")
    p.add_argument("path", help="the workspace")
    p.add_argument("messages", help="a JSONL file of OpenAI-shaped messages")
    p.add_argument("--session", default="", help="session id for the offloaded log (default: the file's name)")
    add_model_arguments(p, with_model=False)
    p.add_argument("--model", default=None, help="catalog id or GGUF path; 'none' for a summary without a model")
    p.add_argument("--out", default="", help="write the compacted messages here (default: stdout)")
    p.add_argument("--force", action="store_true", help="compact even below the trigger")
    p.add_argument("--no-flush", action="store_true", help="do not flush memories from the prefix")
    p.set_defaults(func=cmd_compact)

    p = sub.add_parser("flush", help="flush durable facts from a session log into today's daily log")
    p.add_argument("path", help="the workspace")
    p.add_argument("--session", required=True, help="the session id (sessions/<id>.log.jsonl)")
    add_model_arguments(p)
    p.set_defaults(func=cmd_flush)

    p = sub.add_parser("flushes", help="list the recorded flushes (written, no_reply, empty, duplicate, failed)")
    p.add_argument("path", help="the workspace")
    p.add_argument("--limit", type=int, default=20)
    p.set_defaults(func=cmd_flushes)


def _open(path: str, args):
    """The workspace, its model settings overridden by the command line's model flags."""
    import dataclasses

    from core.llm.cli_args import model_settings
    from core.workspace import Workspace

    ws = Workspace.open(path)
    if getattr(args, "model", None) == "none":
        args = argparse.Namespace(**{**vars(args), "model": None})
    chosen = model_settings(args, ws.settings.model)
    ws.settings = ws.settings.replace("model", **dataclasses.asdict(chosen))
    return ws


def _client(ws, model: str | None, *, required: bool = False):
    if model == "none":
        if required:
            from core.errors import ConfigError
            raise ConfigError("this command needs a model; give --model ID (a catalog id or a GGUF path)")
        return None
    from core.llm import open_client

    return open_client(ws.settings.model)


# ----- reverie agent ------------------------------------------------------------------------------
def _printer(quiet: bool):
    def on_event(kind: str, data: dict) -> None:
        if quiet or kind in ("answer", "session_end"):
            return
        if kind == "tool":
            mark = " (error)" if data.get("error") else ""
            print(f"  · {data['name']} {data['arguments']}{mark}", flush=True)
        else:
            print(f"  · {kind}: {data}", flush=True)
    return on_event


def cmd_agent(args) -> int:
    from core.errors import CoreError
    from core.harness.agent import HarnessAgent

    ws = _open(args.path, args)
    llm = _client(ws, args.model, required=True)
    agent = HarnessAgent(ws, llm, session_id=args.session or None, max_steps=args.max_steps,
                         on_event=_printer(args.quiet), name=args.name, peers=tuple(args.peer))
    print(f"reverie agent — workspace {ws.root}, model {llm.model_id}, session {agent.session_id}")
    print(HELP)
    try:
        while True:
            try:
                line = input("you> ").strip()
            except EOFError:
                print()
                break
            if not line:
                continue
            if line in ("/quit", "/exit"):
                break
            if line == "/help":
                print(HELP)
            elif line == "/compact":
                result = agent.compactor.compact(agent.history, trigger_messages=1)
                agent.history = result.messages
                print(f"  compacted {result.compacted_count} message(s)" if result.compacted else f"  {result.reason}")
            elif line == "/flush":
                print(f"  flush: {agent.flusher.flush(agent.history, session_id=agent.session_id).outcome}")
            elif line == "/status":
                tokens = sum(agent.count(m.get('content') or '') for m in agent.history)
                print(f"  {len(agent.history)} messages, ~{tokens} tokens, step {agent.step}, "
                      f"log {agent.compactor.offloader.rel_path}")
            elif line == "/anchor":
                print(agent.anchor.load().render())
            elif line == "/checkpoint":
                print(f"  saved {agent.checkpointer.milestone('saved from the terminal')['checkpoint_id']}")
            elif line == "/restart":
                agent.restart("asked for from the terminal")
                print("  started afresh from progress.md, the latest checkpoint and AGENTS.md")
            elif line.startswith("/handoff"):
                to_agent, _, why = line[len("/handoff"):].strip().partition(" ")
                if not to_agent:
                    print("  usage: /handoff AGENT WHY")
                    continue
                try:
                    record = agent.hand_off(to_agent, why.strip() or "handed on from the terminal")
                except CoreError as exc:
                    print(f"  {exc}")
                    continue
                print(f"  handed off to {to_agent} as {record['id']} (hop {record['hop']})")
            else:
                turn = agent.run_turn(line)
                print(f"agent> {turn.answer}" + (f"\n  ({turn.forced})" if turn.forced else ""))
    finally:
        end = agent.end_session()
        if end.summary:
            print(f"session {agent.session_id} saved: {agent.compactor.offloader.rel_path}; summary in "
                  f"sessions/cache.jsonl")
        llm.close()
        ws.close()
    return 0


# ----- reverie compact / flush / flushes -------------------------------------------------------------
def cmd_compact(args) -> int:
    from core.errors import CoreError
    from core.harness.compactor import ConversationCompactor
    from core.harness.flush import MemoryFlushManager
    from core.harness.messages import from_jsonl, to_jsonl

    ws = _open(args.path, args)
    source = Path(args.messages)
    try:
        text = source.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CoreError(f"cannot read {source}: {exc}") from exc
    messages = from_jsonl(text, source=str(source))
    session = args.session or source.name.split(".")[0]
    llm = _client(ws, args.model)
    try:
        flusher = None if args.no_flush or llm is None else MemoryFlushManager(ws, llm)
        compactor = ConversationCompactor(ws.paths, llm, session, settings=ws.settings.compaction, flusher=flusher)
        result = compactor.compact(messages, trigger_messages=1 if args.force else None)
    finally:
        if llm is not None:
            llm.close()
    out = to_jsonl(result.messages)
    if args.out:
        Path(args.out).write_text(out, encoding="utf-8")
    else:
        sys.stdout.write(out)
    note = (f"compacted {result.compacted_count} message(s) -> {len(result.messages)}; offloaded "
            f"{result.offloaded} to {compactor.offloader.rel_path}; tokens {result.tokens_before} -> "
            f"{result.tokens_after}" + (f"; flush {result.flush.outcome}" if result.flush else "")
            + (f"; summary without the model ({result.summary_error})" if result.summary_error else "")) \
        if result.compacted else f"not compacted: {result.reason}"
    print(note, file=sys.stderr)
    ws.close()
    return 0


def cmd_flush(args) -> int:
    from core.errors import NotFoundError
    from core.harness.flush import MemoryFlushManager
    from core.harness.messages import validate_message

    ws = _open(args.path, args)
    read = ws.read_session(args.session)
    if not ws.paths.session_log(args.session).exists():
        raise NotFoundError(f"no session log sessions/{args.session}.log.jsonl")
    messages = [m for m in read.objects if not validate_message(m)]
    llm = _client(ws, args.model, required=True)
    try:
        result = MemoryFlushManager(ws, llm).flush(messages, session_id=args.session)
    finally:
        llm.close()
    print(f"flush {result.outcome}: {len(result.bullets)} bullet(s)" + (f" -> {result.path}" if result.path else "")
          + (f" ({result.error})" if result.error else ""))
    for bullet in result.bullets:
        print(f"  - {bullet}")
    ws.close()
    return 0 if result.outcome != "failed" else 1


def cmd_flushes(args) -> int:
    from core.store.sessions import read_jsonl
    from core.workspace import Workspace

    ws = Workspace.open(args.path)
    records = read_jsonl(ws.paths.flush_record, ws.root).objects
    if not records:
        print("no flushes recorded yet (.reverie/flushes.jsonl)")
    for rec in records[-args.limit:]:
        where = f" -> {rec['path']}#L{rec['lines'][0]}-L{rec['lines'][1]}" if rec.get("path") else ""
        error = f" ({rec['error']})" if rec.get("error") else ""
        print(f"{rec.get('ts', '')} {rec.get('outcome', '?'):9} session={rec.get('session_id') or '-'} "
              f"messages={rec.get('messages', 0)} bullets={rec.get('bullets', 0)}{where}{error}")
    ws.close()
    return 0
