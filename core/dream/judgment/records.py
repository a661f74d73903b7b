"""Records: many lines of one shape in an agent's memory, each about another thing.

Agents keep lists: status lines ("✅ Deployed blog v2.3"), settings ("**Default model**: qwen3"),
files ("`scripts/backup.sh` — nightly backup"), commits ("`a41f9c2` feat: …"), rows of a table the
agent flattened ("Redis | 7.2 | cache | 6379"), dated entries ("2026-10-02: …"). Two records of one
list share their shape and most of their words, so by closeness alone a new record looks like a
repeat or an update of its neighbour. What tells them apart is the record's key — the label, the
first cell, the path, the hash, the words after the status mark: one key with another value is an
update; another key is another record.

`record(text)` reads a line's (form, key, rest); `pair_signals(bullet, line)` says whether the two
share a form, how much their keys and their rests share. They are features of the learned arbiter
(arbiter.CANDIDATE_FEATURES), not rules: which of them matter, and how, is learned from labelled
workspaces whose records are mostly other records, sometimes updates.
"""
from __future__ import annotations

import re
from typing import NamedTuple

import numpy as np

from core.dream.judgment import signals
from core.store.memory_md import strip_comments

_MARKUP = re.compile(r"[*_~#>]+")
_HASH = re.compile(r"^`?(?P<key>[0-9a-f]{7,40})`?(?=[\s:,)]|$)")
_PR = re.compile(r"^(?P<key>(?:PR|MR|issue|#)\s*#?\d+)\b", re.IGNORECASE)
_CODE = re.compile(r"^`(?P<key>[^`]{1,80})`")
_PATH = re.compile(r"^(?P<key>~?[\w.-]*/[\w./-]+)")
_DATE = re.compile(r"^(?P<key>\d{4}-\d{2}-\d{2}|\d{1,2}/\d{1,2}(?:/\d{2,4})?)\b")
# A status mark: symbols and emoji before the first letter or digit ("✅ ", "❌ ", "⚠️ ", "[x] ").
_STATUS = re.compile(r"^(?P<mark>\[[ xX]\]|[^\w\s`|(\[\"'“‘]+)\s*(?=\S)")
_LABEL = re.compile(r"^(?P<key>[^:：|`]{1,32}?)\s*(?:(?<!\d):(?!//)|：|=)\s*(?=\S)")
_WORD = re.compile(rf"[{signals.CJK_CHARS}]|[^\W_]+(?:[.-][^\W_]+)*")
KEY_WORDS = 3


class Record(NamedTuple):
    form: str       # "" for a line of no record shape
    key: str
    rest: str


def _clean(text: str) -> str:
    return " ".join(_MARKUP.sub(" ", strip_comments(signals.body(text))).split())


def _leading_words(text: str, count: int = KEY_WORDS) -> tuple[str, str]:
    """The first `count` words (CJK characters count one each) and what follows them."""
    words = list(_WORD.finditer(text))
    if len(words) <= count:
        return text, ""
    cut = words[count].start()
    return text[:cut].strip(), text[cut:].strip()


# The dream's extraction puts a short heading before a labelled line it took from under it
# ("Dev server — 配置: 4核4G", extraction.py): the heading is the list's subject, not the record's key.
_SUBJECT = re.compile(r"^(?P<subject>[^—–]{1,40}?)\s+[—–]\s+(?=\S)")


def subject(text: str) -> str:
    """The heading the extraction put before a line ("" when there is none)."""
    clean = _clean(text)
    found = None if _CODE.match(clean) or _PATH.match(clean) else _SUBJECT.match(clean)
    return found.group("subject").strip() if found else ""


def record(text: str) -> Record:
    """A line's record form, its key and the rest (the key's value), after any heading before it."""
    clean = _clean(text)
    heading = subject(text)
    if heading:
        clean = clean[_SUBJECT.match(clean).end():]
    cells = [c.strip() for c in clean.strip("|").split("|")]
    if clean.count("|") >= 2 and sum(bool(c) for c in cells) >= 2:
        cells = [c for c in cells if c]
        return Record(f"table{len(cells)}", cells[0], " | ".join(cells[1:]))
    mark = ""
    status = _STATUS.match(clean)
    if status:
        mark, clean = status.group("mark").strip(), clean[status.end():]
    for form, pattern in (("commit", _HASH), ("ref", _PR), ("code", _CODE), ("path", _PATH), ("date", _DATE),
                          ("label", _LABEL)):
        found = pattern.match(clean)
        if found:
            return Record(form if not mark else f"{mark} {form}", found.group("key").strip(),
                          clean[found.end():].lstrip(" :：=—–-").strip())
    if mark:
        key, rest = _leading_words(clean)
        return Record(mark, key, rest)
    return Record("", *_leading_words(clean))


def _grams(text: str) -> set[str]:
    return signals.ngrams(text, (2,)) or signals.ngrams(text, (1,))


def _jaccard(a: str, b: str) -> float:
    return signals.jaccard(_grams(a), _grams(b))


def pair_signals(bullet: str, line: str) -> np.ndarray:
    """Whether the two lines are records of one form; how much their keys share, and their rests;
    whether both stand under a heading, and how much the headings share."""
    a, b = record(bullet), record(line)
    same_form = bool(a.form) and a.form == b.form
    sa, sb = subject(bullet), subject(line)
    return np.asarray([float(same_form), _jaccard(a.key, b.key), _jaccard(a.rest, b.rest),
                       float(bool(sa) and bool(sb)), _jaccard(sa, sb) if sa and sb else 0.0], dtype=np.float32)


RECORD_SIGNALS = ("same_form", "key_shared", "rest_shared", "both_headed", "heading_shared")
