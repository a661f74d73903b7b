"""Content hashes: what a compare-and-swap write checks, and what a checkpoint records of an artifact."""
from __future__ import annotations

import hashlib
from pathlib import Path


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_hash(path: Path) -> str:
    """sha256 of the file's bytes; "" for a file that does not exist."""
    try:
        return sha256_bytes(path.read_bytes())
    except FileNotFoundError:
        return ""
