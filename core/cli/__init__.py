"""The `reverie` command line: thin command groups over the facade.

Every module in this package that defines `register(subparsers)` adds its
commands, so a new command group is one new file. Heavy imports (torch,
llama_cpp) happen inside the command functions, never at registration, so
`reverie --help` stays instant. Errors print one line and exit non-zero.
"""
from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

from core.errors import CoreError

EXIT_ERROR = 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="reverie", description="Reverie: an AI agent's long-term memory, on your machine.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(sub)
    return parser


def fail(message: str) -> int:
    print(f"reverie: error: {message}", file=sys.stderr)
    return EXIT_ERROR


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        result = args.func(args)
    except CoreError as exc:
        return fail(str(exc))
    except KeyboardInterrupt:
        print("reverie: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `reverie search ... | head` must not print a traceback
        return 0
    return int(result or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
