"""The background-task helper: results on the main thread, progress, failures, cancel, shutdown, and quitting
(every runner and registered thread of a window cancelled and waited for when it closes)."""
from __future__ import annotations

import threading
import time

import pytest
from PySide6.QtCore import QObject, QThread

from core.cancel import Cancelled
from core.errors import CoreError
from desktop.tasks import TaskRunner, register_thread, stop_all


@pytest.fixture
def runner(qapp):
    made = TaskRunner()
    yield made
    assert made.shutdown(10)


def test_the_function_runs_off_the_main_thread_and_callbacks_on_it(qtbot, qapp, runner):
    seen = {}

    def job(ctx):
        seen["worker"] = threading.get_ident()
        ctx.progress(1)
        ctx.progress(2)
        return 42

    progress = []

    def on_progress(value):
        progress.append((value, QThread.currentThread() is qapp.thread()))

    def on_finished(value):
        seen["result"] = value
        seen["finished_on_main"] = QThread.currentThread() is qapp.thread()
    runner.submit(job, on_progress=on_progress, on_finished=on_finished)
    qtbot.waitUntil(lambda: "result" in seen)
    assert seen["worker"] != threading.get_ident()
    assert seen["result"] == 42 and seen["finished_on_main"]
    assert progress == [(1, True), (2, True)]
    assert not runner.pending()


def test_a_failure_is_delivered_with_the_exception(qtbot, runner):
    errors = []

    def job(ctx):
        raise CoreError("the disk is full")
    runner.submit(job, on_failed=errors.append)
    qtbot.waitUntil(lambda: bool(errors))
    assert isinstance(errors[0], CoreError) and "disk is full" in str(errors[0])


def test_cancel_stops_a_task_at_its_next_progress_call(qtbot, runner):
    started, errors, steps = threading.Event(), [], []

    def job(ctx):
        started.set()
        for step in range(10_000):
            steps.append(step)
            ctx.progress(step)
            time.sleep(0.001)
        return "ran to the end"
    handle = runner.submit(job, on_failed=errors.append, on_finished=errors.append)
    assert started.wait(5)
    handle.cancel("stop")
    qtbot.waitUntil(lambda: bool(errors))
    assert isinstance(errors[0], Cancelled)
    assert len(steps) < 10_000


def test_a_quick_task_is_not_stuck_behind_long_ones(qtbot, runner):
    release = threading.Event()
    for _ in range(3):
        runner.submit(lambda ctx: release.wait(10))
    got = []
    runner.submit(lambda ctx: "quick", on_finished=got.append)
    qtbot.waitUntil(lambda: bool(got), timeout=3000)
    release.set()
    assert got == ["quick"]


def test_shutdown_cancels_waits_and_drops_late_results(qtbot, qapp):
    runner = TaskRunner()
    started, delivered = threading.Event(), []

    def job(ctx):
        started.set()
        while True:
            ctx.progress()
            time.sleep(0.005)
    runner.submit(job, on_finished=delivered.append, on_failed=delivered.append)
    assert started.wait(5)
    assert runner.shutdown(5)
    qapp.processEvents()
    assert delivered == [] and not runner.active()
    with pytest.raises(RuntimeError):
        runner.submit(lambda ctx: None)


def test_closing_the_window_cancels_a_running_task_and_waits_for_it(qtbot, tmp_path):
    from PySide6.QtCore import QSettings

    from desktop.main_window import MainWindow

    win = MainWindow(QSettings())
    win.show()
    runner = TaskRunner(max_threads=1, parent=win)       # as the app's start-up runner is
    target = tmp_path / "steps.txt"
    started, returned, delivered = threading.Event(), threading.Event(), []

    def job(ctx):
        started.set()
        try:
            for step in range(100_000):
                with open(target, "a", encoding="utf-8") as handle:
                    handle.write(f"step {step} written whole\n")
                ctx.progress(step)                          # the cancellation point between two writes
        finally:
            returned.set()
    runner.submit(job, name="write steps", on_finished=delivered.append, on_failed=delivered.append)
    assert started.wait(10)
    assert win.close()
    assert returned.is_set()                                # the close waited for the function to return
    assert runner.closed and not runner.active()
    lines = target.read_text(encoding="utf-8").splitlines()
    assert 0 < len(lines) < 100_000 and all(line.endswith("written whole") for line in lines)
    qtbot.wait(50)
    assert delivered == []                                  # nothing calls back into the closed window
    win.deleteLater()


