"""Child Python processes of tests: the repository's code and tests.support importable, by environment.

A test that starts `python -m tests.support.<script>` or a script of its own passes `python_env()`
instead of editing sys.path in the child, so the child imports exactly this checkout.
"""
from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]      # the folder holding core/ and tests/


def python_env(extra_paths: tuple[str, ...] = (), **overrides: str) -> dict[str, str]:
    """This process's environment with the repository first on PYTHONPATH (after `extra_paths`)."""
    env = dict(os.environ)
    env.update(overrides)
    parts = [*extra_paths, str(ROOT), env.get("PYTHONPATH", "")]
    env["PYTHONPATH"] = os.pathsep.join(p for p in parts if p)
    return env
