"""`reverie search` answers at once: keyword mode never loads numpy or torch, and meaning/hybrid ask a
running `reverie serve` or app over .reverie/search.sock (the same person only) before loading a model."""
from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from tests.support.files import write

from core.config import SearchSettings
from core.index import SearchIndex
from core.index.search_socket import SearchServer, alive, ask, index_answer, socket_path

ROOT = Path(__file__).resolve().parents[2]
LOG = "# 2026-11-30\n\n- Maya drinks green tea every morning\n- The staging database listens on port 5433\n"


def _cli(*args: str) -> str:
    """Run the CLI in a fresh process; print its stdout, then which heavy modules it loaded."""
    code = ("import sys; from core.cli import main; rc = main(sys.argv[1:]); "
            "print(json.dumps({'rc': rc, 'loaded': sorted(m for m in ('numpy', 'torch', 'sentence_transformers') "
            "if m in sys.modules)}))")
    done = subprocess.run([sys.executable, "-c", "import json; " + code, *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=600, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    return done.stdout


def _keyword_server(root: Path, by: str = "serve"):
    index = SearchIndex(root, root / ".reverie" / "index.db", SearchSettings(), embedder=False)
    index.sync()
    server = SearchServer(root / ".reverie", index_answer(index), by=by)
    return index, server


def test_keyword_search_loads_neither_numpy_nor_torch(ws):
    write(ws, "memory/2026-11-30.md", LOG)
    out = _cli("search", str(ws), "tea", "--mode", "keyword", "--json")
    body, tail = out.rsplit("\n", 2)[0], json.loads(out.strip().rsplit("\n", 1)[1])
    assert tail == {"rc": 0, "loaded": []}
    found = json.loads(body)
    assert found["via"] == "keyword" and found["count"] == 1 and found["hits"][0]["line"] == 3


def test_a_running_server_answers_and_only_for_the_model_it_has(ws):
    write(ws, "memory/2026-11-30.md", LOG)
    index, server = _keyword_server(ws)
    try:
        assert server.start() and alive(ws / ".reverie")
        assert stat.S_IMODE(os.stat(socket_path(ws / ".reverie")).st_mode) == 0o600
        reply = ask(ws / ".reverie", {"query": "port", "k": 5, "mode": "keyword", "model": ""})
        assert reply["ok"] and reply["by"] == "serve" and reply["pid"] == os.getpid()
        assert [h["line"] for h in reply["results"]["ranked"]][0] == 4
        other = ask(ws / ".reverie", {"query": "port", "mode": "keyword", "model": "some-other-model@1"})
        assert other["ok"] is False and "embeds with" in other["error"]
        second = SearchServer(ws / ".reverie", index_answer(index), by="app")
        assert not second.start()                                  # one answers per workspace: the first
        assert server.refused == 0
    finally:
        server.close()
        index.close()
    assert not socket_path(ws / ".reverie").exists() and ask(ws / ".reverie", {"query": "x"}) is None


def test_a_stale_socket_file_is_replaced_and_a_long_path_still_works(tmp_path):
    deep = tmp_path / ("a-rather-long-folder-name-" * 4) / "workspace"
    write(deep, "memory/2026-11-30.md", LOG)
    assert len(str(socket_path(deep / ".reverie"))) > 108      # longer than a socket address may be
    write(deep, ".reverie/search.sock", "left by a process that died")
    index, server = _keyword_server(deep)
    try:
        assert server.start()
        reply = ask(deep / ".reverie", {"query": "tea", "mode": "keyword", "model": ""})
        assert reply["ok"] and reply["results"]["count"] == 1
    finally:
        server.close()
        index.close()


@pytest.mark.skipif(not hasattr(os, "setuid") or os.getuid() != 0, reason="needs root to act as another user")
def test_another_user_is_refused_even_when_the_file_lets_them_in(ws):
    write(ws, "memory/2026-11-30.md", LOG)
    index, server = _keyword_server(ws)
    try:
        assert server.start()
        os.chmod(socket_path(ws / ".reverie"), 0o777)             # as if the mode were lost: the uid check holds
        os.chmod(ws / ".reverie", 0o755)
        # Another user (nobody) connects through a folder handle opened before it dropped root, so that
        # the folders above (0700 under /tmp) do not stop it first: only the server's check can.
        probe = ("import os, socket; fd = os.open(%r, os.O_RDONLY); os.setuid(65534); "
                 "s = socket.socket(socket.AF_UNIX); s.connect(f'/proc/self/fd/{fd}/search.sock'); "
                 "\ntry:\n s.sendall(b'{\"query\": \"tea\", \"model\": \"\"}\\n'); print(repr(s.recv(100)))"
                 "\nexcept OSError: print('closed')" % str(ws / ".reverie"))
        done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
        assert done.stdout.strip() in ("b''", "closed"), done.stderr     # closed unanswered
        assert server.refused == 1 and server.served == 0
    finally:
        server.close()
        index.close()


@pytest.mark.slow   # a CLI process and the real model in this one
def test_hybrid_cli_is_answered_by_the_running_process_without_loading_a_model(ws, minilm):
    write(ws, "memory/2026-11-30.md", LOG)
    with SearchIndex(ws, ws / ".reverie" / "index.db", SearchSettings(), embedder=minilm, background=False) as index:
        index.sync()
        server = SearchServer(ws / ".reverie", index_answer(index), by="serve")
        assert server.start()
        try:
            out = _cli("search", str(ws), "what does Maya like to drink", "--mode", "hybrid", "--json", "-k", "2")
            plain = _cli("search", str(ws), "what does Maya like to drink", "--mode", "hybrid", "-k", "2")
        finally:
            server.close()
    body, tail = out.rsplit("\n", 2)[0], json.loads(out.strip().rsplit("\n", 1)[1])
    assert tail["loaded"] == [] or "torch" not in tail["loaded"]
    found = json.loads(body)
    assert found["via"] == "serve" and found["mode"] == "hybrid" and found["hits"][0]["line"] == 3
    assert "answered by reverie serve" in plain
    # No process alive: the CLI loads the model itself and says so.
    here = json.loads(_cli("search", str(ws), "what does Maya like to drink", "--mode", "hybrid",
                           "--json").rsplit("\n", 2)[0])
    assert here["via"] == "model" and here["hits"][0]["line"] == 3


def test_cli_counts_the_lines_that_match_and_shows_nearby_ones_apart(ws):
    write(ws, "memory/2026-11-30.md", "# 2026-11-30\n\n- Ordered a new grinder\n- Maya likes espresso after lunch\n"
                                      "- The grinder arrives Friday\n- Paid the invoice\n")
    lines = _cli("search", str(ws), "espresso", "--mode", "keyword").splitlines()
    assert lines[0].startswith("memory/2026-11-30.md:4: ") and "(words: espresso)" in lines[0]
    assert lines[1].startswith("-- nearby: ") and "not hits" in lines[1]
    nearby = lines[2:lines.index("1 hit(s) for 'espresso', keyword")]
    assert nearby and all("(matched nearby)" in line for line in nearby)
    as_json = json.loads(_cli("search", str(ws), "espresso", "--mode", "keyword", "--json").rsplit("\n", 2)[0])
    assert as_json["count"] == len(as_json["hits"]) == 1 and len(as_json["nearby"]) == len(nearby)
    assert all(h["match"] == "nearby" for h in as_json["nearby"])
