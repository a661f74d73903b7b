"""Embedders for tests: the real model, wrapped so a test can see what it was asked to embed."""
from __future__ import annotations


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
