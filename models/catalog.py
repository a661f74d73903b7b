"""The model catalog: catalog.toml read into frozen entries."""
from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass, fields
from pathlib import Path

from models.errors import ModelFileError, UnknownModelError

CATALOG_PATH = Path(__file__).with_name("catalog.toml")
CHAT_FORMATS = ("gguf", "chatml", "gemma")
JSON_MODES = ("grammar", "retry")


@dataclass(frozen=True)
class CatalogEntry:
    id: str
    name: str
    file: str
    repo: str
    context_length: int
    chat_format: str = "gguf"
    json_mode: str = "grammar"
    size_bytes: int = 0
    sha256: str = ""
    bundled: str = ""            # "" = fetched from `repo`; else the name of the bundling recipe
    revision: str = "main"
    n_layers: int = 0
    n_kv_heads: int = 0
    head_dim: int = 0
    use: str = ""

    @property
    def kv_bytes_per_token(self) -> int:
        return self.n_layers * self.n_kv_heads * self.head_dim * 2 * 2   # K and V, f16


def _entry(raw: dict, source: Path) -> CatalogEntry:
    known = {f.name for f in fields(CatalogEntry)}
    unknown = set(raw) - known
    if unknown:
        raise ModelFileError(f"{source}: unknown field(s) {', '.join(sorted(unknown))} in model {raw.get('id')!r}")
    missing = [name for name in ("id", "name", "file", "repo", "context_length") if name not in raw]
    if missing:
        raise ModelFileError(f"{source}: model {raw.get('id')!r} lacks {', '.join(missing)}")
    entry = CatalogEntry(**raw)
    if entry.chat_format not in CHAT_FORMATS:
        raise ModelFileError(f"{source}: model {entry.id}: chat_format must be one of {CHAT_FORMATS}")
    if entry.json_mode not in JSON_MODES:
        raise ModelFileError(f"{source}: model {entry.id}: json_mode must be one of {JSON_MODES}")
    return entry


@functools.lru_cache(maxsize=4)
def load_catalog(path: Path = CATALOG_PATH) -> tuple[CatalogEntry, ...]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ModelFileError(f"cannot read the model catalog {path}: {exc}", path=path) from exc
    entries = tuple(_entry(raw, path) for raw in data.get("model", []))
    ids = [e.id for e in entries]
    if len(set(ids)) != len(ids):
        raise ModelFileError(f"{path}: duplicate model ids", path=path)
    return entries


def find_entry(model_id: str) -> CatalogEntry | None:
    for entry in load_catalog():
        if entry.id == model_id:
            return entry
    return None


def get_entry(model_id: str) -> CatalogEntry:
    entry = find_entry(model_id)
    if entry is None:
        known = ", ".join(e.id for e in load_catalog())
        raise UnknownModelError(f"unknown model {model_id!r}: not a catalog id ({known}) and not a GGUF file")
    return entry


def entry_for_file(path: Path) -> CatalogEntry | None:
    """The catalog entry whose file name this is (so a copied file keeps its chat format)."""
    for entry in load_catalog():
        if entry.file == path.name:
            return entry
    return None
