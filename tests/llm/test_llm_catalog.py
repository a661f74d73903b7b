"""The model catalog, GGUF headers, bad model files and the memory estimate."""
from __future__ import annotations

import shutil

import pytest

import models
from tests.support.gguf import GEMMA, SMOL, gguf_bytes, huge_gguf
from models.fit import GIB, estimate, fit_for_entry, fit_for_file
from models.gguf_meta import read_gguf_info

MAC_MODELS = {"qwen3-4b-instruct-2507-q4_k_m", "qwen3-30b-a3b-instruct-2507-q4_k_m",
              "gemma3-4b-it-q4_k_m", "gemma3-12b-it-q4_k_m"}


def test_catalog_lists_the_bundled_and_the_mac_models():
    entries = {e.id: e for e in models.load_catalog()}
    assert {SMOL, GEMMA} | MAC_MODELS <= set(entries)
    for entry in entries.values():
        assert entry.repo and entry.file.endswith(".gguf") and entry.context_length > 0 and entry.size_bytes > 0
        assert entry.chat_format in ("gguf", "chatml", "gemma") and entry.kv_bytes_per_token > 0
    assert entries[GEMMA].chat_format == "gemma", "the Gemma file has no template of its own"
    assert entries[SMOL].sha256 and entries[GEMMA].sha256
    assert all(entries[i].file.endswith("Q4_K_M.gguf") for i in MAC_MODELS)


def test_bundled_models_resolve_and_match_the_catalog(smol_path):
    smol = models.get_entry(SMOL)
    assert smol_path.name == smol.file and smol_path.stat().st_size == smol.size_bytes
    info = read_gguf_info(smol_path)
    assert (info.architecture, info.context_length, info.block_count, info.kv_heads) == ("llama", 8192, 30, 3)
    assert "<|im_start|>" in info.chat_template
    assert models.bundled_model_path() == smol_path
    gemma = read_gguf_info(models.resolve_model_path(GEMMA))
    assert gemma.architecture == "gemma3" and gemma.chat_template == "" and gemma.head_dims == (256, 256)
    assert gemma.kv_bytes_per_token() == models.get_entry(GEMMA).kv_bytes_per_token


def test_gemma_is_assembled_once_into_the_models_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("REVERIE_MODELS_DIR", str(tmp_path / "models"))
    entry = models.get_entry(GEMMA)
    assert models.is_present(entry) and models.entry_path(entry, create=False) is None
    path = models.resolve_model_path(GEMMA)
    assert path == tmp_path / "models" / entry.file and path.stat().st_size == entry.size_bytes
    mtime = path.stat().st_mtime_ns
    assert models.resolve_model_path(GEMMA).stat().st_mtime_ns == mtime, "assembled once"
    assert not list(path.parent.glob("*.assembling"))


def test_a_path_is_a_model_too_and_bad_names_are_clear(tmp_path, smol_path):
    copy = tmp_path / "mine.gguf"
    shutil.copy(smol_path, copy)
    assert models.resolve_model_path(str(copy)) == copy
    with pytest.raises(models.UnknownModelError, match="not a catalog id"):
        models.resolve_model_path("no-such-model")
    with pytest.raises(models.ModelFileError, match="not found"):
        models.resolve_model_path(str(tmp_path / "absent.gguf"))
    with pytest.raises(models.ModelFileError, match="folder"):
        models.resolve_model_path(str(tmp_path))
    with pytest.raises(models.ModelFileError, match="download"):
        models.resolve_model_path("qwen3-4b-instruct-2507-q4_k_m")   # not downloaded on this machine


def test_broken_files_are_named_in_the_error(tmp_path, smol_path):
    truncated = tmp_path / "truncated.gguf"
    truncated.write_bytes(smol_path.read_bytes()[: 20 << 20])
    with pytest.raises(models.ModelFileError, match="truncated") as caught:
        read_gguf_info(truncated)
    assert str(truncated) in str(caught.value)
    header_cut = tmp_path / "header-cut.gguf"
    header_cut.write_bytes(smol_path.read_bytes()[:5000])
    with pytest.raises(models.ModelFileError, match="truncated or corrupt"):
        read_gguf_info(header_cut)
    text = tmp_path / "notes.gguf"
    text.write_text("these are not weights\n" * 10)
    with pytest.raises(models.ModelFileError, match="not a GGUF"):
        read_gguf_info(text)
    empty = tmp_path / "empty.gguf"
    empty.write_bytes(b"")
    with pytest.raises(models.ModelFileError, match="too short"):
        read_gguf_info(empty)
    corrupt = tmp_path / "corrupt.gguf"
    corrupt.write_bytes(b"GGUF" + bytes([3, 0, 0, 0]) + b"\xff" * 64)
    with pytest.raises(models.ModelFileError, match="corrupt"):
        read_gguf_info(corrupt)
    future = tmp_path / "v7.gguf"
    future.write_bytes(b"GGUF" + bytes([7, 0, 0, 0]) + bytes(40))
    with pytest.raises(models.ModelFileError, match="version 7"):
        read_gguf_info(future)


def test_a_header_we_wrote_reads_back(tmp_path):
    path = tmp_path / "tiny.gguf"
    data = gguf_bytes({"general.architecture": "llama", "llama.context_length": 2048, "llama.block_count": 2,
                       "llama.attention.head_count": 4, "llama.embedding_length": 256}, [("w", [256, 4], 1)])
    path.write_bytes(data + bytes(32 - len(data) % 32) + bytes(256 * 4 * 2))
    info = read_gguf_info(path)
    assert info.context_length == 2048 and info.head_dims == (64, 64) and info.kv_heads == 4
    assert info.kv_bytes_per_token() == 2 * 4 * (64 + 64) * 2
    assert info.data_end == path.stat().st_size


def test_fit_counts_weights_and_kv_cache(tmp_path, smol_path):
    fit = fit_for_file(smol_path, 8192, usable_bytes=8 * GIB)
    assert fit.fits and fit.kv_bytes == 8192 * read_gguf_info(smol_path).kv_bytes_per_token()
    assert not fit_for_file(smol_path, 8192, usable_bytes=200 << 20).fits
    big = fit_for_entry(models.get_entry("qwen3-30b-a3b-instruct-2507-q4_k_m"), 32768, usable_bytes=16 * GIB)
    assert not big.fits and "needs" in big.describe()
    assert fit_for_entry(models.get_entry("gemma3-4b-it-q4_k_m"), 8192, usable_bytes=16 * GIB).fits
    assert estimate(1 << 30, 1000, 1000, usable_bytes=2 << 30).need_bytes > (1 << 30) + 1_000_000
    huge = huge_gguf(tmp_path / "huge.gguf", 8 * GIB)
    assert not fit_for_file(huge, 4096, usable_bytes=4 * GIB).fits


def test_a_header_is_read_once_per_file_version_and_a_cut_vocabulary_is_caught(tmp_path, smol_path):
    copy = tmp_path / "smol.gguf"
    shutil.copyfile(smol_path, copy)
    first = read_gguf_info(copy)
    assert read_gguf_info(copy) is first                       # the same file: the cached header
    assert first.metadata["tokenizer.ggml.tokens"] > 40_000    # the vocabulary was stepped over, not kept
    data = copy.read_bytes()
    # Cut inside the vocabulary (its strings start early in the header): the walk notices.
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(data[:100_000])
    with pytest.raises(models.ModelFileError, match="truncated"):
        read_gguf_info(cut)
    # The same path rewritten (a new download): read again, and found broken.
    copy.write_bytes(data[:100_000])
    with pytest.raises(models.ModelFileError, match="truncated"):
        read_gguf_info(copy)
