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


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole command line, or (`command`) only the group module named `<command>_cmd` when it
    registers that command: `reverie search` then imports none of the other groups (an agent calls
    it from its shell on every query; the model and dream commands' imports would cost it)."""
    parser = OneLineParser(prog="reverie", description="Reverie: an AI agent's long-term memory, on your machine.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    names = sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_"))
    if command and f"{command}_cmd" in names:
        names = [f"{command}_cmd"]
    for name in names:
        register = getattr(importlib.import_module(f"{__name__}.{name}"), "register", None)
        if register is not None:
            register(sub)
    if command and command not in sub.choices:
        return build_parser()
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
    given = sys.argv[1:] if argv is None else argv
    parser = build_parser(given[0] if given and not given[0].startswith("-") else None)
    OneLineParser.argv = list(given)
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
