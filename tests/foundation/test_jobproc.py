"""core/jobproc.py: a job in a real child process, with progress, calls back, errors and cancellation."""
from __future__ import annotations

import os
import threading
import time

import pytest

from core.cancel import CancelToken, Cancelled
from core.errors import ConfigError, CoreError
from core.jobproc import JobError, run_in_child


def test_result_and_progress_come_back_from_another_process():
    events = []
    result = run_in_child("tests.support.jobproc_targets:echo", {"events": 3, "x": [1, 2]}, progress=events.append)
    assert result["args"] == {"events": 3, "x": [1, 2]}
    assert result["pid"] != os.getpid()
    assert events == [("step", 0), ("step", 1), ("step", 2)]


def test_the_job_calls_services_of_the_parent():
    seen_threads = set()

    def double(x):
        seen_threads.add(threading.get_ident())
        return 2 * x
    assert run_in_child("tests.support.jobproc_targets:ask_parent", [1, 5, 7], services={"double": double}) == [2, 10, 14]
    assert seen_threads == {threading.get_ident()}     # answered on the thread that waits


def test_a_service_error_reaches_the_job_as_its_own_type():
    def boom():
        raise ConfigError("no such model")
    text = run_in_child("tests.support.jobproc_targets:parent_fails", None, services={"boom": boom})
    assert text == "caught ConfigError: no such model"


def test_an_unknown_service_fails_the_job_with_a_clear_error():
    with pytest.raises(CoreError, match="no such service"):
        run_in_child("tests.support.jobproc_targets:ask_missing", None)


def test_the_jobs_exception_is_raised_here_with_its_type():
    with pytest.raises(ConfigError, match="the setting is wrong"):
        run_in_child("tests.support.jobproc_targets:raise_config", None)


def test_an_exception_that_does_not_pickle_is_described():
    with pytest.raises(CoreError, match=r"Stubborn: 1/2"):
        run_in_child("tests.support.jobproc_targets:raise_stubborn", None)


def test_a_result_that_does_not_pickle_is_a_clear_error():
    with pytest.raises(JobError, match="cannot be sent back"):
        run_in_child("tests.support.jobproc_targets:unpicklable_result", None)


def test_a_child_that_dies_is_a_job_error_with_its_exit_status_and_last_words():
    with pytest.raises(JobError, match=r"exit status 7.*about to die"):
        run_in_child("tests.support.jobproc_targets:die", None, label="crashy")


def test_a_bad_target_name_is_a_clear_error():
    with pytest.raises(JobError, match="module:function"):
        run_in_child("jobproc_targets", None)
    with pytest.raises(ModuleNotFoundError):
        run_in_child("no_such_module_anywhere:f", None)


def test_cancel_stops_the_job_at_its_next_check():
    token = CancelToken()
    started = time.monotonic()

    def progress(value):
        if value == "started":
            threading.Timer(0.2, token.cancel, args=("the person said stop",)).start()
    with pytest.raises(Cancelled, match="the person said stop"):
        run_in_child("tests.support.jobproc_targets:loop_until_cancelled", None, progress=progress, cancel=token)
    assert time.monotonic() - started < 20


def test_a_cancelled_progress_callback_cancels_the_job():
    def progress(value):
        raise Cancelled("quitting")
    with pytest.raises(Cancelled, match="quitting"):
        run_in_child("tests.support.jobproc_targets:loop_until_cancelled", None, progress=progress)


def test_a_job_that_ignores_cancel_is_ended_after_the_grace():
    token = CancelToken()
    token.cancel("stop now")
    started = time.monotonic()
    with pytest.raises(Cancelled, match="did not stop"):
        run_in_child("tests.support.jobproc_targets:ignore_cancel", None, cancel=token, cancel_grace_s=1.0)
    assert time.monotonic() - started < 15
