"""`reverie bench dream` at a small size, so it never rots."""
from __future__ import annotations

import re

import pytest

from core.cli import main

SUMMARY = re.compile(r"^dream days(\d+)_s=([\d.]+) days(\d+)_s=([\d.]+) ratio=([\d.]+|inf) retained=([\d.]+)$")


def run_bench(capsys, *extra: str) -> tuple[list[str], re.Match]:
    assert main(["bench", "dream", "--small-days", "3", "--large-days", "12", "--facts-per-day", "3",
                 "--retention-dreams", "2", "--repeat", "1", *extra]) == 0   # later options win
    lines = capsys.readouterr().out.strip().split("\n")
    match = SUMMARY.match(lines[-1])
    assert match, lines[-1]
    return lines, match


def test_dream_bench_without_a_model(capsys):
    lines, match = run_bench(capsys, "--no-model")
    assert (match.group(1), match.group(3)) == ("3", "12")
    assert float(match.group(6)) == 1.0, "deterministic dreams keep every planted fact"
    runs = [line for line in lines if line.startswith("days=")]
    assert len(runs) == 2
    for line in runs:
        assert "files_read=1 " in line, "only the new day's log is read, whatever the workspace's age"
    assert "files_seen=4 " in runs[0] and "files_seen=13 " in runs[1]


@pytest.mark.slow
def test_dream_bench_with_the_real_small_model(capsys):
    lines, match = run_bench(capsys, "--model", "smollm2-135m-instruct-q4_1", "--facts-per-day", "2",
                             "--retention-dreams", "1")
    assert lines[0].startswith("dream bench: model=smollm2-135m-instruct-q4_1")
    runs = [line for line in lines if line.startswith("days=")]
    assert all("model_calls=2 " in line for line in runs), "Orient + one Consolidate batch for one new day"
    assert 0.0 <= float(match.group(6)) <= 1.0
