"""Import what opening a workspace needs, on a worker thread, while the new window sits idle.

Why: the first open imported ~200 ms of modules on the main thread (the views' Qt enums,
watchdog, the workspace facade), and the jobs it starts imported the model client's
chain (jsonschema, gguf, yaml: ~300 ms more) on worker threads, whose GIL the window
waits behind: the GUI benchmark measured 180-270 ms stalls right after the open. Done
first, on a thread, while the window shows its first frame and has nothing else to do,
the same imports cost the window nothing; `reverie-desktop` opens the workspace when
they are done (`open_after_preload`).

A module that fails to import is left for the code that needs it to report (the model
engine missing is a state the app shows, not a start-up failure).
"""
from __future__ import annotations

import importlib
from typing import Callable

MODULES = (
    # opening a workspace (main thread)
    "core.workspace", "core.tokens", "core.store.history", "core.store.checkpoints", "core.store.handoffs",
    "desktop.controller", "desktop.watcher", "watchdog.observers", "desktop.scheduler", "core.store.recovery",
    # the first views shown
    "desktop.views.factory", "desktop.views.memory_editor", "desktop.views.daily_log_editor", "desktop.views.search_view",
    "desktop.views.dream_view", "desktop.views.session_reader", "desktop.views.chat_panel",
    "core.dream.pipeline.consolidator", "core.dream.review.apply", "core.dream.review.proposals", "core.dream.schedule.maintenance",
    # the jobs it starts (their threads would import these while the window is in use)
    "core.jobproc", "core.dream.pipeline.isolated", "core.dream.schedule.idle", "core.index.search", "core.index.vectors", "hnswlib",
    "core.index.embed_proc", "core.index.embedding",
    "core.llm", "core.llm.client", "core.llm.catalog", "models.gguf_meta", "models.fit", "gguf", "jsonschema",
)


def preload(modules: tuple[str, ...] = MODULES, check: Callable[[], None] | None = None) -> list[str]:
    """Import `modules`; returns the ones that failed. `check` (a task's ctx.check) may stop it."""
    failed = []
    for name in modules:
        if check is not None:
            check()
        try:
            importlib.import_module(name)
        except Exception:   # noqa: BLE001 - whoever needs the module reports why it is missing
            failed.append(name)
    return failed


def open_after_preload(runner, open_it: Callable[[], object]) -> None:
    """Run the preload on `runner` (a desktop.tasks.TaskRunner), then `open_it()` on the main thread."""
    runner.submit(lambda ctx: preload(check=ctx.check), name="preload",
                  on_finished=lambda _failed: open_it(), on_failed=lambda _exc: open_it())
