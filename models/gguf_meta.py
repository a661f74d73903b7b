"""Read a GGUF file's header without loading the model.

`gguf.GGUFReader` builds a numpy view for every element of every array
(262k vocabulary strings for Gemma 3), which takes seconds; `reverie models
list` and the client's `context_length` must answer at once. So this walks the
header itself, using the gguf package's own value and quantisation tables, and
skips the big arrays. It also checks that the file is complete: every tensor's
data must lie inside the file, which catches a truncated download.
"""
from __future__ import annotations

import mmap
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from models.errors import ModelFileError

MAGIC = b"GGUF"
# Arrays longer than this are skipped, not kept (vocabularies, merges, scores).
_KEEP_ARRAY_MAX = 64

_SCALARS = {  # GGUFValueType number -> struct format
    0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d",
}
_STRING, _ARRAY = 8, 9
_U64 = struct.Struct("<Q")


@dataclass(frozen=True)
class GGUFInfo:
    path: Path
    file_size: int
    version: int
    tensor_count: int
    metadata: dict[str, Any] = field(repr=False)
    data_end: int = 0                 # where the last tensor's data ends

    def get(self, key: str, default: Any = None) -> Any:
        return self.metadata.get(key, default)

    @property
    def architecture(self) -> str:
        return str(self.get("general.architecture", ""))

    def _arch(self, key: str, default: Any = None) -> Any:
        return self.get(f"{self.architecture}.{key}", default)

    @property
    def name(self) -> str:
        return str(self.get("general.name", self.path.stem))

    @property
    def context_length(self) -> int:
        return int(self._arch("context_length", 0) or 0)

    @property
    def block_count(self) -> int:
        return int(self._arch("block_count", 0) or 0)

    @property
    def chat_template(self) -> str:
        return str(self.get("tokenizer.chat_template", "") or "")

    @property
    def kv_heads(self) -> int:
        heads = self._arch("attention.head_count_kv", self._arch("attention.head_count", 0))
        if isinstance(heads, list):     # per-layer counts (some hybrid models): take the largest
            heads = max(heads) if heads else 0
        return int(heads or 0)

    @property
    def head_dims(self) -> tuple[int, int]:
        """(key, value) dimension of one attention head."""
        heads = self._arch("attention.head_count", 0)
        if isinstance(heads, list):
            heads = max(heads) if heads else 0
        embd = int(self._arch("embedding_length", 0) or 0)
        default = embd // int(heads) if heads else 0
        return (int(self._arch("attention.key_length", default) or 0),
                int(self._arch("attention.value_length", default) or 0))

    def kv_bytes_per_token(self) -> int:
        """f16 K and V for every layer: what one token of context costs."""
        k, v = self.head_dims
        return self.block_count * self.kv_heads * (k + v) * 2


def read_gguf_info(path: str | Path) -> GGUFInfo:
    """The header of a GGUF file. ModelFileError (naming the file) when it is missing or not usable."""
    path = Path(path).expanduser()
    if not path.exists():
        raise ModelFileError(f"model file not found: {path}", path=path)
    if not path.is_file():
        raise ModelFileError(f"model path is not a file: {path}", path=path)
    stat = path.stat()
    size = stat.st_size
    if size < 24:
        raise ModelFileError(f"{path} is not a GGUF model file ({size} bytes, too short)", path=path)
    # Opening a model reads its header twice (context length, then the memory fit) and the app's
    # catalog reads them all: walking a vocabulary is tens of ms of Python, so once per file version.
    key = (str(path), size, stat.st_mtime_ns)
    if key in _INFO_CACHE:
        return _INFO_CACHE[key]
    try:
        with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            if data[:4] != MAGIC:
                raise ModelFileError(f"{path} is not a GGUF model file (it does not start with 'GGUF')", path=path)
            info = _parse(path, data, size)
    except OSError as exc:
        raise ModelFileError(f"cannot read model file {path}: {exc}", path=path) from exc
    if len(_INFO_CACHE) >= 64:
        _INFO_CACHE.clear()
    _INFO_CACHE[key] = info
    return info


_INFO_CACHE: dict[tuple[str, int, int], GGUFInfo] = {}


