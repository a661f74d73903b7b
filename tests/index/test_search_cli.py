"""`reverie index` and `reverie search` as a person runs them."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def run(*args):
    return subprocess.run([sys.executable, "-m", "core", *args], capture_output=True, text=True, cwd=ROOT, timeout=600)


@pytest.mark.slow   # real CLI processes; the embedding model loads in each
def test_index_and_search_commands(tmp_path):
    ws = tmp_path / "ws"
    assert run("init", str(ws)).returncode == 0
    (ws / "memory" / "2026-11-30.md").write_text("# 2026-11-30\n\n- Maya drinks green tea\n- 今天开会讨论了数据库迁移\n",
                                                 encoding="utf-8")
    out = run("index", str(ws), "--no-embed")
    assert out.returncode == 0 and "line(s) written" in out.stdout
    found = run("search", str(ws), "开会", "--mode", "fts")
    assert found.returncode == 0 and found.stdout.startswith("memory/2026-11-30.md:4: ") and "«开会»" in found.stdout
    as_json = json.loads(run("search", str(ws), "tea", "-k", "1", "--mode", "keyword", "--json").stdout)
    assert as_json["mode"] == "keyword" and as_json["hits"][0]["line"] == 3 and as_json["hits"][0]["snippet"]
    assert as_json["hits"][0]["match"] == "words" and as_json["hits"][0]["words"] == ["tea"]
    dated = json.loads(run("search", str(ws), "tea", "--mode", "keyword", "--json", "--kind", "daily",
                           "--since", "2026-11-30", "--until", "2026-11-30").stdout)
    assert {h["path"] for h in dated["hits"]} == {"memory/2026-11-30.md"} and dated["hits"][0]["kind"] == "daily"
    assert json.loads(run("search", str(ws), "tea", "--mode", "keyword", "--json", "--kind", "memory").stdout)["hits"] == []
    said = run("search", str(ws), "tea", "--mode", "keyword")
    assert said.returncode == 0 and "(words: tea)" in said.stdout
    bad = run("search", str(ws), "tea", "--kind", "diary")
    assert bad.returncode == 2 and "unknown kind" in bad.stderr and bad.stderr.count("\n") == 1
    hostile = run("search", str(ws), '"AND( NEAR -* body:', "--mode", "fts")
    assert hostile.returncode == 0 and "Traceback" not in hostile.stderr


def test_search_errors_are_one_line(tmp_path):
    out = run("search", str(tmp_path / "nowhere"), "tea")
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "no workspace" in out.stderr
