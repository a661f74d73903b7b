"""Which embedder a setting value names, made to run in this process (the embedding child, the
dream's judgment features, tests). Apart from core/index/embedder.py because the bilingual embedder
is built from that module's two models."""
from __future__ import annotations

from core.index.bilingual import BilingualEmbedder
from core.index.embedder import (BILINGUAL_MODEL, E5_MODEL, MULTILINGUAL_MODEL, E5Embedder,
                                 SentenceTransformerEmbedder, UniversalSentenceEncoder, resolve_model)


def in_process_embedder(model: str = ""):
    """A new embedder for a setting value that runs the model in this process."""
    name, _folder = resolve_model(model)
    if name == MULTILINGUAL_MODEL:
        return UniversalSentenceEncoder(name)
    if name == E5_MODEL:
        return E5Embedder(name)
    if name == BILINGUAL_MODEL:
        return BilingualEmbedder(name)
    return SentenceTransformerEmbedder(model)
