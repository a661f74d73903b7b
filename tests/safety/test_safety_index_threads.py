"""Closing the search index while another thread is inside a write on it: the write completes, nothing crashes.

Python's sqlite3 may crash the process (a segfault) when one thread closes a connection while
another thread is running a statement on it. The index used to close every thread's connection
from the closing thread, so an app window closed during a reindex (its quit waits about a second
for jobs, then closes the workspace) could take the process down, or cut the reindex's transaction
in half. Now each connection is closed by its own thread, after its work. Each scenario runs in a
child process, because what it guards against is the process dying; the write is held open
deterministically by an SQL function that waits until the close has returned (or, where the close
itself waits for the statement, as it did before, for two seconds).
"""
from __future__ import annotations

import subprocess
import sys
import textwrap

from tests.support.processes import python_env

# In the child: `write_two_rows(conn)` is one transaction of two statements on the index's own table;
# the first waits inside SQLite (the SQL function `hold`) until `release` is set.
HELD_WRITE = """
import sys
import threading
from pathlib import Path

inside, release = threading.Event(), threading.Event()

def hold():
    inside.set()
    fallback = threading.Timer(2.0, release.set)   # in case the close waits for the statement itself
    fallback.daemon = True
    fallback.start()
    release.wait(30)
    return "first"

def write_two_rows(db):
    with db.write() as conn:
        conn.create_function("hold", 0, hold)
        conn.execute("INSERT INTO meta(key, value) SELECT 'held 1', hold()")
        conn.execute("INSERT INTO meta(key, value) VALUES('held 2', 'second')")
    return "committed"

def rows_written(path):
    from core.index.db import Database
    again = Database(path)
    try:
        return sorted(again.get_meta(key) for key in ("held 1", "held 2"))
    finally:
        again.close()
"""

DATABASE_CLOSED_UNDER_A_WRITE = HELD_WRITE + """
from core.errors import IndexError_
from core.index.db import Database

path = Path(sys.argv[1]) / "index.db"
db = Database(path)
seen = []

def worker():
    try:
        seen.append(write_two_rows(db))
        db.conn()
    except IndexError_ as exc:
        seen.append("then refused: " + str(exc).split(" is ")[-1])
    except Exception as exc:
        seen.append(f"failed: {type(exc).__name__}: {exc}")

thread = threading.Thread(target=worker)
thread.start()
assert inside.wait(30)
db.close()                      # while the worker's write runs
release.set()
thread.join(30)
print(" | ".join(seen), "| rows:", rows_written(path))
"""

WINDOW_CLOSED_DURING_A_REINDEX = HELD_WRITE + """
from PySide6.QtWidgets import QApplication
from core.workspace import Workspace
from desktop.controller import WorkspaceController

app = QApplication([])
ws = Workspace.create(Path(sys.argv[1]) / "ws")
ws.keyword_only_index()
ws.sync_index()
path = ws.index.db.path
controller = WorkspaceController(ws, watch=False, schedule=False, index=False)
delivered, outcome = [], []

def reindex(ctx):               # a reindex write that outlasts the close's wait for jobs
    try:
        outcome.append(write_two_rows(ws.index.db))
    except Exception as exc:
        outcome.append(f"failed: {type(exc).__name__}: {exc}")

controller.submit(reindex, name="reindex", on_finished=delivered.append, on_failed=delivered.append)
assert inside.wait(30)
stopped = controller.shutdown(timeout_s=0.1)    # the window closing: the job is still inside SQLite
release.set()
drained = controller.runner.wait(30)
for _ in range(20):
    app.processEvents()
print("stopped in time:", stopped, "| drained:", drained, "| job:", outcome[0],
      "| delivered after close:", delivered, "| rows:", rows_written(path))
"""


MAIN_WINDOW_CLOSED_DURING_A_REINDEX = HELD_WRITE + """
from PySide6.QtCore import QCoreApplication, QSettings
from PySide6.QtWidgets import QApplication
from core.workspace import Workspace
from desktop.main_window import MainWindow

app = QApplication([])
QCoreApplication.setOrganizationName("ReverieTests")
QCoreApplication.setApplicationName("reverie-tests-child")
for fmt in (QSettings.Format.NativeFormat, QSettings.Format.IniFormat):
    QSettings.setPath(fmt, QSettings.Scope.UserScope, sys.argv[1] + "/qsettings")
Workspace.create(Path(sys.argv[1]) / "ws").close()
win = MainWindow(qsettings=QSettings(), controller_options={"schedule": False, "watch": False, "index": False})
win.show()
assert win.open_workspace(Path(sys.argv[1]) / "ws")
ws = win.controller.ws
ws.keyword_only_index()
ws.sync_index()
path = ws.index.db.path
outcome = []

def reindex(ctx):
    try:
        outcome.append(write_two_rows(ws.index.db))
    except Exception as exc:
        outcome.append(f"failed: {type(exc).__name__}: {exc}")

win.controller.submit(reindex, name="reindex")
assert inside.wait(30)
win.close()                     # quitting waits about a second for jobs, then closes the workspace
release.set()
for _ in range(50):             # the controller's deleteLater: its pool waits for the job
    app.processEvents()
print("closed:", win.controller is None, "| job:", outcome[0], "| rows:", rows_written(path))
"""

def run_child(script: str, tmp_path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script), str(tmp_path)], capture_output=True,
                          text=True, timeout=120, env=python_env(QT_QPA_PLATFORM="offscreen"))


def test_closing_the_index_during_another_threads_write_lets_that_write_finish(tmp_path):
    done = run_child(DATABASE_CLOSED_UNDER_A_WRITE, tmp_path)
    assert done.returncode == 0, f"the process died (rc {done.returncode}): {done.stderr[-2000:]}"
    # The whole transaction committed on the thread's own connection, then its next use was refused.
    assert done.stdout.strip() == "committed | then refused: closed | rows: ['first', 'second']"


def test_a_window_closed_during_a_reindex_lets_the_reindex_finish_and_calls_nothing_back(tmp_path):
    done = run_child(WINDOW_CLOSED_DURING_A_REINDEX, tmp_path)
    assert done.returncode == 0, f"the process died (rc {done.returncode}): {done.stderr[-2000:]}"
    # The close gave up waiting for the job; the job's write still committed whole, the pool drained,
    # and nothing was called back into the closed controller.
    assert done.stdout.strip() == ("stopped in time: False | drained: True | job: committed "
                                   "| delivered after close: [] | rows: ['first', 'second']")


def test_the_main_window_closed_during_a_reindex_quits_cleanly(tmp_path):
    done = run_child(MAIN_WINDOW_CLOSED_DURING_A_REINDEX, tmp_path)
    assert done.returncode == 0, f"the process died (rc {done.returncode}): {done.stderr[-2000:]}"
    assert done.stdout.strip() == "closed: True | job: committed | rows: ['first', 'second']"


def test_pool_tasks_do_not_pile_up_connections(qapp, tmp_path):
    """A Qt pool thread's Python thread state ends with each task, and with it the task's thread-local
    connection: the next connection opened closes those (before, each of them stayed open until the
    index closed, a file handle per search or status refresh of the app)."""
    from PySide6.QtCore import QThreadPool

    from core.index.db import Database

    db = Database(tmp_path / "index.db")
    pool = QThreadPool()
    pool.setMaxThreadCount(2)
    try:
        for _ in range(20):
            pool.start(lambda: db.conn().execute("SELECT count(*) FROM meta").fetchone())
        assert pool.waitForDone(30_000)
        assert db.open_connections() <= 3           # this thread's and at most one per pool thread
    finally:
        db.close()
    assert db.open_connections() == 0
