"""Qt test set-up for the desktop app: offscreen, isolated QSettings, and no thread left behind.

Every test here fails if it leaves a thread running: a task still executing on a
runner, a QThread the app started (the scheduler), or a Python thread (the
watcher's observer) that appeared during the test and is still alive at its end.
"""
from __future__ import annotations

import os
import threading
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

pytestmark = pytest.mark.gui


# Process-wide singletons of libraries, started once on first use and never stopped by design
# (tqdm's monitor, used by sentence-transformers): not threads the app started or could stop.
LIBRARY_SINGLETONS = {"tqdm_monitor"}


def _new_live_threads(before: set[int]) -> list[threading.Thread]:
    return [t for t in threading.enumerate()
            if t.ident not in before and t.is_alive() and not isinstance(t, threading._DummyThread)
            and t.name not in LIBRARY_SINGLETONS]


@pytest.fixture(autouse=True)
def no_threads_left(qapp):
    """Runs first and finishes last: after every other fixture has torn down, nothing may still run."""
    from desktop.tasks import busy_runners, running_threads

    before = {t.ident for t in threading.enumerate()}
    yield
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline:
        qapp.processEvents()
        if not busy_runners() and not running_threads() and not _new_live_threads(before):
            break
        time.sleep(0.02)
    problems = [f"task {h.name!r} still running" for r in busy_runners() for h in r.active()]
    problems += [f"QThread {t.objectName() or t!r} still running" for t in running_threads()]
    problems += [f"Python thread {t.name!r} still alive" for t in _new_live_threads(before)]
    assert not problems, "the test left threads running: " + "; ".join(problems)


@pytest.fixture(autouse=True)
def isolated_qsettings(tmp_path, qapp):
    from PySide6.QtCore import QCoreApplication, QSettings

    QCoreApplication.setOrganizationName("ReverieTests")
    QCoreApplication.setApplicationName("reverie-tests")
    for fmt in (QSettings.Format.NativeFormat, QSettings.Format.IniFormat):
        QSettings.setPath(fmt, QSettings.Scope.UserScope, str(tmp_path / "qsettings"))
    yield


@pytest.fixture(autouse=True)
def no_modal_dialogs(monkeypatch):
    """A modal dialog would block a test forever: fail instead, unless the test answers it itself."""
    from PySide6.QtWidgets import QMessageBox

    def unexpected(*args, **kwargs):
        raise AssertionError(f"unexpected modal dialog: {args[1:3]!r}")
    for name in ("exec", "question", "warning", "information", "critical"):
        monkeypatch.setattr(QMessageBox, name, unexpected)


@pytest.fixture
def make_controller(qapp):
    """Controllers for a workspace; each is shut down (and must stop cleanly) at the end of the test."""
    from desktop.controller import WorkspaceController

    made = []

    def make(ws, **options):
        options.setdefault("watch", False)
        options.setdefault("schedule", False)
        controller = WorkspaceController(ws, **options)
        made.append(controller)
        return controller

    yield make
    for controller in made:
        assert controller.shutdown(timeout_s=20), "a background job did not stop within 20 s"


@pytest.fixture
def window(qtbot):
    """Main windows (quiet: no scheduler, watcher or index unless options say so), closed at the end."""
    from PySide6.QtCore import QSettings

    from desktop.main_window import MainWindow
    from tests.support.qt_views import QUIET, discard_edits

    made = []

    def make(options=QUIET):
        win = MainWindow(qsettings=QSettings(), controller_options=dict(options))
        made.append(win)
        return win
    yield make
    for win in made:
        discard_edits(win.views.values())
        win.close()
        win.deleteLater()
