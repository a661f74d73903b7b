"""The GUI benchmark's app side: `python -m desktop.bench_gui WORKSPACE --t0 EPOCH [--seconds S] [--no-model]`.

Started by `reverie bench gui` (core/bench/gui_bench.py, which builds the workspace
and must not import Qt itself). It opens the real main window on the workspace,
starts a fresh index build (FTS, then embeddings in the background) and a dream,
and keeps using the app while they run: a search typed every second, a daily log
opened, tabs switched. A heartbeat timer on the main thread fires every 10 ms from
the first frame on (so the start-up preload and the open count too); the longest
gap beyond that interval is the longest main-thread stall. The first
window time runs from `--t0` (when the parent launched this process) to the first
paint of the window. At the end the window is closed with the jobs still running,
which also measures a clean shutdown.

Each long stall is attributed: how much of it the main thread itself ran (its CPU
time; near 0 means it was waiting for the GIL or a CPU), how much was garbage
collection, and which heavy import began meanwhile. Diagnosis switches (they slow the
app, so their figures are not the app's own): REVERIE_BENCH_DUMP=ms prints every
thread's stack when the heartbeat is that late; REVERIE_BENCH_CCALLS=ms lists calls
into C that held on longer (a GIL not released, or its holder preempted);
REVERIE_BENCH_CALLBACKS=ms lists task results the main thread took that long to show.

Last line: `gui first_window_s=... max_stall_ms=...`
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

HEARTBEAT_MS = 10
REACTION_MS = 400     # a quick person's reaction: from MEMORY.md shown to "Dream now" pressed
# C calls that wait with the GIL released: long by design, harmless to the main thread.
WAITS = {"select", "poll", "acquire", "sleep", "read", "wait", "recv", "join", "exec", "waitForDone", "accept",
         "readinto", "waitpid", "communicate"}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(prog="python -m desktop.bench_gui")
    parser.add_argument("workspace")
    parser.add_argument("--t0", type=float, default=None, help="epoch seconds when the process was launched")
    parser.add_argument("--seconds", type=float, default=20.0, help="how long to measure while the jobs run")
    parser.add_argument("--no-model", action="store_true", help="dream without a model (rules only)")
    return parser.parse_args(argv)


def _gc_pauses() -> list[tuple[float, int, float]]:
    """(ms, generation, perf_counter at its end) of every garbage collection from now on, in any thread:
    a pause stops them all."""
    import gc

    pauses: list[tuple[float, int, float]] = []
    began = [0.0]

    def timing(phase: str, info: dict) -> None:
        if phase == "start":
            began[0] = time.perf_counter()
        elif began[0]:
            now = time.perf_counter()
            pauses.append(((now - began[0]) * 1000.0, info.get("generation", -1), now))
    gc.callbacks.append(timing)
    return pauses


def _slow_c_calls(limit_ms: float) -> list[tuple[float, str, str, str]]:
    """Diagnosis (REVERIE_BENCH_CCALLS=ms): every call into C that took over limit_ms, in any thread.

    A C function that does not release the GIL keeps every other thread, the GUI's
    included, waiting; a profile hook sees each one's start and end. It slows Python
    code down, so the stall figures of such a run are not the app's own.
    """
    found: list[tuple[float, str, str, str]] = []
    if limit_ms <= 0:
        return found
    import threading

    started: dict[int, list[float]] = {}

    def hook(frame, event, arg) -> None:
        if event == "c_call":
            started.setdefault(threading.get_ident(), []).append(time.perf_counter())
        elif event in ("c_return", "c_exception"):
            stack = started.get(threading.get_ident())
            if stack:
                ms = (time.perf_counter() - stack.pop()) * 1000.0
                if ms > limit_ms and getattr(arg, "__name__", "") not in WAITS:
                    found.append((ms, threading.current_thread().name, getattr(arg, "__qualname__", repr(arg))[:60],
                                  f"{frame.f_code.co_filename.rsplit('/', 2)[-1]}:{frame.f_lineno}"))
    threading.setprofile(hook)
    sys.setprofile(hook)
    # The task pool's threads are Qt's, not the threading module's: hook each task as it starts.
    from desktop import tasks

    original = tasks._Task.run

    def run(task) -> None:
        sys.setprofile(hook)
        original(task)
    tasks._Task.run = run
    return found


def _task_spans() -> list[list]:
    """[name, perf_counter at start, at end or 0.0] of every pool task: which ran during a stall."""
    from desktop import tasks

    spans: list[list] = []
    original = tasks._Task.run

    def run(task) -> None:
        span = [task.handle.name, time.perf_counter(), 0.0]
        spans.append(span)
        try:
            original(task)
        finally:
            span[2] = time.perf_counter()
    tasks._Task.run = run
    return spans


def _slow_callbacks(limit_ms: float) -> list[tuple[float, str]]:
    """Diagnosis (REVERIE_BENCH_CALLBACKS=ms): task results handled on the main thread that took over limit_ms."""
    found: list[tuple[float, str]] = []
    if limit_ms <= 0:
        return found
    from desktop import tasks

    original = tasks._Relay._call

    def timed(relay, name, *args):
        started = time.perf_counter()
        try:
            return original(relay, name, *args)
        finally:
            ms = (time.perf_counter() - started) * 1000.0
            if ms > limit_ms:
                callback = relay.callbacks.get(name)
                found.append((ms, f"{relay.handle.name} {name} -> {getattr(callback, '__qualname__', callback)}"))
    tasks._Relay._call = timed
    return found


def main(argv=None) -> int:
    t0 = time.time()
    args = parse_args(argv)
    t0 = args.t0 or t0
    from PySide6.QtCore import QEvent, QObject, QSettings, Qt, QTimer
    from PySide6.QtWidgets import QApplication

    from desktop.app import make_app
    from desktop.main_window import MainWindow
    from desktop.preload import open_after_preload
    from desktop.tasks import TaskRunner

    app = make_app([sys.argv[0]])
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope,
                      os.path.join(args.workspace, ".reverie", "bench-qsettings"))
    qsettings = QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, "ReverieBench", "bench")
    options = {"schedule": False, "watch": True, "index": True}
    if args.no_model:
        options["llm_factory"] = lambda _ws: None
    window = MainWindow(qsettings=qsettings, controller_options=options)
    figures: dict[str, float] = {}
    gaps: list[float] = []
    state = {"last": 0.0, "beats": 0, "uses": 0}

    class FirstPaint(QObject):
        def eventFilter(self, obj, event) -> bool:
            if event.type() == QEvent.Type.Paint and "first_window_s" not in figures:
                figures["first_window_s"] = time.time() - t0
                app.removeEventFilter(self)
                # From the first frame on every stall counts: the preload and the open included.
                QTimer.singleShot(0, heartbeat.start)
            return False

    watcher = FirstPaint()
    app.installEventFilter(watcher)

    heavy = ("torch", "transformers", "sentence_transformers", "scipy", "sklearn")
    loaded = {name for name in heavy if name in sys.modules}
    # (ms, seconds since launch, what loaded meanwhile, ms of garbage collection, ms the main thread ran,
    #  the pool tasks that ran meanwhile)
    long_stalls: list[tuple[float, float, str, float, float, str]] = []

    def beat() -> None:
        now = time.perf_counter()
        cpu = time.thread_time()            # the main thread's own CPU time: its work vs waiting (GIL, CPU)
        main_ms, state["cpu"] = (cpu - state.get("cpu", cpu)) * 1000.0, cpu
        if state["last"]:
            gap = (now - state["last"]) * 1000.0
            gaps.append(gap)
            if gap - HEARTBEAT_MS > 50:
                # Attribute it: a library imported on a worker thread holds the GIL through its C init.
                new = {name for name in heavy if name in sys.modules} - loaded
                loaded.update(new)
                collected = sum(ms for ms, _gen, end in pauses if state["last"] <= end <= now)
                running = sorted({name for name, begun, ended in spans
                                  if begun < now and (not ended or ended > state["last"])})
                long_stalls.append((gap - HEARTBEAT_MS, time.time() - t0, ", ".join(sorted(new)), collected,
                                    main_ms, ", ".join(running)))
        state["last"] = now
        state["beats"] += 1

    pauses = _gc_pauses()
    spans = _task_spans()
    slow_calls = _slow_c_calls(float(os.environ.get("REVERIE_BENCH_CCALLS", "0") or 0))
    slow_callbacks = _slow_callbacks(float(os.environ.get("REVERIE_BENCH_CALLBACKS", "0") or 0))
    if os.environ.get("REVERIE_BENCH_DUMP"):
        # Diagnosis: when the heartbeat stops for over REVERIE_BENCH_DUMP ms (1 = 400), print every thread's stack once.
        import faulthandler
        import threading

        limit_s = (float(os.environ["REVERIE_BENCH_DUMP"]) if float(os.environ["REVERIE_BENCH_DUMP"]) > 1 else 400) / 1000

        def dumper() -> None:
            dumped = 0.0
            while True:
                time.sleep(limit_s / 4)
                last = state["last"]
                if last and time.perf_counter() - last > limit_s and last != dumped:
                    dumped = last
                    print(f"--- heartbeat {1000 * (time.perf_counter() - last):.0f} ms late at "
                          f"{time.time() - t0:.2f} s", file=sys.stderr, flush=True)
                    faulthandler.dump_traceback(all_threads=True)
        threading.Thread(target=dumper, daemon=True, name="stall-dumper").start()

    heartbeat = QTimer()
    heartbeat.setTimerType(Qt.TimerType.PreciseTimer)
    heartbeat.setInterval(HEARTBEAT_MS)
    heartbeat.timeout.connect(beat)

    def open_workspace() -> None:
        if not window.open_workspace(args.workspace):
            print("bench: the workspace did not open", file=sys.stderr)
            app.exit(2)
            return
        controller = window.controller
        memory = window.views["MEMORY.md"]
        memory.loaded.connect(lambda: figures.setdefault("ready_s", time.time() - t0))
        # "Dream now" as soon as a person could press it: a reaction time after MEMORY.md shows.
        memory.loaded.connect(lambda: QTimer.singleShot(
            REACTION_MS, lambda: window.controller is controller and (controller.dreaming or
                                                                       controller.start_dream(reason="benchmark"))))
        QTimer.singleShot(int(args.seconds * 1000), finish)
        use.start()

    queries = ["tea", "deploy staging", "陈伟 固件", "Keycloak", "backup job", "invoice export", "数据库", "Maya"]

    def use_the_app() -> None:
        """What a person does meanwhile: search as they type, open logs, switch views."""
        if window.controller is None:
            return
        n = state["uses"]
        state["uses"] += 1
        if n % 4 == 0:
            view = window.show_search()
            view.set_query(queries[(n // 4) % len(queries)])
        elif n % 4 == 1:
            listing = window.sidebar.listing
            months = list(listing.daily.values()) if listing else []
            if months:
                logs = months[(n // 4) % len(months)]
                window.open_location(logs[0], 50)
        elif n % 4 == 2:
            window.open_view("dreams", "")
        else:
            window.open_location("MEMORY.md")

    use = QTimer()
    use.setInterval(1000)
    use.timeout.connect(use_the_app)

    def finish() -> None:
        use.stop()
        heartbeat.stop()
        controller = window.controller
        report(controller)
        started = time.perf_counter()
        for view in window.views.values():
            editor = getattr(view, "editor", None)
            if editor is not None and hasattr(editor, "document"):
                editor.document().setModified(False)
        window.close()
        figures["shutdown_s"] = time.perf_counter() - started
        print(f"[{time.time() - t0:.1f} s] window closed", flush=True)
        print(f"shutdown with the jobs still running: {figures['shutdown_s']:.2f} s")
        app.exit(0)

    def report(controller) -> None:
        if not gaps:
            print("no heartbeats were measured", file=sys.stderr)
            return
        stalls = [max(0.0, g - HEARTBEAT_MS) for g in gaps]
        ordered = sorted(gaps)
        figures["max_stall_ms"] = max(stalls)
        print(f"first window: {figures.get('first_window_s', float('nan')):.3f} s from launch; "
              f"MEMORY.md shown: {figures.get('ready_s', float('nan')):.3f} s")
        print(f"heartbeat every {HEARTBEAT_MS} ms for {args.seconds:.0f} s: {len(gaps)} beats, "
              f"gap p50 {statistics.median(gaps):.1f} ms, p99 {ordered[int(len(ordered) * 0.99) - 1]:.1f} ms, "
              f"max {ordered[-1]:.1f} ms; beats late by > 20 ms: {sum(1 for s in stalls if s > 20)}")
        print(f"app use meanwhile: {state['uses']} actions (searches, logs opened, views switched)")
        if slow_calls:
            print(f"C calls that held on for over {os.environ['REVERIE_BENCH_CCALLS']} ms (a GIL not released stalls "
                  f"the main thread):")
            for ms, thread, name, where in sorted(slow_calls, reverse=True)[:12]:
                print(f"  {ms:.0f} ms {name} in {thread} from {where}")
        if slow_callbacks:
            print(f"task callbacks on the main thread over {os.environ['REVERIE_BENCH_CALLBACKS']} ms:")
            for ms, name in sorted(slow_callbacks, reverse=True)[:12]:
                print(f"  {ms:.0f} ms {name}")
        if pauses:
            print(f"garbage collections: {len(pauses)}, longest {max(p[0] for p in pauses):.1f} ms "
                  f"(generation {max(pauses)[1]}), {sum(p[0] for p in pauses):.0f} ms in all")
        for ms, at, new, collected, main_ms, running in sorted(long_stalls, reverse=True)[:8]:
            cause = f"; the main thread ran {main_ms:.0f} ms of it"
            cause += f"; tasks running: {running}" if running else ""
            cause += f"; a worker thread began importing {new} meanwhile" if new else ""
            cause += f"; {collected:.0f} ms of it garbage collection" if collected >= 1 else ""
            print(f"  stall {ms:.0f} ms at {at:.1f} s{cause}")
        index_task, dream_task = controller.index_task, controller.dream_task
        print(f"index build: {'finished' if index_task is not None and index_task.done else 'still running'}; "
              f"{controller.index_summary}")
        print(f"dream: {'finished' if dream_task is not None and dream_task.done else 'still running'}")

    # As the app does (desktop/app.py): show first, then the preload, then open.
    window.show()
    open_after_preload(TaskRunner(max_threads=1, parent=window), open_workspace)
    code = app.exec()
    if "max_stall_ms" not in figures:
        return code or 1
    print(f"gui first_window_s={figures['first_window_s']:.3f} max_stall_ms={figures['max_stall_ms']:.1f}")
    QApplication.processEvents()
    return code


if __name__ == "__main__":
    sys.exit(main())
