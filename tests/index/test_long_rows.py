"""A long line (a 100 kB tool result in a session log) is indexed as overlapping windows, one hit per line."""
from __future__ import annotations

import json
import random

import pytest
from tests.support.files import write

from core.config import SearchSettings
from core.index import SearchIndex
from core.index.lines import SPLIT_AT, WINDOW_CHARS, WINDOW_OVERLAP, file_rows, windows

FACT_10K = "the staging database password rotates every Tuesday at 04:00 through vaultbot"
FACT_60K = "the invoice export crashed because the currency field was null for Liechtenstein customers"
QUERY_10K = "when does the staging database password rotate vaultbot"
QUERY_60K = "why did the invoice export crash currency Liechtenstein"


def _filler(n_chars: int, seed: int) -> str:
    rng = random.Random(seed)
    words = ("row", "status", "ok", "value", "metric", "shard", "latency", "bucket", "region", "page",
             "cursor", "offset", "batch", "node", "retry", "queue", "worker", "flag", "tick", "span")
    out, size = [], 0
    while size < n_chars:
        piece = f"{rng.choice(words)}={rng.randint(0, 99999)} {rng.choice(words)}:{rng.random():.4f}"
        out.append(piece)
        size += len(piece) + 1
    return " ".join(out)


def _tool_result() -> str:
    text = _filler(10_000, 1) + " " + FACT_10K + " " + _filler(50_000, 2) + " " + FACT_60K + " " + _filler(40_000, 3)
    assert 99_000 < len(text) < 102_000
    assert 9_900 < text.index(FACT_10K) < 10_200 and 59_900 < text.index(FACT_60K) < 60_400
    return text


def _workspace(ws) -> None:
    messages = [
        {"role": "user", "content": "Can you check why last night's jobs failed?", "ts": "2026-11-30T09:00:00Z"},
        {"role": "assistant", "content": "Reading the job log.",
         "tool_calls": [{"function": {"name": "read_file", "arguments": {"path": "jobs.log"}}}],
         "ts": "2026-11-30T09:00:05Z"},
        {"role": "tool", "name": "read_file", "content": _tool_result(), "ts": "2026-11-30T09:00:06Z"},
        {"role": "assistant", "content": "Two problems in the log; details above.", "ts": "2026-11-30T09:01:00Z"},
    ]
    write(ws, "sessions/s1.log.jsonl", "".join(json.dumps(m) + "\n" for m in messages))
    write(ws, "memory/2026-11-29.md", "# 2026-11-29\n\n## Ops\n- Deployed the new dashboard to production.\n"
          "- The backup job took 40 minutes, twice as long as last week.\n- Lunch with Maya about the hiking trip.\n")


def test_windows_cover_a_long_line_with_overlap():
    assert windows("short line") == [(0, 10)]
    assert windows("x" * SPLIT_AT) == [(0, SPLIT_AT)]
    text = _tool_result()
    spans = windows(text)
    assert spans[0][0] == 0 and spans[-1][1] == len(text)
    for (a, b), (c, d) in zip(spans, spans[1:]):
        assert a < c < b and b - c <= WINDOW_OVERLAP    # overlapping, always moving on
        assert text[b] == " " and text[c - 1] == " "     # cut at word boundaries
    assert all(b - a <= WINDOW_CHARS + WINDOW_OVERLAP for a, b in spans)
    assert all(any(a <= text.index(f) and text.index(f) + len(f) <= b for a, b in spans) for f in (FACT_10K, FACT_60K))


def test_a_long_session_line_becomes_rows_with_one_line_number(ws):
    _workspace(ws)
    rows, problems = file_rows("sessions/s1.log.jsonl", (ws / "sessions/s1.log.jsonl").read_text())
    assert problems == []
    long_rows = [r for r in rows if r.line == 3]
    assert len(long_rows) >= 50 and len({r.ehash for r in long_rows}) == len(long_rows)
    assert all(len(r.body) <= WINDOW_CHARS + WINDOW_OVERLAP for r in long_rows)
    assert long_rows[0].text.startswith("tool read_file:") and long_rows[1].text.startswith("…")
    assert sum(FACT_60K in r.body for r in long_rows) >= 1


def _check(index, mode):
    for query, fact in ((QUERY_10K, FACT_10K), (QUERY_60K, FACT_60K)):
        hits = index.search(query, k=10, mode=mode).hits
        assert (hits[0].path, hits[0].line) == ("sessions/s1.log.jsonl", 3), (mode, query, hits[:3])
        assert fact in hits[0].text and len(hits[0].text) <= WINDOW_CHARS + WINDOW_OVERLAP + 2
        assert "«" in hits[0].snippet and fact.split()[-1][:6].lower() in hits[0].snippet.lower()
        places = [(h.path, h.line) for h in hits]
        assert len(places) == len(set(places)), places      # one hit per line, however many windows match


def test_facts_deep_in_a_100kb_tool_result_are_the_first_keyword_hit(ws, keyword_index):
    _workspace(ws)
    keyword_index.sync()
    _check(keyword_index, "fts")


@pytest.mark.slow
def test_facts_deep_in_a_100kb_tool_result_are_the_first_hybrid_hit(ws, minilm):
    _workspace(ws)
    with SearchIndex(ws, ws / ".reverie" / "index.db", SearchSettings(), embedder=minilm, background=False) as index:
        index.sync()
        assert index.status().pending_embeddings == 0
        _check(index, "hybrid")
