"""Job functions the jobproc tests run in a child process (the child imports them by name)."""
from __future__ import annotations

import os
import time

from core.errors import ConfigError


class Stubborn(Exception):
    """An exception whose __init__ needs two arguments: it does not survive pickling as itself."""

    def __init__(self, a, b):
        super().__init__(f"{a}/{b}")


def echo(args, job):
    for n in range(args["events"]):
        job.progress(("step", n))
    return {"pid": os.getpid(), "args": args}


def ask_parent(args, job):
    return [job.call("double", x) for x in args]


def ask_missing(args, job):
    return job.call("no such service")


def parent_fails(args, job):
    try:
        job.call("boom")
    except ConfigError as exc:
        return f"caught {type(exc).__name__}: {exc}"
    return "not raised"


def raise_config(args, job):
    raise ConfigError("the setting is wrong")


def raise_stubborn(args, job):
    raise Stubborn(1, 2)


def die(args, job):
    print("about to die", flush=True)
    os._exit(7)


def loop_until_cancelled(args, job):
    job.progress("started")
    while True:
        job.check()                 # raises Cancelled once the parent cancels
        time.sleep(0.02)


def ignore_cancel(args, job):
    time.sleep(60)


def unpicklable_result(args, job):
    return lambda: None
