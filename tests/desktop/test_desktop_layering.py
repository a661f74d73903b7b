"""The desktop talks to core only (DESIGN.md §1): never to models/ directly, whose catalog core re-exports."""
from __future__ import annotations

from pathlib import Path

from test_layering import imported_modules

DESKTOP = Path(__file__).resolve().parents[2] / "desktop"


def test_the_desktop_never_imports_models_directly():
    offences = [f"{path.relative_to(DESKTOP.parent)}:{line} imports {module}"
                for path in sorted(DESKTOP.rglob("*.py"))
                for line, module in imported_modules(path) if module.split(".")[0] == "models"]
    assert not offences, "use core.llm.catalog instead:\n" + "\n".join(offences)
