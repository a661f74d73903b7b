"""The start-up preload imports what opening a workspace and its first views need (desktop/preload.py)."""
from __future__ import annotations

import json
import subprocess
import sys

from core.demo import write_demo
from tests.support.processes import python_env

# Imports that hold the GIL for long (Qt enums of a view module, watchdog, jsonschema, the model
# client's chain): after the preload none of them may happen while the window is in use.
WATCHED = ("core.", "desktop.", "models.", "watchdog", "jsonschema", "gguf", "hnswlib")


def test_every_preloaded_module_imports():
    from desktop.preload import MODULES, preload

    assert preload() == []
    assert len(set(MODULES)) == len(MODULES)


def test_opening_a_workspace_after_the_preload_imports_nothing_heavy(tmp_path):
    write_demo(tmp_path / "demo")
    env = python_env(QT_QPA_PLATFORM="offscreen")
    run = subprocess.run([sys.executable, "-m", "tests.support.preload_probe", str(tmp_path / "demo"),
                          str(tmp_path / "qsettings.ini")], capture_output=True, text=True, env=env, timeout=180)
    assert run.returncode == 0, run.stderr[-2000:]
    report = json.loads(run.stdout.strip().splitlines()[-1])
    assert report["failed"] == []
    late = [name for name in report["new"] if name.startswith(WATCHED)]
    assert late == [], f"imported after the preload (add them to desktop/preload.py MODULES): {late}"
