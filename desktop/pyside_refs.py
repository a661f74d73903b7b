"""A work-around for a reference-counting bug of PySide6 6.12 on Python 3.11: None is over-released.

Measured with PySide6 6.12.0 on CPython 3.11.7: every call of a Qt method that returns
nothing (`QSyntaxHighlighter.setFormat`, `QTreeWidgetItem.setData`, `QLabel.setText`, ...)
lowers `sys.getrefcount(None)` by one. A highlighted line makes a few such calls, a sidebar
row a few more, so after some tens of thousands (a few big daily logs opened, typing in
MEMORY.md for a while) None's count reaches zero and the interpreter aborts:
"Fatal Python error: none_dealloc: deallocating None". desktop/__init__.py applies the
work-around, so it is in place before any Qt call of the app. Python 3.12
made None immortal, so the bug is harmless there; on 3.11 we do what 3.12 does: give
None a reference count so large that no number of over-releases can bring it to zero.
The write happens with the GIL held (no other thread touches the count meanwhile).
pyproject.toml excludes 6.12.0 (6.11.3 counts None right, measured with the same calls), so a
normal set-up never meets the bug; this stays for environments that bring their own PySide6.
"""
from __future__ import annotations

import ctypes
import sys

_HEADROOM = 1 << 40          # a million million over-releases: years of highlighting
_done = False


def keep_none_alive() -> None:
    """Idempotent; a no-op where None is immortal already (Python 3.12+)."""
    global _done
    if _done or sys.version_info >= (3, 12):
        return
    count = ctypes.c_ssize_t.from_address(id(None))     # ob_refcnt is the first field of every object
    count.value += _HEADROOM
    _done = True
