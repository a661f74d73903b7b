"""Reverie without the window: `serve`, `service install|uninstall`, `status`.

    reverie serve WS [--interval S] [--idle-minutes M] [--no-model]   the app's scheduler, in a terminal or a service
    reverie service install|uninstall WS [--no-load]                  run `serve` at login (launchd / systemd --user)
    reverie status WS                                                 each agent's last activity, idle time, next dream
"""
from __future__ import annotations

import datetime as dt
import signal
import subprocess
import sys
import time


def register(sub) -> None:
    p = sub.add_parser("serve", help="schedule maintenance and dreams for a workspace without the app (until SIGTERM)")
    p.add_argument("path", help="the workspace")
    p.add_argument("--interval", type=float, default=30.0, help="seconds between checks (default 30)")
    p.add_argument("--idle-minutes", type=float, default=None,
                   help="minutes without agent activity before a dream may start (default: the workspace setting)")
    p.add_argument("--no-model", action="store_true", help="dream without a model (deterministic decisions only)")
    from core.llm.cli_args import add_model_arguments

    add_model_arguments(p)
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("service", help="install or remove a login service (launchd / systemd user unit) running serve")
    p.add_argument("action", choices=("install", "uninstall"))
    p.add_argument("path", help="the workspace")
    p.add_argument("--no-load", action="store_true", help="only write or remove the file; do not call "
                                                          "launchctl / systemctl")
    p.set_defaults(func=cmd_service)

    p = sub.add_parser("status", help="each agent's last activity, idle time and the next dream of a workspace")
    p.add_argument("path", help="the workspace")
    p.set_defaults(func=cmd_status)


def _say(line: str) -> None:
    print(f"{dt.datetime.now().astimezone():%Y-%m-%d %H:%M:%S} {line}", flush=True)


def cmd_serve(args) -> int:
    from core.cancel import CancelToken
    from core.errors import ConfigError
    from core.service import Daemon
    from core.workspace import Workspace

    if args.interval <= 0 or (args.idle_minutes is not None and args.idle_minutes < 0):
        raise ConfigError("--interval must be above 0 and --idle-minutes 0 or more")
    ws = Workspace.open(args.path)
    cancel = CancelToken()

    def stop(signum, _frame):
        cancel.cancel(f"stopped by {signal.Signals(signum).name}")
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)

    def open_model():
        if args.no_model:
            return None
        from core.llm import open_client
        from core.llm.cli_args import model_settings

        return open_client(model_settings(args, ws.settings.model))

    daemon = Daemon(ws, llm_factory=open_model, report=_say, idle_minutes=args.idle_minutes, cancel=cancel)
    try:
        daemon.refuse_a_second_serve()    # before the search server and its model start: nothing to stop
    except Exception:
        ws.close()
        raise
    searches = _answer_searches(ws, cancel)
    try:
        return daemon.run(args.interval)
    finally:
        searches.close()
        ws.close()


def _answer_searches(ws, cancel):
    """Keep the index and its model loaded and answer `reverie search` for this workspace
    (core/index/search_socket.py), embedding what is pending in the background with progress."""
    import threading

    from core.index.embed_progress import watch_embedding
    from core.index.search_socket import SearchServer, index_answer

    server = SearchServer(ws.paths.private_dir, index_answer(ws.index), by="serve")
    if server.start():
        _say(f"answering `reverie search` for this workspace on {server.path}")
    else:
        _say("searches: another process (the app or `reverie serve`) answers them already")
    threading.Thread(target=watch_embedding, args=(ws.sync_index, ws.index, _say, cancel), daemon=True,
                     name="reverie-index-progress").start()
    return server


def cmd_service(args) -> int:
    from pathlib import Path

    from core.service import units
    from core.workspace import Workspace

    root = Workspace.open(args.path).root if args.action == "install" else Path(args.path).expanduser().resolve()
    if args.action == "install":
        target = units.install(root)
        print(f"wrote {target.platform} service {target.path}")
        command = target.load
    else:
        target = units.uninstall(root)
        if target is None:
            print(f"no Reverie service installed for {root}")
            return 0
        print(f"removed {target.platform} service {target.path}")
        command = target.unload
    if args.no_load:
        print("not loaded; run: " + " ".join(command))
        return 0
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        print(f"could not run {command[0]} ({exc}); run it yourself: " + " ".join(command), file=sys.stderr)
        return 1
    if done.returncode != 0:
        print(f"{' '.join(command)} failed: {(done.stderr or done.stdout).strip()}", file=sys.stderr)
        return 1
    print("loaded" if args.action == "install" else "unloaded")
    return 0


def cmd_status(args) -> int:
    from core.service.status import ago, workspace_status
    from core.workspace import Workspace

    ws = Workspace.open(args.path)
    status = workspace_status(ws)
    now = time.time()
    print(f"workspace {ws.root}")
    if status.agents:
        print("agents (last activity):")
        width = max(len(a.agent) for a in status.agents)
        for entry in status.agents:
            detail = f" {entry.detail}" if entry.detail else ""
            print(f"  {entry.agent:<{width}}  {ago(now - entry.timestamp):>14}  {entry.kind}{detail}")
    else:
        print("agents: no activity recorded yet")
    idle = "idle" if status.idle else "active"
    print(f"{idle}: last activity {ago(status.idle_for_s)}" + (f" ({status.last_activity})"
                                                               if status.last_activity else "")
          + f"; a dream needs {ws.settings.dream.idle_minutes:g} min idle")
    when = f", next by time at {status.next_dream_at.astimezone():%Y-%m-%d %H:%M}" if status.next_dream_at else ""
    print(f"dream: {'due' if status.dream_due else 'not due'} ({status.dream_reason}){when}; "
          f"{status.sessions_since} session(s) since the last")
    print("scheduler: " + ("running (the app or `reverie serve`)" if status.scheduler_running else
                           "not running (open the app, or `reverie serve` / `reverie service install`)"))
    return 0
