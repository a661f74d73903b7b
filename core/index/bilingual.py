"""Each text embedded by the model that reads its language: MiniLM for Latin-script text, USE
multilingual v3 for Chinese, Japanese and Korean.

Why: all-MiniLM-L6-v2 is an English model. Under it short unrelated Chinese lines sit close to each
other, and on real Chinese workspaces its meaning half made hybrid search worse than keyword search
alone; a multilingual model fixes Chinese but costs English conversation recall (LoCoMo). Measured
in docs/benchmarks.md ("Real workspaces, Chinese, and the embedding model").

How, in one vector space: a text is CJK when it has at least as many CJK characters as Latin words
(a Chinese line keeps its English identifiers, and the English date words the index adds to a
line's embedded text do not turn it English), and then

    v(t) = [ 0, use(t) ]      else      v(t) = [ minilm(t), 0 ]       (384 + 512 dimensions, unit length)

so two English texts compare exactly as under MiniLM (the same ranking, the same meaning floor),
two CJK texts exactly as under USE (whose chance level, 0.110, is MiniLM's, 0.120, within 0.01:
calibration.py), and a CJK text with an English one not at all (MiniLM's reading of Chinese is
noise). A share-weighted mix of the two was tried first: the weights then varied with how much
English a line's context held and ranked Chinese lines by that rather than by meaning (Chinese
bench meaning hit@5 0.083). Queries and lines are embedded the same way, so the index, the cache,
the child process and the dream need nothing new; each text runs through one model only.
"""
from __future__ import annotations

import re
from typing import Sequence

import numpy as np

from core.index import cjk
from core.index.embedder import (BILINGUAL_MODEL, DEFAULT_MODEL, MULTILINGUAL_MODEL, SentenceTransformerEmbedder,
                                 UniversalSentenceEncoder, model_id_for)

_LATIN_WORD = re.compile(r"[A-Za-z\u00c0-\u024f]+")


def is_cjk_text(text: str) -> bool:
    """At least as many CJK characters as Latin words (and at least one CJK character)."""
    wide = len(cjk.CJK_CHAR.findall(text))
    return wide > 0 and wide >= len(_LATIN_WORD.findall(text))


class BilingualEmbedder:
    """MiniLM and USE side by side, each text weighted by its language (module docstring)."""

    def __init__(self, model: str = BILINGUAL_MODEL):
        self.latin = SentenceTransformerEmbedder(DEFAULT_MODEL)
        self.cjk = UniversalSentenceEncoder(MULTILINGUAL_MODEL)
        self.name, self.model_id = model_id_for(BILINGUAL_MODEL)   # what every process reports for it
        self.folder = self.latin.folder

    @property
    def dim(self) -> int:
        return self.latin.dim + self.cjk.dim

    @property
    def loaded(self) -> bool:
        return self.latin.loaded and self.cjk.loaded

    def load(self):
        self.latin.load()
        self.cjk.load()
        return self

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        latin_dim, cjk_dim = self.latin.dim, self.cjk.dim
        out = np.zeros((len(texts), latin_dim + cjk_dim), dtype=np.float32)
        wide = [i for i, t in enumerate(texts) if is_cjk_text(t)]
        latin = sorted(set(range(len(texts))) - set(wide))
        if latin:
            out[latin, :latin_dim] = self.latin.embed_batch([texts[i] for i in latin])
        if wide:
            out[wide, latin_dim:] = self.cjk.embed_batch([texts[i] for i in wide])
        return out

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed_batch(texts)
