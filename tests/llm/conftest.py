"""Fixtures for the model engine tests: the bundled GGUF models."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.gguf import SMOL, model_path


@pytest.fixture(scope="session")
def smol_path() -> Path:
    return model_path(SMOL)
