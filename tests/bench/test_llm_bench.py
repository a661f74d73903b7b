"""`reverie bench llm` at a small size, so it never rots."""
from __future__ import annotations

import re

import pytest

from core.cli import main

SUMMARY = re.compile(r"^llm model=(\S+) decode_ratio=([\d.]+) ttft_ratio=([\d.]+) json_ratio=([\d.]+)$")


@pytest.mark.slow
def test_llm_bench_small(capsys):
    assert main(["bench", "llm", "--model", "smollm2-135m-instruct-q4_1", "--prompt-tokens", "64",
                 "--decode-tokens", "8", "--prefix-tokens", "200", "--json-tokens", "160", "--json-runs", "1",
                 "--repeat", "1", "--context", "1024", "--no-naive-grammar"]) == 0
    lines = capsys.readouterr().out.strip().split("\n")
    match = SUMMARY.match(lines[-1])
    assert match, lines[-1]
    assert match.group(1) == "smollm2-135m-instruct-q4_1"
    decode, ttft, json_ratio = (float(match.group(i)) for i in (2, 3, 4))
    assert decode > 0 and json_ratio > 0
    assert 0 < ttft < 1, "the second prompt reuses the first one's prefix"
    assert any(line.startswith("ttft: ") and "tokens reused" in line for line in lines)
    assert any(line.startswith("json grammar") for line in lines)
