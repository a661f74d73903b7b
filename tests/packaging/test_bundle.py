"""Build the real bundle for this platform and smoke-test it from the outside (slow: minutes)."""
from __future__ import annotations

import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_build_and_smoke_test_the_bundle(tmp_path):
    system = platform.system()
    if system == "Linux":
        script, binary = "build_linux.sh", tmp_path / "dist" / "reverie" / "reverie"
    elif system == "Darwin" and platform.machine() == "arm64":
        script, binary = "build_macos.sh", tmp_path / "dist" / "Reverie.app" / "Contents" / "MacOS" / "Reverie"
    else:
        pytest.skip(f"no bundle recipe for {system} {platform.machine()}")
    # dist/ goes to tmp; PyInstaller's work folder stays in build/ so a rebuild reuses its analysis
    env = {**os.environ, "PYTHON": sys.executable, "DIST": str(tmp_path / "dist"),
           "WORK": str(ROOT / "build" / "pyinstaller-test")}
    done = subprocess.run(["bash", str(ROOT / "packaging" / script)], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=3300)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-6000:]
    assert binary.is_file()
    assert "bundle smoke: all ok" in done.stdout
    for step in ("in-bundle --smoke-test", "cli demo", "cli import claude-code", "mcp lists its 9 tools",
                 "mcp memory_search finds 'tea' in MEMORY.md", "mcp memory_get refuses a path outside the workspace"):
        assert f"bundle smoke: ok {step}" in done.stdout, step
