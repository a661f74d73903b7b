"""Real files in tmp_path, real SQLite; the real MiniLM model where vectors are tested."""
from __future__ import annotations

from pathlib import Path

import pytest

from core.config import SearchSettings
from core.index import SearchIndex


def write(root: Path, rel: str, text: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


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
    from core.index.embedder import default_embedder

    embedder = default_embedder()
    embedder.load()
    return embedder


class CountingEmbedder:
    """The real model, counting what it is asked to embed (to prove cache hits)."""

    def __init__(self, inner):
        self.inner = inner
        self.model_id = inner.model_id
        self.texts: list[str] = []

    @property
    def dim(self):
        return self.inner.dim

    def embed_batch(self, texts):
        self.texts.extend(texts)
        return self.inner.embed_batch(texts)