class _Cursor:
    def __init__(self, data, path: Path):
        self.data, self.pos, self.path = data, 4, path

    def take(self, fmt: str):
        try:
            (value,) = struct.unpack_from(fmt, self.data, self.pos)
        except struct.error:
            raise self.truncated() from None
        self.pos += struct.calcsize(fmt)
        return value

    def string(self, keep: bool = True) -> str:
        length = self.take("<Q")
        end = self.pos + length
        if end > len(self.data):
            raise self.truncated()
        raw = self.data[self.pos:end] if keep else b""
        self.pos = end
        return raw.decode("utf-8", errors="replace")

    def truncated(self) -> ModelFileError:
        return ModelFileError(f"{self.path} is truncated or corrupt (its GGUF header ends early); "
                              "download or copy it again", path=self.path)


def _value(cur: _Cursor, kind: int):
    if kind in _SCALARS:
        return cur.take(_SCALARS[kind])
    if kind == _STRING:
        return cur.string()
    if kind == _ARRAY:
        item_kind = cur.take("<I")
        count = cur.take("<Q")
        keep = count <= _KEEP_ARRAY_MAX
        if item_kind in _SCALARS:
            width = struct.calcsize(_SCALARS[item_kind])
            if keep:
                return [cur.take(_SCALARS[item_kind]) for _ in range(count)]
            cur.pos += width * count
            if cur.pos > len(cur.data):
                raise cur.truncated()
            return _Skipped(count)
        if item_kind == _STRING:
            if keep:
                return [cur.string() for _ in range(count)]
            _skip_strings(cur, count)
            return _Skipped(count)
        if item_kind == _ARRAY:
            return [_value(cur, _ARRAY) for _ in range(count)] if keep else _skip_nested(cur, count)
    raise ModelFileError(f"{cur.path} is corrupt (unknown GGUF value type {kind})", path=cur.path)


def _skip_strings(cur: _Cursor, count: int) -> None:
    """Step over `count` length-prefixed strings. A tight loop: a vocabulary is 50k-262k of them,
    and this runs on a thread of the app whose GIL the window shares (4x faster than string())."""
    data, pos, unpack, size = cur.data, cur.pos, _U64.unpack_from, len(cur.data)
    try:
        for _ in range(count):
            pos += 8 + unpack(data, pos)[0]
    except struct.error:
        raise cur.truncated() from None
    if pos > size:
        raise cur.truncated()
    cur.pos = pos


def _skip_nested(cur: _Cursor, count: int):
    for _ in range(count):
        _value(cur, _ARRAY)
    return _Skipped(count)


class _Skipped(int):
    """The length of an array we did not keep (len-like, never the values)."""


def _parse(path: Path, data, size: int) -> GGUFInfo:
    from gguf import GGML_QUANT_SIZES, GGMLQuantizationType

    cur = _Cursor(data, path)
    version = cur.take("<I")
    if version not in (2, 3):
        raise ModelFileError(f"{path} has GGUF version {version}, which this llama.cpp cannot read", path=path)
    tensor_count = cur.take("<Q")
    kv_count = cur.take("<Q")
    if tensor_count > 1_000_000 or kv_count > 1_000_000:
        raise ModelFileError(f"{path} is corrupt (implausible GGUF header counts)", path=path)
    metadata: dict[str, Any] = {}
    for _ in range(kv_count):
        key = cur.string()
        metadata[key] = _value(cur, cur.take("<I"))
    tensors_end = 0
    for _ in range(tensor_count):
        name = cur.string()
        dims = [cur.take("<Q") for _ in range(cur.take("<I"))]
        kind = cur.take("<I")
        offset = cur.take("<Q")
        try:
            block, type_size = GGML_QUANT_SIZES[GGMLQuantizationType(kind)]
        except (ValueError, KeyError):
            raise ModelFileError(f"{path}: tensor {name!r} has a quantisation type ({kind}) "
                                 "this version does not know; update llama-cpp-python", path=path) from None
        elements = 1
        for d in dims:
            elements *= d
        tensors_end = max(tensors_end, offset + elements // block * type_size)
    alignment = int(metadata.get("general.alignment", 32) or 32)
    data_start = (cur.pos + alignment - 1) // alignment * alignment
    data_end = data_start + tensors_end if tensor_count else cur.pos
    if data_end > size:
        raise ModelFileError(f"{path} is truncated: its tensors need {data_end:,} bytes but the file has "
                             f"{size:,}; download or copy it again", path=path)
    return GGUFInfo(path=path, file_size=size, version=version, tensor_count=tensor_count,
                    metadata=metadata, data_end=data_end)
