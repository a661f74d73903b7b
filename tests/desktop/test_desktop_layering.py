"""The desktop talks to core only (docs/architecture.md, "Layers"): never to models/ directly, whose catalog core re-exports."""
from __future__ import annotations

from pathlib import Path

from tests.support.imports import imported_modules

DESKTOP = Path(__file__).resolve().parents[2] / "desktop"


def test_the_desktop_never_imports_models_directly():
    offences = [f"{path.relative_to(DESKTOP.parent)}:{line} imports {module}"
                for path in sorted(DESKTOP.rglob("*.py"))
                for line, module in imported_modules(path) if module.split(".")[0] == "models"]
    assert not offences, "use core.llm.catalog instead:\n" + "\n".join(offences)


def test_the_app_serves_embeddings_from_a_child_process(qapp):
    """The composition root picks the process embedder (torch never holds the GUI's GIL) and tunes the GC."""
    import gc
    import sys

    from core.index import embedding as embedder
    from core.index.embed_proc import ProcessEmbedder
    from desktop.app import make_app

    thresholds, interval = gc.get_threshold(), sys.getswitchinterval()
    try:
        assert make_app() is qapp
        assert isinstance(embedder.default_embedder(), ProcessEmbedder)
        assert gc.get_threshold()[2] == 1000 and gc.get_freeze_count() > 0
    finally:
        embedder.prefer_process(False)
        gc.unfreeze()
        gc.set_threshold(*thresholds)
        sys.setswitchinterval(interval)
    assert not isinstance(embedder.default_embedder(), ProcessEmbedder)
