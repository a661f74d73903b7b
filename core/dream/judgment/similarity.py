"""How alike two facts are: embeddings when the embedder is available, words otherwise.

Near-duplicates are bullets whose embeddings have cosine >= 0.95 (memory.near_duplicate_cosine), or
the same text up to case, spacing and punctuation. Related bullets (shown to the
model next to a new fact) are the few most similar ones above a floor. Word overlap
also checks that text the model wrote is grounded in the facts it was given.
"""
from __future__ import annotations

import functools
import hashlib
import math
import re
from typing import Callable, Sequence

from core.store.private import cache_file, write_cache


@functools.lru_cache(maxsize=16384)
def normalise(text: str) -> str:
    """Text compared for exact duplicates: case, spacing and punctuation do not count."""
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())

Embed = Callable[[list[str]], "object"]   # texts -> array (n, d) of unit vectors

_WORD = re.compile(r"[^\W\d_]+|\d+(?:[.,]\d+)?", re.UNICODE)
# The CJK letters the judgment reads one character at a time (kana, CJK ideographs, Hangul); the
# other judgment modules take the class from here.
CJK_CHARS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af"
CJK = re.compile(f"[{CJK_CHARS}]")
_STOP = frozenset("""a an the and or but if then of to in on at for from by with without is are was were be been
being it its this that these those as not no so do does did has have had will would can could should may
might must i we you he she they them his her their our your my me us there here what which who whom when
where why how all any each some such than too very just also into out up down over under again about
after before while because until more most other own same only both few s t""".split())


@functools.lru_cache(maxsize=8192)
def words(text: str) -> frozenset[str]:
    """Content words of `text`; Chinese/Japanese/Korean runs become character pairs."""
    found: set[str] = set()
    for token in _WORD.findall(text.lower()):
        if CJK.search(token):
            chars = [c for c in token if CJK.match(c)]
            found.update(a + b for a, b in zip(chars, chars[1:]))
            if len(chars) == 1:
                found.add(chars[0])
        elif token not in _STOP and (len(token) > 1 or token.isdigit()):
            found.add(token)
    return frozenset(found)


def lexical(a: str, b: str) -> float:
    """Cosine of the two word sets (0..1)."""
    wa, wb = words(a), words(b)
    if not wa or not wb:
        return 1.0 if normalise(a) == normalise(b) and normalise(a) else 0.0
    return len(wa & wb) / math.sqrt(len(wa) * len(wb))


def grounded(text: str, reference: str, minimum: float = 0.6) -> bool:
    """Most content words of `text` occur in `reference` (the model did not invent the fact)."""
    mine = words(text)
    if not mine:
        return False
    return len(mine & words(reference)) / len(mine) >= minimum


_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")


def numbers(text: str) -> frozenset[str]:
    """The numbers a fact states: two facts that differ in one are never duplicates
    (embeddings barely see "3.4 V" vs "3.2 V")."""
    return frozenset(n.replace(",", ".") for n in _NUMBER.findall(text))


CACHE_NAME = "dream-vectors.npz"

class VectorCache:
    """Embeddings of bullet and fact texts, kept in `.reverie/dream-vectors.npz` so a dream embeds
    only texts it has not seen (cost follows the new material, not the size of MEMORY.md)."""

    def __init__(self, paths, model_id: str):
        self.paths = paths
        self.path = cache_file(paths, CACHE_NAME)
        self.model_id = model_id
        self.vectors: dict[str, object] = {}
        self.dirty = False

    @staticmethod
    def key(text: str) -> str:
        return hashlib.sha1(text.encode("utf-8")).hexdigest()

    def load(self) -> "VectorCache":
        import numpy as np

        try:
            with np.load(self.path, allow_pickle=False) as data:
                if str(data["model"]) == self.model_id:
                    self.vectors = dict(zip((str(k) for k in data["keys"]), data["vectors"]))
        except (FileNotFoundError, OSError, KeyError, ValueError):
            self.vectors = {}     # missing or damaged: it is only a cache
        return self

    def save(self, keep: set[str]) -> None:
        """Write the vectors of `keep` (the texts of this dream), dropping the rest."""
        import io

        import numpy as np

        kept = {k: v for k, v in self.vectors.items() if k in keep}
        if not self.dirty and len(kept) == len(self.vectors):
            return
        buffer = io.BytesIO()
        dim = len(next(iter(kept.values()))) if kept else 0
        np.savez(buffer, model=np.asarray(self.model_id), keys=np.asarray(list(kept), dtype=str),
                 vectors=np.asarray(list(kept.values()), dtype=np.float32).reshape(len(kept), dim))
        write_cache(self.paths, CACHE_NAME, buffer.getvalue())
        self.vectors, self.dirty = kept, False


