"""How scripts/setup.sh builds llama.cpp (and hnswlib): for the architecture, not the CPU it runs on.

A native build (llama.cpp's GGML_NATIVE=ON default, hnswlib's -march=native) on a recent Xeon carries
AVX-512 and AMX code; pip caches the wheel under a key that names neither the CPU nor CMAKE_ARGS, so
another x86_64 machine sharing that cache died with SIGILL on its first step.
"""
from __future__ import annotations

import os
import platform
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="setup.sh is a bash script")


def planned_builds(**env) -> dict[str, dict[str, str]]:
    """`setup.sh --print-builds`: {package: {setting: value}} without installing anything."""
    environ = {k: v for k, v in os.environ.items() if k != "CMAKE_ARGS"}
    out = subprocess.run(["bash", str(ROOT / "scripts" / "setup.sh"), "--print-builds"], cwd=ROOT,
                         env={**environ, **env}, capture_output=True, text=True, timeout=60, check=True).stdout
    plans = {}
    for line in out.splitlines():
        name, rest = line.split(" ", 1)
        settings, key = rest.rsplit(" key=", 1)
        field, value = settings.split("=", 1)
        plans[name] = {field: value, "key": key}
    return plans


def test_llama_cpp_is_built_for_the_architecture_and_keeps_metal_on_apple_silicon():
    plan = planned_builds()["llama-cpp-python"]
    assert "-DGGML_NATIVE=OFF" in plan["CMAKE_ARGS"].split()
    apple = platform.system() == "Darwin" and platform.machine() == "arm64"
    assert ("-DGGML_METAL=on" in plan["CMAKE_ARGS"].split()) == apple
    assert len(plan["key"]) == 16


def test_the_wheel_is_keyed_by_its_build_settings():
    default = planned_builds()["llama-cpp-python"]
    assert planned_builds()["llama-cpp-python"]["key"] == default["key"], "the same settings reuse the wheel"
    cuda = planned_builds(CMAKE_ARGS="-DGGML_CUDA=on -DGGML_NATIVE=OFF")["llama-cpp-python"]
    assert cuda["CMAKE_ARGS"] == "-DGGML_CUDA=on -DGGML_NATIVE=OFF", "the person's CMAKE_ARGS win"
    assert cuda["key"] != default["key"]


def test_hnswlib_is_not_built_for_this_cpu_alone():
    plan = planned_builds()["hnswlib"]
    assert "native" not in plan["CFLAGS"]


def test_the_installed_llama_cpp_carries_no_code_for_this_cpu_alone():
    marker = ROOT / ".venv" / ".reverie-build-llama-cpp-python"
    if not marker.exists() or marker.read_text().strip() != planned_builds()["llama-cpp-python"]["key"]:
        pytest.skip("this .venv's llama.cpp was not built by setup.sh with its default settings")
    import llama_cpp

    info = llama_cpp.llama_print_system_info().decode()
    if platform.machine() in ("x86_64", "AMD64"):
        assert "AVX2 = 1" in info
        assert "AVX512 = 1" not in info and "AMX_INT8 = 1" not in info, info
