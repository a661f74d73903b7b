"""Lines an agent writes over and over with only the numbers changed: status, not facts.

Heartbeat logs repeat one shape all day ("**时间**：4:00 AM，馆长在睡觉", "Heartbeat 03:10 ok,
queue 0", "Checked inbox: 3 new"). Each line differs from the last by a time or a count, so no
exact-duplicate pass merges them, and one dream over a busy workspace would propose dozens.
A shape that comes back with at least `min_variants` different values, either with a clock time
among what changes or in at least `min_variants` different logs, is status: it is kept in the logs
and in search, never proposed. (One log listing "Device 17 …", "Device 18 …", "Device 19 …" once
each is an inventory, not status: it has no clock time and sits in one log.) The test is structural (digits, times and dates masked),
never a list of words, so it holds in every language.

A pasted report is the other flood: a code review bot's comments, a linter's findings. In one
log they share one leading label that opens with a symbol ("🟠 Major:", "[P1]:") line after line. A label that opens
at least `min_pasted` lines of one log marks those lines as pasted material.
"""
from __future__ import annotations

import re
from collections import Counter, defaultdict
from typing import Iterable

_CLOCK = re.compile(r"\b\d{1,2}:\d{2}(?::\d{2})?(?:\s*[AaPp][Mm])?")
# any token holding a digit: a count, a size ("849ms"), a version, a run's hex id ("56727fc4")
_NUMBERISH = re.compile(r"[^\s,;:()\[\]（），；：]*\d[^\s,;:()\[\]（），；：]*")
_SPACE = re.compile(r"\s+")
# a label that opens with a symbol (an emoji, a bracket): how generated reports mark severity
_LEAD_LABEL = re.compile(r"^([^\w\s]{1,4}\s*[^\s:：]{1,20})\s*[:：]\s*\S")

MIN_VARIANTS = 3
MIN_PASTED = 6


def skeleton(text: str) -> str:
    """The line with every clock time ("@") and other number ("#") masked: its shape."""
    return _SPACE.sub(" ", _NUMBERISH.sub("#", _CLOCK.sub("@", text.lower()))).strip()


def repeated_shapes(lines: Iterable[tuple[str, str]], min_variants: int = MIN_VARIANTS) -> set[str]:
    """Status shapes among (text, log) pairs: seen with at least `min_variants` distinct texts, with
    a clock time among the masked parts or spread over at least `min_variants` logs; or one text
    written `min_variants` times in one log (nobody states a fact three times in a day; a heartbeat
    does)."""
    variants: dict[str, set[str]] = defaultdict(set)
    logs: dict[str, set[str]] = defaultdict(set)
    repeats: Counter = Counter()
    for text, log in lines:
        shape = skeleton(text)
        repeats[(text, log)] += 1
        if "#" in shape or "@" in shape:
            variants[shape].add(text)
            logs[shape].add(log)
    shapes = {shape for shape, seen in variants.items()
              if len(seen) >= min_variants and ("@" in shape or len(logs[shape]) >= min_variants)}
    shapes.update(skeleton(text) for (text, _), count in repeats.items() if count >= min_variants)
    return shapes


def pasted_labels(texts: Iterable[str], min_pasted: int = MIN_PASTED) -> set[str]:
    """Leading labels that open at least `min_pasted` lines of one log (call once per log)."""
    counts = Counter(match.group(1).strip() for text in texts if (match := _LEAD_LABEL.match(text)))
    return {label for label, count in counts.items() if count >= min_pasted}


def leading_label(text: str) -> str:
    match = _LEAD_LABEL.match(text)
    return match.group(1).strip() if match else ""
