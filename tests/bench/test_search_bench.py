"""Each search benchmark at a small size, so they never rot (figures are printed, never asserted on time)."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow   # each runs a real benchmark command with the real model

ROOT = Path(__file__).resolve().parents[2]


def bench(*args, timeout=900):
    out = subprocess.run([sys.executable, "-m", "core", "bench", *args], capture_output=True, text=True,
                         cwd=ROOT, timeout=timeout)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.strip().splitlines()


def test_search_bench_small(tmp_path):
    lines = bench("search", "--lines", "2000", "--queries", "30", "--cold", "2", "--cache", str(tmp_path))
    assert re.fullmatch(r"search lines=\d+ build_lps=\d+ p50_ms=[\d.]+ p95_ms=[\d.]+ reindex_ms=[\d.]+ cold_ms=\d+ load=[\d.]+",
                        lines[-1]), lines[-1]
    assert any(line.startswith("cold `reverie search --mode keyword` (no model, no numpy): first output after ")
               for line in lines)


def _locomo_sample(path: Path) -> Path:
    conv = {"speaker_a": "Ann", "speaker_b": "Bo",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a puppy called Rex yesterday!"},
                          {"speaker": "Bo", "dia_id": "D1:2", "text": "Congrats! What breed is he?"},
                          {"speaker": "Ann", "dia_id": "D1:3", "text": "A beagle. He loves the park."}],
            "session_2_date_time": "10:00 am on 20 May, 2023",
            "session_2": [{"speaker": "Bo", "dia_id": "D2:1", "text": "I started pottery classes last week.",
                           "blip_caption": "a photo of a clay bowl"},
                          {"speaker": "Ann", "dia_id": "D2:2", "text": "That sounds relaxing."}]}
    qa = [{"question": "What breed is Ann's dog?", "answer": "beagle", "evidence": ["D1:3"], "category": 1},
          {"question": "When did Bo start pottery?", "answer": "May 2023", "evidence": ["D:2:1"], "category": 2},
          {"question": "What did Ann adopt?", "answer": "a puppy", "evidence": ["D1:1; D9:9"], "category": 4},
          {"question": "What did Bo say about painting?", "adversarial_answer": "x", "evidence": ["D2:2"], "category": 5}]
    path.write_text(json.dumps([{"sample_id": "t-1", "conversation": conv, "qa": qa}]), encoding="utf-8")
    return path


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_locomo_bench_on_a_tiny_file(tmp_path, mode):
    data = _locomo_sample(tmp_path / "locomo.json")
    out = tmp_path / "out.json"
    lines = bench("locomo", str(data), "--mode", mode, "--out", str(out), "--cache", str(tmp_path / "c"))
    assert re.fullmatch(rf"locomo {mode} recall@5=[\d.]+ recall@10=[\d.]+ p95_ms=[\d.]+", lines[-1])
    assert any("dropped (unresolvable): 1" in line for line in lines)
    assert any(re.fullmatch(r"halves: H0 recall@10=[\d.]+ \(\d+\) H1 recall@10=[\d.]+ \(\d+\)", line) for line in lines)
    result = json.loads(out.read_text())
    assert result["categories"]["1-4"]["n"] == 3 and result["categories"]["1-4"]["recall@10"] == 1.0
    # warm: the same workspaces, nothing re-embedded
    again = bench("locomo", str(data), "--mode", mode, "--cache", str(tmp_path / "c"))
    assert again[-1].split(" p95_ms")[0] == lines[-1].split(" p95_ms")[0]


def test_longmemeval_bench_on_a_tiny_file(tmp_path):
    def session(text, answer=False):
        return [{"role": "user", "content": text, **({"has_answer": True} if answer else {})},
                {"role": "assistant", "content": "Noted.\n\nAnything else?"}]
    item = {"question_id": "q1", "question_type": "single-session-user", "question": "Where do I take yoga classes?",
            "answer": "Serenity Yoga", "question_date": "2023/05/30 (Tue) 21:04",
            "haystack_session_ids": ["s1", "answer_s2", "s3"],
            "haystack_dates": ["2023/05/20 (Sat) 00:42", "2023/05/20 (Sat) 09:00", "2023/05/22 (Mon) 12:00"],
            "haystack_sessions": [session("My herb garden needs water."),
                                  session("I take yoga classes at Serenity Yoga on Tuesdays.", True),
                                  session("Planning a trip to Lisbon.")],
            "answer_session_ids": ["answer_s2"]}
    data = tmp_path / "lme.jsonl"
    data.write_text(json.dumps(item) + "\n" + json.dumps({**item, "question_id": "q2_abs"}) + "\n", encoding="utf-8")
    lines = bench("longmemeval", str(data), "--mode", "hybrid", "--cache", str(tmp_path / "c"))
    assert lines[-1].startswith("longmemeval hybrid recall_any@5=1.000 recall_any@10=1.000 turn_recall@10=1.000 p95_ms=")
    assert "halves: H0 recall_any@5=" in "\n".join(lines)
    root = next((tmp_path / "c" / "longmemeval").iterdir())
    assert "answer_s2" not in "".join(p.read_text() for p in (root / "memory").glob("*.md"))


def test_vectors_bench_small(tmp_path):
    last = bench("vectors", "--n", "300", "--queries", "20", "--cache", str(tmp_path))[-1]
    match = re.fullmatch(r"vectors n=300 recall@10=([\d.]+) p50_ms=[\d.]+ p95_ms=[\d.]+", last)
    assert match and float(match.group(1)) >= 0.95


def test_chinese_bench_runs():
    last = bench("chinese")[-1]
    assert re.fullmatch(r"chinese model=all-MiniLM-L6-v2 keyword@5=[\d.]+ meaning@5=[\d.]+ hybrid@5=[\d.]+", last), last
    assert float(re.search(r"meaning@5=([\d.]+)", last).group(1)) > 0
    # --set reaches the index: a meaning floor no cosine passes leaves meaning search with no hit
    assert bench("chinese", "--set", "min_similarity=0.99")[-1].split()[3] == "meaning@5=0.000"
