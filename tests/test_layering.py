"""Imports point one way: desktop -> core -> models. Walk the AST of every module."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FORBIDDEN = {
    "core": ("PySide6", "desktop", "shiboken6"),
    "models": ("PySide6", "desktop", "core", "shiboken6"),
}


def imported_modules(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module":
            if node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                found.append((node.lineno, node.args[0].value))
    return found


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
