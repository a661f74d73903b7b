"""Which lines of a text hold a secret, and the text as an agent may see it.

A secret that spans lines (a private key block) taints every line it touches, and so do the
lines of key material around it that the block's own pattern did not take (a body cut from its
header, a block pasted with a blank header line): a line-by-line reader (the dream promoting one
bullet, a search hit showing one line) must never get one line of the block on its own.

`mask_secrets` is what agent-facing reads show (memory_get, memory_search, memory_recent, the MCP
resources): each value as `[redacted <kind>]`, each line of a flagged block replaced whole; the
line count never changes, so line numbers stay true.
"""
from __future__ import annotations

import bisect
import itertools
import re

from core.secrets.scanner import REDACTED, find_secrets

# A line that is nothing but base64 key material (a PEM body line: 64 characters of it).
_KEY_MATERIAL = re.compile(r"^\s*[A-Za-z0-9+/]{40,}={0,2}\s*$")


def _line_starts(text: str) -> list[int]:
    return list(itertools.accumulate((len(line) + 1 for line in text.split("\n")[:-1]), initial=0))


def _flagged(text: str) -> tuple[dict[int, str], list[tuple[int, int, str]]]:
    """({0-based line: kind} for lines tainted whole, [(start, end, kind)] of values within one line)."""
    starts = _line_starts(text)
    whole: dict[int, str] = {}
    inline: list[tuple[int, int, str]] = []
    for hit in find_secrets(text):
        first = bisect.bisect_right(starts, hit.start) - 1
        last = bisect.bisect_right(starts, max(hit.start, hit.end - 1)) - 1
        if first == last:
            inline.append((hit.start, hit.end, hit.kind))
        else:
            for number in range(first, last + 1):
                whole[number] = hit.kind
    lines = text.split("\n")
    tainted = set(whole) | {bisect.bisect_right(starts, start) - 1 for start, _e, _k in inline}
    for number in sorted(tainted):
        kind = whole.get(number, "key material")
        for step in (-1, 1):             # key material next to a flagged line belongs to its block
            other = number + step
            while 0 <= other < len(lines) and other not in whole and _KEY_MATERIAL.match(lines[other]):
                whole[other] = kind
                other += step
    return whole, inline


def secret_lines(text: str) -> set[int]:
    """The 1-based numbers of the lines of `text` that hold a secret or a part of one (block-aware)."""
    if not text:
        return set()
    whole, inline = _flagged(text)
    starts = _line_starts(text)
    return {n + 1 for n in whole} | {bisect.bisect_right(starts, start) for start, _e, _k in inline}


def mask_secrets(text: str) -> str:
    """`text` with every secret value as `[redacted <kind>]` and every line of a flagged block replaced
    whole by that marker; the lines stay where they were."""
    if not text:
        return text
    whole, inline = _flagged(text)
    if not whole and not inline:
        return text
    for start, end, kind in sorted(inline, reverse=True):
        text = text[:start] + REDACTED.format(kind=kind) + text[end:]
    lines = text.split("\n")
    for number, kind in whole.items():
        lines[number] = REDACTED.format(kind=kind)
    return "\n".join(lines)


def hidden_secret_lines(text: str) -> set[int]:
    """The 1-based lines that hold part of a secret their own text does not show (a line of a key
    block): a reader that judges one line at a time must leave them out."""
    lines = text.split("\n")
    return {n for n in secret_lines(text) if not find_secrets(lines[n - 1])}


def mask_line(text: str) -> str:
    """One line shown without its file (a search hit): its secret values masked, and a line that is
    nothing but key material masked whole (it may be a line of a key block whose header is elsewhere)."""
    if _KEY_MATERIAL.match(text):
        return REDACTED.format(kind="key material")
    return mask_secrets(text)


def mask_window(lines: list[str], first: int, last: int, margin: int = 64) -> list[str]:
    """lines[first:last] masked as mask_secrets would mask them in the whole file, reading only `margin`
    lines around them (a key block is shorter), so a read of a few lines of a huge file stays cheap."""
    lo, hi = max(0, first - margin), min(len(lines), last + margin)
    masked = mask_secrets("\n".join(lines[lo:hi])).split("\n")
    return masked[first - lo:last - lo]
