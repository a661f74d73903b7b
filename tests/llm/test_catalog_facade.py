"""core.llm.catalog: the model catalog as front ends see it, with core's errors."""
from __future__ import annotations

import pytest

from core.errors import ModelNotFoundError
from core.llm.catalog import catalog_model, catalog_models, download_model


def test_the_catalog_lists_the_bundled_models_as_present():
    models = {m.id: m for m in catalog_models()}
    smol = models["smollm2-135m-instruct-q4_1"]
    assert smol.bundled and smol.present and smol.fits and smol.size_bytes > 0
    assert smol.size_text.endswith("MiB")
    assert catalog_model(smol.id) == smol


def test_an_unknown_id_is_a_core_error():
    with pytest.raises(ModelNotFoundError, match="not a catalog id"):
        catalog_model("no-such-model")
    with pytest.raises(ModelNotFoundError):
        download_model("/tmp/some-file.gguf")
