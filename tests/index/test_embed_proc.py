"""The embedding model in a child process (core/index/embed_proc.py): the real MiniLM model, real child processes."""
from __future__ import annotations

import os
import signal
import time

import numpy as np
import pytest

from core.index.embed_proc import ProcessEmbedder
from core.index.embedder import EmbedderError
from core.index.embedding import default_embedder

TEXTS = ["the backup job failed at 03:00 and was retried", "Maya prefers tea over coffee",
         "陈伟 更新了固件", "deploy staging after the Keycloak upgrade", ""]


def _gone(pid: int, within_s: float = 10.0) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            finished, _status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:      # already reaped by its Popen
            finished = pid
        if finished == pid:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return True
        time.sleep(0.05)
    return False


@pytest.fixture(scope="module")
def proc_embedder():
    embedder = ProcessEmbedder()
    yield embedder
    embedder.close()


@pytest.mark.slow
def test_vectors_equal_the_in_process_ones(proc_embedder, minilm):
    assert proc_embedder.model_id == minilm.model_id       # the embedding cache stays valid
    assert proc_embedder.dim == minilm.dim == 384
    got = proc_embedder.embed_batch(TEXTS)
    want = minilm.embed_batch(TEXTS)
    assert got.dtype == np.float32 and got.shape == (len(TEXTS), 384)
    assert np.abs(got - want).max() < 1e-5
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-4)
    assert proc_embedder.embed_batch([]).shape == (0, 384)
    assert proc_embedder.pid is not None and proc_embedder.pid != os.getpid()


@pytest.mark.slow
def test_a_killed_child_is_restarted(proc_embedder, minilm):
    proc_embedder.embed_batch(["start it"])
    first, starts = proc_embedder.pid, proc_embedder.starts
    os.kill(first, signal.SIGKILL)
    assert _gone(first)
    again = proc_embedder.embed_batch(TEXTS[:2])
    assert proc_embedder.starts == starts + 1 and proc_embedder.pid not in (None, first)
    assert np.abs(again - minilm.embed_batch(TEXTS[:2])).max() < 1e-5


@pytest.mark.slow
def test_a_child_killed_mid_request_is_restarted_once(proc_embedder):
    proc_embedder.embed_batch(["start it"])
    starts = proc_embedder.starts
    victim = proc_embedder.pid
    # Kill the child while it encodes a large batch: the request goes to a fresh child.
    import threading

    threading.Timer(0.3, lambda: os.kill(victim, signal.SIGKILL)).start()
    vectors = proc_embedder.embed_batch([f"line {i} about the nightly backup" for i in range(3000)])
    assert vectors.shape == (3000, 384)
    assert proc_embedder.starts == starts + 1


def test_a_child_that_cannot_load_its_model_is_a_clear_error(tmp_path):
    folder = tmp_path / "broken-model"
    folder.mkdir()
    (folder / "config.json").write_text("{ not json", encoding="utf-8")
    embedder = ProcessEmbedder(str(folder))
    try:
        with pytest.raises(EmbedderError, match="embedding model|broken-model"):
            embedder.embed_batch(["anything"])
        assert embedder.pid is None
    finally:
        embedder.close()


@pytest.mark.slow
def test_a_child_that_keeps_dying_ends_in_a_clear_error():
    """Every child is killed soon after it appears: one restart, then EmbedderError (and no child left)."""
    import threading

    embedder = ProcessEmbedder()
    embedder.embed_batch(["start it"])
    stop, killed = threading.Event(), []

    def killer() -> None:
        while not stop.is_set():
            pid = embedder._proc.pid if embedder._proc is not None else None
            if pid is not None and pid not in killed:
                time.sleep(0.2)
                try:
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
                except ProcessLookupError:
                    pass
            time.sleep(0.02)

    thread = threading.Thread(target=killer)
    thread.start()
    try:
        with pytest.raises(EmbedderError, match="embedding process"):
            embedder.embed_batch([f"line {i} about the nightly backup" for i in range(5000)])
        assert len(killed) == 2 and embedder.starts == 2
    finally:
        stop.set()
        thread.join()
        embedder.close()
    assert embedder.pid is None and all(_gone(pid) for pid in killed)


