"""The packaging pieces that can be checked without a build: the llama_cpp hook, the Qt trimming, the entry."""
from __future__ import annotations

import os
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGING = ROOT / "packaging"


def test_the_llama_cpp_hook_collects_every_native_library_where_ctypes_looks():
    import llama_cpp

    lib_dir = Path(llama_cpp.__file__).parent / "lib"
    hook = runpy.run_path(str(PACKAGING / "hooks" / "hook-llama_cpp.py"))
    collected = {Path(src).name: dest for src, dest in hook["binaries"]}
    on_disk = {p.name for p in lib_dir.iterdir() if p.is_file() and (".so" in p.name or p.suffix in (".dylib", ".dll"))}
    assert on_disk and set(collected) == on_disk
    assert set(collected.values()) == {"llama_cpp/lib"}
    base = "libllama.dylib" if sys.platform == "darwin" else "libllama.so"
    assert base in collected                   # the exact name llama_cpp's loader opens
    assert any(name.startswith("libggml-base") for name in collected)
    assert "llama_cpp.server" in hook["excludedimports"]
    assert not any("/lib/" in src.replace(os.sep, "/") for src, _ in hook["datas"] if ".so" in src)


def test_only_the_qt_modules_the_app_imports_are_kept(tmp_path):
    helpers = runpy.run_path(str(PACKAGING / "spec_helpers.py"))
    used_qt_modules, unused_qt_modules = helpers["used_qt_modules"], helpers["unused_qt_modules"]
    used = used_qt_modules(ROOT)
    assert {"QtCore", "QtGui", "QtWidgets"} <= used
    excluded = set(unused_qt_modules(ROOT))
    assert not {f"PySide6.{m}" for m in used} & excluded and "PySide6.QtSvg" not in excluded
    import PySide6

    for heavy in ("QtWebEngineCore", "QtWebEngineWidgets", "Qt3DCore", "QtQuick", "QtMultimedia", "QtPdf"):
        if (Path(PySide6.__file__).parent / f"{heavy}.abi3.so").exists() or any(
                p.name.startswith(heavy + ".") for p in Path(PySide6.__file__).parent.iterdir()):
            assert f"PySide6.{heavy}" in excluded, heavy
    # the walk sees every import form
    (tmp_path / "desktop").mkdir()
    (tmp_path / "packaging").mkdir()
    (tmp_path / "packaging" / "smoke_window.py").write_text("from PySide6 import QtNetwork\n", encoding="utf-8")
    (tmp_path / "desktop" / "a.py").write_text("from PySide6.QtCharts import QChart\nimport PySide6.QtSql\n",
                                               encoding="utf-8")
    assert used_qt_modules(tmp_path) >= {"QtCharts", "QtSql", "QtNetwork"}


def test_the_spec_is_valid_python():
    compile((PACKAGING / "reverie.spec").read_text(encoding="utf-8"), "reverie.spec", "exec")


def _entry(*args, cwd=None, timeout=300):
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, str(PACKAGING / "entry.py"), *args], capture_output=True, text=True,
                          cwd=cwd or ROOT, env=env, timeout=timeout)


def test_the_entry_dispatches_to_the_cli_and_to_modules(demo_workspace):
    helped = _entry("--help")
    assert helped.returncode == 0 and "usage: reverie" in helped.stdout and "mcp" in helped.stdout
    read = _entry("read", str(demo_workspace.root), "MEMORY.md", "--lines", "1-1")
    assert read.returncode == 0 and read.stdout.split() == ["1", "#", "MEMORY"]
    as_module = _entry("-m", "core", "read", str(demo_workspace.root), "MEMORY.md", "--lines", "1-1")
    assert as_module.returncode == 0 and as_module.stdout == read.stdout
    failed = _entry("read", str(demo_workspace.root), "../outside.md")
    assert failed.returncode == 2 and failed.stderr.startswith("reverie: error:")


@pytest.mark.gui
@pytest.mark.slow
def test_the_smoke_test_passes_unfrozen(tmp_path):
    done = _entry("--smoke-test", str(tmp_path / "smoke"), timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    steps = [line for line in done.stdout.splitlines() if line.startswith("smoke: ok ")]
    assert [s.split(" (")[0][len("smoke: ok "):] for s in steps] == [
        "demo workspace", "keyword search", "hybrid search", "tokenizer", "llama.cpp", "qt window"]
    assert "MainWindow" in done.stdout and "smoke: all ok" in done.stdout
