"""Engine settings that depend on the machine."""
from __future__ import annotations

import os

from core.config import ModelSettings
from core.llm import hardware
from core.llm.client import LocalClient
from core.llm.engine import build_has_amx, cpu_has_amx, extra_buffers_forced, extra_buffers_ok


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
    import llama_cpp

    monkeypatch.delenv("REVERIE_LLAMA_EXTRA_BUFTS", raising=False)
    assert build_has_amx() == (b"AMX_INT8 = 1" in llama_cpp.llama_print_system_info())
    assert extra_buffers_ok() == (not (cpu_has_amx() and build_has_amx()))
    assert not extra_buffers_forced()
    monkeypatch.setattr(llama_cpp, "llama_print_system_info", lambda: b"CPU : AVX2 = 1 | REPACK = 1 |")
    assert not build_has_amx() and extra_buffers_ok(), "a build without AMX code repacks on any CPU"
    monkeypatch.setattr(llama_cpp, "llama_print_system_info", lambda: b"CPU : AVX2 = 1 | AMX_INT8 = 1 |")
    assert build_has_amx() and extra_buffers_ok() == (not cpu_has_amx())
    monkeypatch.setenv("REVERIE_LLAMA_EXTRA_BUFTS", "1")
    assert extra_buffers_ok()
    assert extra_buffers_forced() == cpu_has_amx()
    monkeypatch.setenv("REVERIE_LLAMA_EXTRA_BUFTS", "0")
    assert not extra_buffers_ok() and not extra_buffers_forced()


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
