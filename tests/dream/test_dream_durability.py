"""Crash safety and concurrency of applying proposals, with real processes and SIGKILL."""
from __future__ import annotations

import datetime as dt
import hashlib
import os
import random
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from tests.support.dreamkit import all_add, golden_workspace, router, write_log
from tests.support.fakes import ScriptedLLM

from core.dream.review.apply import apply_proposal
from core.dream.pipeline.consolidator import run_dream
from core.dream.review.proposals import load_proposal, save_proposal
from core.dream.state import record_dream_finished
from core.store.atomic import atomic_write
from core.workspace import Workspace
from tests.support.processes import python_env

NOW = dt.datetime(2026, 11, 10, 3, 0, tzinfo=dt.timezone.utc)


def _big_proposal(ws):
    """A proposal that changes many bullets of a MEMORY.md of a realistic size."""
    golden_workspace(ws)
    record_dream_finished(ws.paths, dt.datetime(2026, 11, 3, 21, tzinfo=dt.timezone.utc).timestamp(),
                          now=dt.datetime(2026, 11, 3, 22, tzinfo=dt.timezone.utc))
    facts = [f"Sensor {n} on farm {n % 3} reports moisture every {5 + n % 10} minutes" for n in range(120)]
    write_log(ws, "2026-11-09", facts, mtime=dt.datetime(2026, 11, 9, 20, tzinfo=dt.timezone.utc).timestamp())
    result = run_dream(ws, ScriptedLLM(router(all_add)), now=NOW)
    assert result.status == "proposed" and not result.held
    return result.proposal


def _child_apply(root: Path, proposal_id: str) -> None:
    try:
        ws = Workspace.open(root)
        apply_proposal(ws, proposal_id)
    finally:
        os._exit(0)


@pytest.mark.slow
def test_sigkill_during_apply_leaves_old_or_new_memory_and_a_snapshot(workspace):
    proposal = _big_proposal(workspace)
    base, new = proposal.base_text, proposal.new_text
    path = workspace.paths.memory_md

    def reset() -> None:
        atomic_write(path, base)
        save_proposal(workspace.paths, proposal)

    def run_child(delay: float | None) -> bool:
        """Fork an applier; kill it after `delay` seconds. True when the kill landed mid-apply."""
        pid = os.fork()
        if pid == 0:
            _child_apply(workspace.root, proposal.id)
        if delay is None:
            os.waitpid(pid, 0)
            return False
        time.sleep(delay)
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        return os.WIFSIGNALED(status)

    durations = []
    for _ in range(3):
        reset()
        started = time.perf_counter()
        run_child(None)
        durations.append(time.perf_counter() - started)
        assert path.read_text(encoding="utf-8") == new
    window = max(durations) * 1.3
    rng = random.Random(20261130)
    landed, saw_old, saw_new, tries = 0, 0, 0, 0
    while landed < 200:
        tries += 1
        assert tries < 3000, f"only {landed} kills landed mid-apply"
        reset()
        if not run_child(rng.uniform(0.0, window)):
            continue
        landed += 1
        text = path.read_text(encoding="utf-8")
        assert text in (base, new), f"torn MEMORY.md after kill {landed}"
        load_proposal(workspace.paths, proposal.id)     # the proposal file is never torn either
        if text == new:
            saw_new += 1
            snaps = [workspace.history.snapshot(e) for e in workspace.history_entries("MEMORY.md")
                     if e.reason == f"dream proposal {proposal.id}"]
            assert base.encode("utf-8") in snaps, "MEMORY.md is new but no snapshot of the old version exists"
        else:
            saw_old += 1
    assert saw_old and saw_new, (saw_old, saw_new)
    # Whatever state a kill left, applying again finishes the job.
    apply_proposal(workspace, proposal.id)
    assert path.read_text(encoding="utf-8") == new
    assert load_proposal(workspace.paths, proposal.id).status == "applied"


# Each daily fact names its own made-up things ("agent daily line Mebuve Murera Famigu"): a dream rightly
# reads "line 1" after "line 0" as one subject with a new value (an update), and "line Qa" after
# "line Qb" as one fact said twice, and which of those it sees depends on how the dreams fall.
SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]


def fact_name(i: int) -> str:
    """Three made-up names from a hash of i: no two facts share more than one of them."""
    digest = hashlib.sha256(f"fact {i}".encode()).digest()
    return " ".join("".join(SYLLABLES[b % 70] for b in digest[w * 3:w * 3 + 3]).capitalize() for w in range(3))


AGENT = textwrap.dedent("""
    import sys, time, datetime
    from core.workspace import Workspace
    from core.store.atomic import append_durable
    ws = Workspace.open({ws!r})
    names = {names!r}
    print("ready", flush=True)
    for i in range({count}):
        append_durable(ws.paths.memory_md, f"- agent memory line {{i}}\\n")
        ws.append_daily(f"agent daily line {{names[i]}}", day=datetime.date(2026, 11, 10))
        time.sleep(0.004)
""")


@pytest.mark.slow
def test_agent_appends_during_dreams_and_applies_are_never_lost(workspace, tmp_path):
    golden_workspace(workspace)
    # 600 bullets would pass the 4,000-token budget, and 300 new facts the per-dream limit on new
    # facts (the rest listed as not proposed); this test is about concurrency, so give it room.
    workspace.settings = (workspace.settings.replace("memory", memory_md_tokens=20_000)
                          .replace("dream", max_new_facts=1_000))
    count = 300
    script = tmp_path / "agent.py"
    script.write_text(AGENT.format(ws=str(workspace.root), count=count, names=[fact_name(i) for i in range(count)]))
    agent = subprocess.Popen([sys.executable, str(script)], env=python_env(), stdout=subprocess.PIPE)
    assert agent.stdout.readline().strip() == b"ready"
    dreams = applied = 0
    moment = NOW
    while agent.poll() is None or dreams == 0:
        moment += dt.timedelta(hours=1)
        result = run_dream(workspace, ScriptedLLM(router(all_add)), now=moment)
        dreams += 1
        if result.proposal is not None:
            outcome = apply_proposal(workspace, result.proposal.id)
            applied += 1 if outcome.wrote else 0
    assert agent.wait(timeout=120) == 0
    # A dream may cite a daily line as a source of the bullet it repeats: compare without comments.
    memory = [re.sub(r"\s*<!--.*?-->", "", line) for line in workspace.read_memory().text.split("\n")]
    daily = (workspace.paths.memory_dir / "2026-11-10.md").read_text().split("\n")
    for i in range(count):
        assert f"- agent memory line {i}" in memory, f"MEMORY.md lost agent line {i}"
        assert f"- agent daily line {fact_name(i)}" in daily, f"the daily log lost line {i}"
    assert dreams >= 2 and applied >= 1, (dreams, applied)
    # a last dream picks up the daily lines the agent wrote after the previous one
    final = run_dream(workspace, ScriptedLLM(router(all_add)), now=moment + dt.timedelta(hours=1))
    if final.proposal is not None:
        apply_proposal(workspace, final.proposal.id)
    text = workspace.read_memory().text
    for i in range(count):
        assert f"agent daily line {fact_name(i)} <!-- id:" in text, f"daily fact {i} never reached MEMORY.md"
