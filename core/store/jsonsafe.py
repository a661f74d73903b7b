"""Reading one JSON text that may be hostile: a syntax error, a number with thousands of digits or
nesting a thousand levels deep is one reason a reader can report, never an exception that stops it.

Python's json raises ValueError (not JSONDecodeError) for an integer past its digit limit and
RecursionError for deep nesting; every reader of lines written by others (session logs, imports,
Reverie's own .jsonl records, the MCP wire) goes through here.
"""
from __future__ import annotations

import json
import re
from typing import Any

MAX_JSON_DEPTH = 200    # deeper nesting than any record Reverie or an agent writes


def parse_json_line(raw: str) -> tuple[Any, str]:
    """(the JSON value of one line, "") or (None, why it is not one): a syntax error, a number past
    Python's digit limit or nesting past MAX_JSON_DEPTH, each one reason, never an exception."""
    try:
        if raw.count("[") + raw.count("{") > MAX_JSON_DEPTH and json_depth(raw) > MAX_JSON_DEPTH:
            return None, f"not valid JSON (nested more than {MAX_JSON_DEPTH} levels deep)"
        return json.loads(raw), ""
    except json.JSONDecodeError as exc:
        return None, f"not valid JSON ({exc.msg} at column {exc.colno})"
    except (ValueError, RecursionError) as exc:     # a 5,000-digit number, a pathological nesting
        return None, f"not valid JSON ({str(exc).splitlines()[0][:160]})"


def json_depth(raw: str, stop_at: int = MAX_JSON_DEPTH) -> int:
    """How deep arrays and objects nest in one JSON text (strings skipped); counting stops past `stop_at`."""
    depth = deepest = 0
    for match in _BRACKET.finditer(_STRING.sub('""', raw)):
        depth += 1 if match.group() in "[{" else -1
        if depth > deepest:
            deepest = depth
            if deepest > stop_at:
                break
    return deepest


_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_BRACKET = re.compile(r"[\[\]{}]")
