"""PySide6 6.12 on Python 3.11 over-releases None in QSyntaxHighlighter calls; the app must not abort for it."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CHILD = textwrap.dedent("""
    import sys
    from PySide6.QtWidgets import QApplication, QPlainTextEdit
    app = QApplication([])
    {setup}
    from desktop.views.highlighters import DailyLogHighlighter
    editor = QPlainTextEdit()
    highlighter = DailyLogHighlighter(editor.document())
    text = "\\n".join(f"- [10:{{i % 60:02d}}] `code` and **bold** line {{i}}" for i in range(3000))
    start = sys.getrefcount(None)
    rounds = 0
    # Highlight far more lines than None had references when we started: enough to reach zero if it leaks.
    while rounds * 3000 * 4 < 3 * min(start, 10**6):
        editor.setPlainText(text + str(rounds))
        rounds += 1
    print("highlighted", rounds * 3000, "lines; None's count fell by", start - sys.getrefcount(None))
""")


def _run(setup: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-c", CHILD.format(setup=setup)], capture_output=True, text=True,
                          env=env, timeout=300, cwd=ROOT)


def test_highlighting_many_lines_never_aborts_the_interpreter():
    done = _run("")
    assert done.returncode == 0, done.stderr[-800:]
    assert "highlighted" in done.stdout


def test_the_work_around_is_what_keeps_it_alive():
    """Proves the test above can fail: without the work-around the same child aborts (on Python 3.11)."""
    if sys.version_info >= (3, 12):
        return                        # None is immortal there; nothing to prove
    import PySide6

    done = _run("import desktop.pyside_refs as fix; fix._done = True")     # pretend it ran; it never does
    if PySide6.__version__.startswith("6.12"):
        assert done.returncode != 0 and "none_dealloc" in done.stderr, (done.returncode, done.stdout)
