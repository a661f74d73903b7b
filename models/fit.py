"""Does a model fit this machine? Weights plus KV cache against usable memory.

On Apple Silicon the GPU shares RAM, and Metal may wire only about two thirds
of it, so that is the budget there. Elsewhere the model runs on the CPU and
the budget is the memory available now (MemAvailable on Linux).
"""
from __future__ import annotations

import os
import platform
import subprocess
from dataclasses import dataclass
from pathlib import Path

from models.catalog import CatalogEntry

MIB = 1 << 20
GIB = 1 << 30


def is_apple_silicon() -> bool:
    return platform.system() == "Darwin" and platform.machine() == "arm64"


def total_memory() -> int:
    if platform.system() == "Darwin":
        try:
            return int(subprocess.run(["sysctl", "-n", "hw.memsize"], capture_output=True, text=True,
                                      timeout=5).stdout.strip())
        except (OSError, ValueError, subprocess.SubprocessError):
            pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 0


def _meminfo(key: str) -> int:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def usable_memory() -> int:
    """Bytes a model may use here."""
    if is_apple_silicon():
        return total_memory() * 2 // 3
    return _meminfo("MemAvailable") or total_memory()


@dataclass(frozen=True)
class Fit:
    weights_bytes: int
    kv_bytes: int
    overhead_bytes: int
    usable_bytes: int
    context_length: int

    @property
    def need_bytes(self) -> int:
        return self.weights_bytes + self.kv_bytes + self.overhead_bytes

    @property
    def fits(self) -> bool:
        return self.usable_bytes <= 0 or self.need_bytes <= self.usable_bytes

    def describe(self) -> str:
        return (f"needs {self.need_bytes / GIB:.1f} GiB (weights {self.weights_bytes / GIB:.1f} + KV cache "
                f"{self.kv_bytes / GIB:.2f} for {self.context_length} tokens), "
                f"{self.usable_bytes / GIB:.1f} GiB usable here")


def estimate(weights_bytes: int, kv_bytes_per_token: int, context_length: int,
             usable_bytes: int | None = None) -> Fit:
    # Compute buffers and the runtime itself: a small share of the weights, at least 64 MiB.
    overhead = max(64 * MIB, weights_bytes // 20)
    return Fit(weights_bytes=weights_bytes, kv_bytes=kv_bytes_per_token * context_length,
               overhead_bytes=overhead, usable_bytes=usable_memory() if usable_bytes is None else usable_bytes,
               context_length=context_length)


def fit_for_file(path: Path, context_length: int, usable_bytes: int | None = None) -> Fit:
    """From a present file's own header (exact layer and head counts)."""
    from models.gguf_meta import read_gguf_info

    info = read_gguf_info(path)
    ctx = min(context_length, info.context_length) if info.context_length else context_length
    return estimate(info.file_size, info.kv_bytes_per_token(), ctx, usable_bytes)


def fit_for_entry(entry: CatalogEntry, context_length: int, usable_bytes: int | None = None) -> Fit:
    """From the catalog's figures (the file need not be here)."""
    ctx = min(context_length, entry.context_length) if entry.context_length else context_length
    return estimate(entry.size_bytes, entry.kv_bytes_per_token, ctx, usable_bytes)