@pytest.mark.slow
def test_close_leaves_no_process():
    embedder = ProcessEmbedder()
    embedder.embed_batch(["hello"])
    pid = embedder.pid
    assert pid is not None
    embedder.close()
    assert embedder.pid is None and _gone(pid)
    # Used again after close: a fresh child, closed again.
    embedder.embed_batch(["again"])
    second = embedder.pid
    assert second not in (None, pid)
    embedder.close()
    assert _gone(second)


def test_default_embedder_picks_the_kind():
    from core.index import embedding as module

    assert isinstance(default_embedder(process=True), ProcessEmbedder)
    assert not isinstance(default_embedder(process=False), ProcessEmbedder)
    assert default_embedder(process=True) is default_embedder(process=True)
    try:
        module.prefer_process(True)
        assert default_embedder() is default_embedder(process=True)
    finally:
        module.prefer_process(False)
    assert not isinstance(default_embedder(), ProcessEmbedder)
    module.close_process_embedders()           # nothing was started: closing is a no-op
    assert default_embedder(process=True).pid is None


@pytest.mark.slow
def test_close_during_a_request_fails_it_at_once_and_leaves_no_process():
    """A workspace closing while a request waits for a child still loading: the request fails, nothing restarts."""
    import threading

    embedder = ProcessEmbedder()
    outcome: list[object] = []

    def request() -> None:
        try:
            outcome.append(embedder.embed_batch(["while the model loads"]))
        except EmbedderError as exc:
            outcome.append(exc)

    thread = threading.Thread(target=request)
    thread.start()
    deadline = time.monotonic() + 30
    while embedder._proc is None and time.monotonic() < deadline:
        time.sleep(0.01)
    child = embedder._proc.pid
    started = time.monotonic()
    embedder.close()
    thread.join(timeout=30)
    assert not thread.is_alive() and time.monotonic() - started < 10
    assert isinstance(outcome[0], EmbedderError) and embedder.starts == 1
    assert embedder.pid is None and _gone(child)
    # The embedder is usable again afterwards (the next workspace).
    assert embedder.embed_batch(["again"]).shape == (1, 384)
    embedder.close()


@pytest.mark.slow
def test_a_query_goes_ahead_of_bulk_embedding(proc_embedder, minilm):
    """A search's query embedding does not wait for a dream's thousands of lines: it is served between chunks."""
    import threading

    proc_embedder.embed_batch(["start it"])
    finished: list[str] = []
    bulk_started = threading.Event()

    def bulk() -> None:
        bulk_started.set()
        proc_embedder.embed_batch([f"line {i} of a long daily log about backups" for i in range(2000)])
        finished.append("bulk")

    thread = threading.Thread(target=bulk)
    thread.start()
    bulk_started.wait()
    time.sleep(0.3)                       # the bulk request is inside the child now
    query = proc_embedder.embed_batch(["what does Maya drink"])
    finished.append("query")
    thread.join()
    assert finished == ["query", "bulk"]
    assert np.abs(query - minilm.embed_batch(["what does Maya drink"])).max() < 1e-5


@pytest.mark.slow
def test_a_hybrid_search_during_a_dreams_embedding_answers_within_a_second(proc_embedder, tmp_path):
    """The app's one embedding process is busy with a dream's thousands of texts; a search still answers at once.

    The child keeps the queue: a query's embedding is served between two small pieces of the bulk work.
    """
    import threading

    from core.config import SearchSettings
    from core.index import SearchIndex

    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    (root / "memory" / "2026-11-30.md").write_text(
        "# 2026-11-30\n\n- [09:05] Maya drinks tea, not coffee.\n- [10:00] The backup job moved to 03:00.\n",
        encoding="utf-8")
    with SearchIndex(root, root / ".reverie" / "index.db", SearchSettings(), embedder=proc_embedder) as index:
        index.sync()
        assert index.wait_embeddings(120)
        dream = threading.Thread(target=proc_embedder.embed_batch,
                                 args=([f"fact {i}: the nightly backup of project {i % 17} finished late" for i in range(4000)],))
        dream.start()
        time.sleep(1.0)                    # the dream's bulk work is queued in the child now
        started = time.monotonic()
        results = index.search("which hot drink does Maya like", k=3, mode="hybrid")
        took = time.monotonic() - started
        still_embedding = dream.is_alive()
        dream.join()
    assert still_embedding                 # the search did not wait for the dream's embedding to end
    assert took <= 1.0, f"hybrid search took {took:.2f} s during a dream's embedding"
    assert results.mode == "hybrid" and results.hits[0].line == 3 and results.hits[0].match == "both"
