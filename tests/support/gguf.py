"""The two bundled GGUF models by id, and hand-made GGUF headers for broken or huge model files."""
from __future__ import annotations

import struct
from pathlib import Path

SMOL = "smollm2-135m-instruct-q4_1"
GEMMA = "gemma3-270m-it-q4_k_m"
MODELS = [SMOL, GEMMA]


def model_path(model_id: str) -> Path:
    import models

    return models.resolve_model_path(model_id)


def gguf_bytes(kv: dict, tensors: list[tuple[str, list[int], int]]) -> bytes:
    """A GGUF header (version 3) with string/uint32 metadata and tensor infos (type 1 = F16)."""
    def string(text: str) -> bytes:
        raw = text.encode()
        return struct.pack("<Q", len(raw)) + raw

    out = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kv))
    for key, value in kv.items():
        out += string(key)
        if isinstance(value, str):
            out += struct.pack("<I", 8) + string(value)
        else:
            out += struct.pack("<II", 4, value)
    offset = 0
    for name, dims, kind in tensors:
        out += string(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims)
        out += struct.pack("<IQ", kind, offset)
        elements = 1
        for d in dims:
            elements *= d
        offset += (elements * 2 + 31) // 32 * 32
    return out


def huge_gguf(path: Path, weight_bytes: int) -> Path:
    """A sparse GGUF whose single F16 tensor needs `weight_bytes` (no disk is really used)."""
    cols = 1 << 16
    rows = max(1, weight_bytes // (cols * 2))
    header = gguf_bytes({"general.architecture": "llama", "llama.context_length": 4096, "llama.block_count": 1,
                         "llama.embedding_length": 4096, "llama.attention.head_count": 32,
                         "general.alignment": 32}, [("w", [cols, rows], 1)])
    data_start = (len(header) + 31) // 32 * 32
    with path.open("wb") as handle:
        handle.write(header)
        handle.truncate(data_start + cols * rows * 2)
    return path
