"""The one executable of the bundle: the desktop app, the `reverie` CLI, and a headless smoke test.

    Reverie                     open the desktop app (the last workspace, or a chooser)
    Reverie PATH                open the desktop app on the workspace at PATH
    Reverie COMMAND ...         the `reverie` command line (init, demo, search, mcp, import, ...)
    Reverie --smoke-test [DIR]  headless check of the frozen bundle (see packaging/smoke.py)
    Reverie -m MODULE ...       run a module, as `python -m` would (how core spawns its worker processes)

One executable, not two, so the macOS .app and the Linux folder carry one copy of
Qt, torch and llama.cpp, and an MCP client can point at the same binary the person
double-clicks: `Reverie.app/Contents/MacOS/Reverie mcp ~/agent`.
"""
from __future__ import annotations

import multiprocessing
import os
import sys


def _cli_commands() -> set[str]:
    from core.cli import build_parser

    parser = build_parser()
    for action in parser._actions:          # the sub-command names argparse knows
        if getattr(action, "choices", None) and isinstance(action.choices, dict):
            return set(action.choices)
    return set()


def _run_module(argv: list[str]) -> int:
    import runpy

    if not argv:
        print("Reverie: -m needs a module name", file=sys.stderr)
        return 2
    sys.argv = [argv[0], *argv[1:]]
    runpy.run_module(argv[0], run_name="__main__", alter_sys=True)
    return 0


def _desktop(argv: list[str]) -> int:
    try:
        from desktop.app import main as desktop_main
    except ImportError as exc:
        print(f"Reverie: the desktop app is not in this build ({exc}); the command line works: "
              f"{os.path.basename(sys.argv[0])} --help", file=sys.stderr)
        return 2
    sys.argv = [sys.argv[0], *argv]
    return int(desktop_main() or 0)


def main() -> int:
    multiprocessing.freeze_support()        # a multiprocessing child re-enters here and must not go further
    argv = [a for a in sys.argv[1:] if not a.startswith("-psn_")]   # Finder's process serial number (old macOS)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")        # models ship inside the bundle; never reach a hub
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    if argv and argv[0] == "--smoke-test":
        from smoke import run_smoke

        return run_smoke(argv[1:])
    if argv and argv[0] == "-m":
        return _run_module(argv[1:])
    if argv and (argv[0] in ("-h", "--help") or argv[0] in _cli_commands()):
        from core.cli import main as cli_main

        return cli_main(argv)
    return _desktop(argv)


if __name__ == "__main__":
    sys.exit(main())