def test_stopping_gives_up_on_a_task_that_ignores_cancel_and_names_it(qtbot):
    owner = QObject()
    runner = TaskRunner(parent=owner)
    entered, release = threading.Event(), threading.Event()
    runner.submit(lambda ctx: (entered.set(), release.wait(30)), name="model load")
    assert entered.wait(10)
    try:
        assert stop_all(0.2, owner=owner) == ["task 'model load'"]
        assert runner.closed
    finally:
        release.set()
        assert runner.wait(10)


def test_stopping_one_window_leaves_other_runners_and_threads_alone(qtbot):
    mine, other = QObject(), QObject()
    my_runner, other_runner = TaskRunner(parent=mine), TaskRunner(parent=other)
    my_thread = register_thread(QThread(mine))
    other_thread = register_thread(QThread(other))
    my_thread.start()
    other_thread.start()
    try:
        assert stop_all(5, owner=mine) == []
        assert my_runner.closed and not my_thread.isRunning()
        assert not other_runner.closed and other_thread.isRunning()
        got = []
        other_runner.submit(lambda ctx: "still works", on_finished=got.append)
        qtbot.waitUntil(lambda: bool(got), timeout=5_000)
    finally:
        other_thread.quit()
        assert other_thread.wait(5000)
        assert other_runner.shutdown(5)


class Released:
    """Records the thread its last reference was dropped on."""

    def __init__(self, name: str, where: dict):
        self.name, self.where = name, where

    def __del__(self):
        self.where[self.name] = "main" if threading.current_thread() is threading.main_thread() else "pool"


def test_a_tasks_function_and_result_are_released_on_the_main_thread_once_it_settles(qtbot, runner):
    """Nothing a task brings (its closure, which may hold the controller; its result or exception)
    is kept for the runner's life or dropped on a pool thread, where Qt objects it reaches would be
    destroyed outside their thread. (PySide's pool kept every QRunnable handed to it, with its closure
    and its per-task QObject, for as long as the runner lived.)"""
    where, got = {}, []

    def submit_pair():
        def works(ctx, held=Released("closure", where)):
            return Released("result", where)

        def fails(ctx, held=Released("failing closure", where)):
            local = Released("failing task's local", where)   # noqa: F841 - kept alive by the traceback
            raise CoreError("no")
        runner.submit(works, on_finished=lambda result: got.append(result.name))
        runner.submit(fails, on_failed=lambda exc: got.append(str(exc)))
    submit_pair()
    qtbot.waitUntil(lambda: len(got) == 2)
    assert runner.wait(5)
    qtbot.waitUntil(lambda: not runner.pending())
    assert where == {"closure": "main", "result": "main", "failing closure": "main",
                     "failing task's local": "main"}


def test_shutdown_during_a_task_releases_it_on_the_main_thread_when_it_returns(qtbot, qapp):
    runner = TaskRunner()
    where, delivered = {}, []
    entered, release = threading.Event(), threading.Event()

    def job(ctx, held=Released("closure", where)):
        entered.set()
        release.wait(30)                       # ignores cancel, as a model load does
        return Released("result", where)
    runner.submit(job, on_finished=delivered.append, on_failed=delivered.append)
    del job
    assert entered.wait(10)
    assert not runner.shutdown(0.1) and runner.closed
    assert [h.name for h in runner.active()] == ["task"]
    release.set()
    assert runner.wait(10)
    qtbot.waitUntil(lambda: len(where) == 2)
    assert where == {"closure": "main", "result": "main"} and delivered == [] and not runner.pending()
