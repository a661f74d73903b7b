"""The composition root: `reverie-desktop [WORKSPACE] [--model ID]`.

Builds the QApplication (theme following the system), the main window, and opens
the workspace named on the command line, or else the last one used. The window
is shown first and the workspace opened right after, so the first window appears
before any disk or index work.
"""
from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="reverie-desktop",
                                     description="Reverie: browse, edit, search and dream an agent's memory")
    parser.add_argument("workspace", nargs="?", help="the workspace folder to open (default: the last one)")
    parser.add_argument("--model", default="", help="catalog id or GGUF path for this run (default: the setting)")
    parser.add_argument("--no-schedule", action="store_true", help="do not dream or run maintenance on a schedule")
    return parser.parse_args(argv)


def make_app(argv: list[str] | None = None):
    from PySide6.QtWidgets import QApplication

    from desktop import theme

    # The main thread takes the GIL back every time Qt calls into Python (each virtual method a
    # Python class might override), hundreds of times in one paint; behind a busy worker thread
    # each take waits up to the switch interval. 1 ms instead of the default 5 ms.
    sys.setswitchinterval(0.001)
    # The embedding model runs in a child process: torch's import, its load and every encode
    # would otherwise hold this process's GIL for up to 0.4 s at a time (the GUI benchmark).
    from core.index.embedding import prefer_process

    prefer_process(True)
    tune_gc()
    app = QApplication.instance() or QApplication(argv if argv is not None else sys.argv[:1])
    app.setOrganizationName("Reverie")
    app.setApplicationName("Reverie")
    app.setApplicationDisplayName("Reverie")
    theme.apply_theme(app)
    return app


def tune_gc() -> None:
    """Shorter garbage collections, and full ones rare: a collection stops every thread, the GUI's included.

    The GUI benchmark measured full collections of 130 ms while a dream and the index build
    on a 100,000-line workspace filled the heap. Objects alive after start-up (modules, Qt
    wrappers) are frozen out of every later scan (the main window freezes again once a
    workspace is open). Young collections keep their default size (a few thousand objects,
    about a millisecond; larger ones measured 75-110 ms with every core busy), and
    a full collection waits for 1,000 middle ones instead of 10.
    """
    import gc

    gc.collect()
    gc.freeze()
    young, middle, _old = gc.get_threshold()
    gc.set_threshold(young, middle, 1000)


def build_window(args: argparse.Namespace, qsettings=None):
    from desktop.main_window import MainWindow

    options = {"schedule": not args.no_schedule}
    window = MainWindow(qsettings=qsettings, controller_options=options)
    return window


def _initial_workspace(args: argparse.Namespace, window) -> str:
    if args.workspace:
        return args.workspace
    recent = [p for p in window.recent() if Path(p).is_dir()]
    return recent[0] if recent else ""


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    app = make_app()
    from PySide6.QtCore import QTimer

    from desktop import theme

    from desktop.preload import open_after_preload
    from desktop.tasks import TaskRunner, stop_all

    window = build_window(args)
    theme.follow_system(app, on_change=lambda: _rehighlight(window))
    window.show()
    target = _initial_workspace(args, window)
    # The window first, then the imports an open needs (off the main thread), then the workspace.
    startup = TaskRunner(max_threads=1, parent=window)
    open_after_preload(startup, lambda: target and window.open_workspace(target, model=args.model))
    # Ctrl+C in the terminal closes the window cleanly (Python only sees signals between Qt events).
    signal.signal(signal.SIGINT, lambda *_: window.close())
    ticker = QTimer()
    ticker.start(250)
    ticker.timeout.connect(lambda: None)
    try:
        return app.exec()
    finally:
        # The window stopped its own tasks on close; anything else still running (a thread, a runner
        # outside the window) is cancelled and waited for before the interpreter exits.
        stop_all()
        from desktop.controller import EMBEDDER_QUIT_WAIT_S, stop_embedders

        stop_embedders(EMBEDDER_QUIT_WAIT_S)


def _rehighlight(window) -> None:
    for view in window.views.values():
        highlighter = getattr(view, "highlighter", None)
        if highlighter is not None:
            highlighter.refresh_colors()


if __name__ == "__main__":
    sys.exit(main())
