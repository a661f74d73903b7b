"""Shared test set-up: offline model loading, headless Qt, real temporary workspaces."""
from __future__ import annotations

import os

# Set before anything imports huggingface_hub, transformers or Qt.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import pytest  # noqa: E402


@pytest.fixture
def workspace(tmp_path):
    """A new, empty workspace with the full layout."""
    from core.workspace import Workspace

    ws = Workspace.create(tmp_path / "ws")
    yield ws
    ws.close()


@pytest.fixture
def demo_workspace(tmp_path):
    """The bundled demo workspace, written fresh."""
    from core.demo import write_demo
    from core.workspace import Workspace

    write_demo(tmp_path / "demo")
    ws = Workspace.open(tmp_path / "demo")
    yield ws
    ws.close()
