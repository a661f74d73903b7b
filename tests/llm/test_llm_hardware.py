"""Engine settings that depend on the machine."""
from __future__ import annotations

import os

from core.config import ModelSettings
from core.llm import hardware
from core.llm.client import LocalClient
from core.llm.engine import cpu_has_amx, extra_buffers_ok


def test_threads_are_the_physical_cores():
    cores = hardware.physical_cores()
    assert 1 <= cores <= (os.cpu_count() or 1)
    client = LocalClient(ModelSettings())
    assert client.n_threads == cores
    assert LocalClient(ModelSettings(n_threads=1)).n_threads == 1


def test_metal_on_apple_silicon_cpu_elsewhere():
    expected = -1 if hardware.is_apple_silicon() else 0
    assert hardware.default_gpu_layers(None) == expected
    assert hardware.default_gpu_layers(12) == 12
    assert LocalClient(ModelSettings()).worker_config()["n_gpu_layers"] == expected


def test_context_length_is_capped_by_the_model():
    assert LocalClient(ModelSettings(context_length=1_000_000)).context_length == 8192   # SmolLM2 was trained on 8k
    assert LocalClient(ModelSettings(context_length=2048)).context_length == 2048


def test_weight_repacking_follows_the_cpu_and_the_override(monkeypatch):
    monkeypatch.delenv("REVERIE_LLAMA_EXTRA_BUFTS", raising=False)
    assert extra_buffers_ok() == (not cpu_has_amx())
    monkeypatch.setenv("REVERIE_LLAMA_EXTRA_BUFTS", "1")
    assert extra_buffers_ok()
    monkeypatch.setenv("REVERIE_LLAMA_EXTRA_BUFTS", "0")
    assert not extra_buffers_ok()


def test_flash_attention_is_left_to_llama_cpp_and_the_defaults_are_restored():
    import llama_cpp.llama_cpp as lib

    from core.llm.engine import EngineConfig, load_llama

    client = LocalClient(ModelSettings(context_length=512))
    llm = load_llama(EngineConfig(**client.engine_config()))
    try:
        assert llm.context_params.flash_attn_type == lib.LLAMA_FLASH_ATTN_TYPE_AUTO
        assert llm.n_ctx() == 512 and llm.context_params.n_threads == client.n_threads
        assert lib.LLAMA_FLASH_ATTN_TYPE_ENABLED == 1, "the patch is undone after loading"
        assert lib.llama_model_default_params().use_extra_bufts, "llama.cpp's own default is untouched"
    finally:
        llm.close()
