"""Closing the search index while another thread is inside a statement on it never crashes the process.

Python's sqlite3 dereferences a NULL handle (a segfault) when one thread closes a connection while
another thread's statement on it is still running. The index used to close every thread's
connection from the closing thread, so an app window closed during a reindex (its quit waits about
a second for jobs) could take the process down. Each scenario runs in a child process, because what
it guards against is the process dying; a statement is held open deterministically by an SQL
function that waits until the close has been called.
"""
from __future__ import annotations

import subprocess
import sys
import textwrap

from tests.support.processes import python_env

# In the child: `hold()` is an SQL function that says it is inside the statement and then waits for
# `release`, which a timer sets shortly after the main thread started closing.
HOLD = """
import threading
inside, release = threading.Event(), threading.Event()

def hold():
    inside.set()
    release.wait(30)
    return 1

def release_soon():
    threading.Timer(0.5, release.set).start()
"""

DATABASE_CLOSED_UNDER_A_STATEMENT = HOLD + """
import sys
from pathlib import Path
from core.errors import IndexError_
from core.index.db import Database

db = Database(Path(sys.argv[1]) / "index.db")
seen = []

def worker():
    conn = db.conn()
    conn.create_function("hold", 0, hold)
    seen.append(conn.execute("SELECT hold()").fetchone()[0])
    try:
        db.conn()
    except IndexError_ as exc:
        seen.append("refused: " + str(exc).split(" is ")[-1])

thread = threading.Thread(target=worker)
thread.start()
assert inside.wait(30)
release_soon()
db.close()                      # while the worker's statement runs
thread.join(30)
print("statement:", seen[0], "| next use:", seen[1], "| left open:", db.open_connections())
"""

WINDOW_CLOSED_DURING_A_REINDEX = HOLD + """
import sys
from PySide6.QtWidgets import QApplication
from core.workspace import Workspace
from desktop.controller import WorkspaceController

app = QApplication([])
ws = Workspace.create(sys.argv[1] + "/ws")
ws.keyword_only_index()
ws.sync_index()
controller = WorkspaceController(ws, watch=False, schedule=False, index=False)
delivered = []

def reindex(ctx):               # a reindex statement that outlasts the close's wait for jobs
    conn = ws.index.db.conn()
    conn.create_function("hold", 0, hold)
    return conn.execute("SELECT hold()").fetchone()[0]

controller.submit(reindex, name="reindex", on_finished=delivered.append, on_failed=delivered.append)
assert inside.wait(30)
release_soon()
stopped = controller.shutdown(timeout_s=0.1)    # the window closing: the job is still inside SQLite
drained = controller.runner.wait(30)
for _ in range(20):
    app.processEvents()
print("stopped in time:", stopped, "| drained:", drained, "| delivered after close:", delivered)
"""


def run_child(script: str, tmp_path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script), str(tmp_path)], capture_output=True,
                          text=True, timeout=120, env=python_env(QT_QPA_PLATFORM="offscreen"))


def test_closing_the_index_while_a_thread_runs_a_statement_leaves_that_connection_to_its_thread(tmp_path):
    done = run_child(DATABASE_CLOSED_UNDER_A_STATEMENT, tmp_path)
    assert done.returncode == 0, f"the process died (rc {done.returncode}): {done.stderr[-2000:]}"
    # The statement ran to its end, the thread's next use was refused, and its connection was
    # closed by the thread itself when it ended.
    assert done.stdout.strip() == "statement: 1 | next use: refused: closed | left open: 0"


def test_a_window_closed_during_a_reindex_does_not_crash_the_app(tmp_path):
    done = run_child(WINDOW_CLOSED_DURING_A_REINDEX, tmp_path)
    assert done.returncode == 0, f"the process died (rc {done.returncode}): {done.stderr[-2000:]}"
    # The close gave up waiting, the job still finished, the pool drained, and nothing was called back.
    assert done.stdout.strip() == "stopped in time: False | drained: True | delivered after close: []"
