"""Imports point one way (docs/architecture.md): the import-linter contracts of pyproject.toml,
and the plain rule that core and models never import Qt or the desktop."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.support.imports import imported_modules

ROOT = Path(__file__).resolve().parent.parent
FORBIDDEN = {
    "core": ("PySide6", "desktop", "shiboken6"),
    "models": ("PySide6", "desktop", "core", "shiboken6"),
}


def lint_imports(config: Path, cwd: Path) -> subprocess.CompletedProcess:
    """import-linter's own command line on a config, in a fresh process (it imports nothing of ours)."""
    command = [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command as c; "
               "sys.exit(c())", str(config), "--no-cache"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(cwd), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(command, capture_output=True, text=True, cwd=cwd, env=env, timeout=300)


def test_the_import_contracts_hold():
    """Layers (models <- store <- index/llm <- workspace <- dream <- harness <- front ends), the desktop's
    facade, and one writer of workspace files."""
    run = lint_imports(ROOT / "pyproject.toml", ROOT)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "4 kept, 0 broken" in run.stdout


def test_a_broken_contract_is_reported(tmp_path):
    """The same contract machinery on a tiny tree where a lower layer imports a higher one."""
    for package, body in {"low": "import high\n", "high": ""}.items():
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text(body)
    (tmp_path / "contracts.toml").write_text(
        '[tool.importlinter]\nroot_packages = ["low", "high"]\n\n[[tool.importlinter.contracts]]\n'
        'name = "high over low"\ntype = "layers"\nlayers = ["high", "low"]\n')
    run = lint_imports(tmp_path / "contracts.toml", tmp_path)
    assert run.returncode == 1 and "low is not allowed to import high" in run.stdout


def test_core_and_models_never_import_qt_or_desktop():
    offences = []
    for package, banned in FORBIDDEN.items():
        files = sorted((ROOT / package).rglob("*.py"))
        assert files, f"no modules found in {package}/"
        for path in files:
            for line, module in imported_modules(path):
                if module.split(".")[0] in banned:
                    offences.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
    assert not offences, "layering broken:\n" + "\n".join(offences)


def test_the_checker_sees_a_violation(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from PySide6.QtCore import QTimer\n    import desktop.app\n")
    modules = [m for _, m in imported_modules(bad)]
    assert "PySide6.QtCore" in modules and "desktop.app" in modules
