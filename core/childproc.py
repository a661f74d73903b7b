"""Ending a child process (the model worker, the embedder) without leaving a zombie or hanging."""
from __future__ import annotations

import subprocess


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
