"""Crash safety and concurrency of the store, with real processes and SIGKILL."""
from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from core.workspace import Workspace
from tests.support.processes import python_env


REWRITER = textwrap.dedent("""
    import sys
    from core.workspace import Workspace
    from core.errors import ConflictError
    ws = Workspace.open({ws!r})
    n = 0
    print("ready", flush=True)
    while True:
        n += 1
        snap = ws.read_memory()
        body = "".join(f"- version {{n}} line {{i}} " + "x" * 40 + "\\n" for i in range(200))
        try:
            ws.write_memory(f"# MEMORY v{{n}}\\n" + body + f"<!-- end v{{n}} -->\\n", snap.hash, reason=f"v{{n}}")
        except ConflictError:
            pass
""")


def is_complete_version(text: str) -> bool:
    if text.startswith("# MEMORY\n"):      # the template the workspace started with
        return "## Projects" in text
    lines = text.split("\n")
    if not lines[0].startswith("# MEMORY v"):
        return False
    n = lines[0][len("# MEMORY v"):]
    return len(lines) == 203 and lines[-2] == f"<!-- end v{n} -->" and lines[-1] == ""


@pytest.mark.slow
def test_memory_md_is_never_torn_by_sigkill(tmp_path):
    ws = Workspace.create(tmp_path / "ws")
    script = tmp_path / "rewriter.py"
    script.write_text(REWRITER.format(ws=str(ws.root)))
    rng = random.Random(1234)
    kills = 0
    while kills < 200:
        proc = subprocess.Popen([sys.executable, str(script)], env=python_env(), stdout=subprocess.PIPE)
        assert proc.stdout.readline().strip() == b"ready"
        time.sleep(rng.uniform(0.0, 0.05))
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        kills += 1
        text = (ws.root / "MEMORY.md").read_text(encoding="utf-8")
        assert is_complete_version(text), f"torn MEMORY.md after kill {kills}: {text[:80]!r}...{text[-80:]!r}"
    leftovers = [p.name for p in ws.root.glob(".MEMORY.md.*.tmp")]
    # A kill between mkstemp and rename can leave a temp file; it is never MEMORY.md itself.
    assert all(name.endswith(".tmp") for name in leftovers)
    assert ws.history_entries("MEMORY.md"), "every completed write left a snapshot"


APPENDER = textwrap.dedent("""
    import sys, datetime
    from core.workspace import Workspace
    ws = Workspace.open({ws!r})
    for i in range({count}):
        ws.append_daily(f"writer {tag} line {{i}}", day=datetime.date(2026, 12, 1))
""")


@pytest.mark.slow
def test_concurrent_appends_and_rewrites_lose_nothing(tmp_path):
    ws = Workspace.create(tmp_path / "ws")
    count = 5000
    procs = []
    for tag in ("A", "B"):
        script = tmp_path / f"append_{tag}.py"
        script.write_text(APPENDER.format(ws=str(ws.root), count=count, tag=tag))
        procs.append(subprocess.Popen([sys.executable, str(script)], env=python_env()))
    rewriter = tmp_path / "rewriter.py"
    rewriter.write_text(REWRITER.format(ws=str(ws.root)))
    rewrite = subprocess.Popen([sys.executable, str(rewriter)], env=python_env(), stdout=subprocess.PIPE)
    for proc in procs:
        assert proc.wait(timeout=600) == 0
    rewrite.kill()
    rewrite.wait()
    lines = (ws.root / "memory" / "2026-12-01.md").read_text().split("\n")
    for tag in ("A", "B"):
        mine = [line for line in lines if line.startswith(f"- writer {tag} ")]
        assert len(mine) == count and len(set(mine)) == count, tag
    assert is_complete_version((ws.root / "MEMORY.md").read_text())


def test_outside_append_during_cas_window_is_kept(workspace, monkeypatch):
    """An agent's raw `>>` that lands between our hash check and the rename survives."""
    import core.store.atomic as atomic

    real = atomic.atomic_write
    calls = []

    def racing_write(path, data, **options):
        if path.name == "MEMORY.md" and not calls:
            calls.append(1)
            with open(path, "a", encoding="utf-8") as handle:   # lands on the old inode
                handle.write("- raced in\n")
        real(path, data, **options)

    monkeypatch.setattr(atomic, "atomic_write", racing_write)
    snap = workspace.read_memory()
    workspace.write_memory("# new\n", snap.hash)
    assert workspace.read_memory().text == "# new\n- raced in\n"


def test_cooperative_append_waiting_on_a_rename_goes_to_the_new_file(workspace):
    from core.store.atomic import append_durable

    snap = workspace.read_memory()
    workspace.write_memory("# v2\n", snap.hash)
    append_durable(workspace.root / "MEMORY.md", "- after\n")
    assert workspace.read_memory().text == "# v2\n- after\n"
