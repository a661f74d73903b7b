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
import warnings

from core.errors import CoreError

EXIT_ERROR = 2


class OneLineParser(argparse.ArgumentParser):
    """A usage error is one line (what is wrong, and where help is), like every other error."""

    argv: list[str] = []          # the arguments being parsed (set by main), to name one taken for an option

    def error(self, message: str):
        unknown = [a for a in self.argv if a.startswith("-") and a != "--" and not a[1:2].isdigit()
                   and a.split("=", 1)[0] not in self._option_string_actions]
        hint = ""
        if unknown and ("unrecognized arguments" in message or "arguments are required" in message):
            hint = (f"; {unknown[0]!r} is not an option: a value that starts with '-' goes after `--` "
                    f"({self.prog} ... -- {unknown[0]})")
        self.exit(EXIT_ERROR, f"{self.prog}: error: {' '.join(message.split())}{hint} (see `{self.prog} --help`)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="reverie", description="Reverie: an AI agent's long-term memory, on your machine.")
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
    from core.store.textio import escape_controls

    # One line, and nothing in it that a terminal would run (a path or a text may carry ESC).
    print(f"reverie: error: {escape_controls(' '.join(str(message).splitlines()), keep='')}", file=sys.stderr)
    return EXIT_ERROR


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    from core.config import ConfigWarning

    if issubclass(category, ConfigWarning):
        print(f"reverie: warning: {message}", file=sys.stderr)
    else:
        sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    OneLineParser.argv = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    warnings.showwarning = _show_warning
    try:
        result = args.func(args)
    except CoreError as exc:
        return fail(str(exc))
    except KeyboardInterrupt:
        print("reverie: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `reverie search ... | head` must not print a traceback
        return 0
    except OSError as exc:   # the disk said no (read-only, full, a path too long): one line, not a traceback
        where = f" ({exc.filename})" if getattr(exc, "filename", None) else ""
        return fail(f"{exc.strerror or exc}{where}")
    return int(result or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
