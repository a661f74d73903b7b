"""Errors of the model catalog.

models/ sits below core/ and must not import it, so it has its own error;
core (core.llm, the CLI) turns it into core.errors.ModelError /
ModelNotFoundError with the same message.
"""
from __future__ import annotations

from pathlib import Path


class ModelFileError(Exception):
    """A model file is missing, unreadable, corrupt, not GGUF, or failed its checksum."""

    def __init__(self, message: str, *, path: Path | str | None = None):
        super().__init__(message)
        self.path = Path(path) if path is not None else None


class UnknownModelError(ModelFileError):
    """The name is neither a catalog id nor an existing file."""


class DownloadError(ModelFileError):
    """A download failed (network, server, checksum)."""
