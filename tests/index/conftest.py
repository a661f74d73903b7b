"""Real files in tmp_path, real SQLite; the real MiniLM model where vectors are tested."""
from __future__ import annotations

from pathlib import Path

import pytest

from core.config import SearchSettings
from core.index import SearchIndex


@pytest.fixture
def ws(tmp_path) -> Path:
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    (root / "sessions").mkdir()
    (root / ".reverie").mkdir()
    return root


@pytest.fixture
def keyword_index(ws):
    """A keyword-only index (no model): what FTS tests need."""
    index = SearchIndex(ws, ws / ".reverie" / "index.db", SearchSettings(), embedder=False)
    yield index
    index.close()


@pytest.fixture(scope="session")
def minilm():
    from core.index.embedding import default_embedder

    embedder = default_embedder()
    embedder.load()
    return embedder
