"""Child processes of Reverie (the model worker, the embedder, background jobs): start, describe, end.

Every child is `python -m <module> FD ...` with one end of a socket pair on FD (a
multiprocessing Connection: pickled messages both ways), its output in a
temporary file (the tail says why it died), and the folder holding core/ on its
import path, so it runs from a checkout as well as from an installed package.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
from multiprocessing.connection import Connection
from pathlib import Path
from typing import IO, Mapping

_ROOT = Path(__file__).resolve().parents[1]     # the folder holding core/


def child_env(defaults: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment, `defaults` where unset, and core/ importable."""
    env = dict(os.environ)
    for key, value in (defaults or {}).items():
        env.setdefault(key, value)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(_ROOT), env.get("PYTHONPATH", "")) if p)
    return env


def start_child(module: str, args: list[str], *, label: str,
                env_defaults: Mapping[str, str] | None = None) -> tuple[subprocess.Popen, Connection, IO[bytes]]:
    """Start `python -m module FD *args`; returns (process, our end of the connection, its output log).

    OSError when the process cannot be started (nothing is left open then).
    """
    ours, theirs = socket.socketpair()
    log = tempfile.TemporaryFile(prefix=f"reverie-{label}-")
    cmd = [sys.executable, "-m", module, str(theirs.fileno()), *args]
    try:
        proc = subprocess.Popen(cmd, pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, stdout=log,
                                stderr=log, env=child_env(env_defaults), close_fds=True)
    except OSError:
        ours.close()
        log.close()
        raise
    finally:
        theirs.close()
    return proc, Connection(ours.detach()), log


def parent_connection(fd: int, nice: int = 0) -> Connection:
    """In the child: lower its priority by `nice`, and the connection to the parent on `fd`.

    A child that fills every core (the model, the embedder, a dream) must not starve the process
    that asked for it (the app's window, an agent's own loop): it gets what they leave.
    """
    if nice > 0 and hasattr(os, "nice"):
        os.nice(min(int(nice), 19))
    return Connection(fd)


def log_tail(log: IO[bytes] | None, chars: int = 400) -> str:
    """The last few non-empty lines a child wrote, on one line."""
    if log is None:
        return ""
    try:
        log.seek(0)
        text = log.read().decode("utf-8", errors="replace")
    except (OSError, ValueError):
        return ""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return " | ".join(lines[-3:])[-chars:]


def describe_exit(code: int | None) -> str:
    if code is None:
        return "it stopped answering"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


def kill_and_reap(proc: subprocess.Popen, *, grace_s: float = 0.0) -> None:
    """Wait up to `grace_s` for the child to exit by itself, then kill it; never waits forever."""
    if grace_s > 0:
        try:
            proc.wait(timeout=grace_s)
            return
        except subprocess.TimeoutExpired:
            pass
    if proc.poll() is None:
        proc.kill()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass


def reverie_command(*args: str) -> list[str]:
    """The command line that runs `reverie ARGS` from another program (a service manager, an MCP
    client's config): this installation's console script, or this Python with `-m core`."""
    script = Path(sys.executable).with_name("reverie")
    if script.is_file():
        return [str(script), *args]
    return [sys.executable, "-m", "core", *args]
