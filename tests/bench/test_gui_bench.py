"""`reverie bench gui` at a small size, so it never rots: the app side runs in a subprocess, offscreen."""
from __future__ import annotations

import re

import pytest

from core.cli import main

SUMMARY = re.compile(r"^gui first_window_s=([\d.]+) max_stall_ms=([\d.]+)$")


@pytest.mark.slow
def test_gui_bench_small(capsys):
    assert main(["bench", "gui", "--lines", "1500", "--seconds", "4", "--no-model"]) == 0
    lines = capsys.readouterr().out.strip().split("\n")
    match = SUMMARY.match(lines[-1])
    assert match, lines[-1]
    assert float(match.group(1)) > 0 and float(match.group(2)) >= 0
    assert any(line.startswith("workspace: 1,500 daily-log lines") for line in lines)
    assert any(line.startswith("heartbeat every 10 ms") for line in lines)
    assert any(line.startswith("shutdown with the jobs still running") for line in lines)


def test_gui_bench_refuses_a_tiny_workspace(capsys):
    assert main(["bench", "gui", "--lines", "10"]) == 2
    assert "--lines must be at least 100" in capsys.readouterr().err