class Similarity:
    """Scores between texts; embeddings are computed once per distinct text."""

    def __init__(self, embed: Embed | None = None, near_duplicate: float = 0.95, cache: VectorCache | None = None):
        self.embed = embed
        self.threshold = near_duplicate
        self.cache = cache
        self._vectors: dict[str, object] = {}
        self.embedded = 0          # texts this instance had to embed (not found in the cache)

    @property
    def semantic(self) -> bool:
        return self.embed is not None

    # Floors differ: word overlap scores run far lower than embedding cosines for the same pair.
    @property
    def related_floor(self) -> float:
        return 0.35 if self.semantic else 0.2

    @property
    def duplicate_floor(self) -> float:
        """Enough likeness for the model's "skip: already known" to be believed."""
        return 0.8 if self.semantic else 0.5

    def prepare(self, texts: Sequence[str]) -> None:
        if self.embed is None:
            return
        todo = []
        for text in dict.fromkeys(texts):
            if text in self._vectors:
                continue
            cached = self.cache.vectors.get(VectorCache.key(text)) if self.cache is not None else None
            if cached is not None:
                self._vectors[text] = cached
            else:
                todo.append(text)
        if todo:
            vectors = self.embed(todo)
            self.embedded += len(todo)
            for text, vector in zip(todo, vectors):
                self._vectors[text] = vector
                if self.cache is not None:
                    self.cache.vectors[VectorCache.key(text)] = vector
                    self.cache.dirty = True

    def save_cache(self) -> None:
        if self.cache is not None:
            self.cache.save({VectorCache.key(t) for t in self._vectors})

    def score(self, a: str, b: str) -> float:
        if self.embed is None:
            return lexical(a, b)
        self.prepare([a, b])
        return float(self._vectors[a].dot(self._vectors[b]))

    def near_duplicate(self, a: str, b: str) -> tuple[bool, float]:
        if normalise(a) == normalise(b):
            return True, 1.0
        if self.embed is None:
            return False, lexical(a, b)
        value = self.score(a, b)
        return value >= self.threshold and numbers(a) == numbers(b), value

    def duplicate_pairs(self, texts: Sequence[str], *, semantic: bool = True) -> list[tuple[int, int, float]]:
        """(i, j, score) with i < j for every near-duplicate pair among `texts`, in order.
        Same normalised text is found by grouping (linear); embeddings by one matrix product."""
        pairs: dict[tuple[int, int], float] = {}
        first_of: dict[str, int] = {}
        for index, text in enumerate(texts):
            key = normalise(text)
            if key and key in first_of:
                pairs[(first_of[key], index)] = 1.0
            else:
                first_of.setdefault(key, index)
        if semantic and self.embed is not None and len(texts) > 1:
            import numpy as np

            self.prepare(list(texts))
            matrix = np.asarray([self._vectors[t] for t in texts], dtype=np.float32)
            scores = matrix @ matrix.T
            for i, j in zip(*np.nonzero(np.triu(scores >= self.threshold, k=1))):
                i, j = int(i), int(j)
                if numbers(texts[i]) == numbers(texts[j]):
                    pairs.setdefault((i, j), float(scores[i, j]))
        return [(i, j, score) for (i, j), score in sorted(pairs.items())]

    def best_matches(self, texts: Sequence[str], against: Sequence[str]) -> list[tuple[int, float]]:
        """For each of `texts`, the index in `against` of the text most like it, and the score
        (-1, 0.0 when `against` is empty); one matrix product with embeddings."""
        if not against:
            return [(-1, 0.0) for _ in texts]
        if self.embed is None:
            out = []
            for text in texts:
                scores = [lexical(text, other) for other in against]
                best = max(range(len(scores)), key=scores.__getitem__)
                out.append((best, scores[best]))
            return out
        import numpy as np

        self.prepare(list(texts) + list(against))
        left = np.asarray([self._vectors[t] for t in texts], dtype=np.float32).reshape(len(texts), -1)
        right = np.asarray([self._vectors[t] for t in against], dtype=np.float32)
        scores = left @ right.T
        best = scores.argmax(axis=1)
        return [(int(j), float(scores[i, j])) for i, j in enumerate(best)]

    def related(self, text: str, candidates: Sequence[tuple[str, str]], k: int = 3) -> list[tuple[str, float]]:
        """The k (key, score) candidates most like `text`, best first, above the floor."""
        if self.embed is not None:
            self.prepare([text] + [c for _, c in candidates])
        scored = [(key, self.score(text, other)) for key, other in candidates]
        scored = [item for item in scored if item[1] >= self.related_floor]
        return sorted(scored, key=lambda item: -item[1])[:k]


def load_similarity(paths, settings, embedder=None) -> Similarity:
    """Embedding similarity with the index's embedder (all-MiniLM-L6-v2) and the dream's vector
    cache; word similarity when the embedder cannot load (exact-text duplicates still merge).
    `embedder`: another one with the same protocol (a dream in a child process relays to the
    app's), or False for word similarity only."""
    threshold = settings.memory.near_duplicate_cosine
    if embedder is False:
        return Similarity(None, threshold)
    if embedder is None:
        try:
            from core.index.embedding import default_embedder

            embedder = default_embedder(settings.search.embedding_model)
        except Exception:   # not installed, model files missing, torch broken: words instead
            return Similarity(None, threshold)
    cache = VectorCache(paths, embedder.model_id).load()
    return Similarity(embedder.embed_batch, threshold, cache)
