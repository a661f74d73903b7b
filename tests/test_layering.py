"""Imports point one way: desktop -> core -> models. Walk the AST of every module."""
from __future__ import annotations

from pathlib import Path

from tests.support.imports import imported_modules

ROOT = Path(__file__).resolve().parent.parent
FORBIDDEN = {
    "core": ("PySide6", "desktop", "shiboken6"),
    "models": ("PySide6", "desktop", "core", "shiboken6"),
}


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
