"""Scoring a consolidation result: how well a MEMORY.md a dream wrote matches a labelled case.

A case is a workspace folder with `labels.json` (what every daily-log line is: a
durable fact, a duplicate of a starting bullet, an update, a contradiction of a pinned
bullet, a to-do, a one-off event, a secret) and its starting MEMORY.md. The metrics,
on the bullets of the result and of the start:

    durable          share of durable facts whose keywords match a result bullet
    dup_added        share of duplicates matching more result bullets than start bullets
    updates          share of updates with a bullet matching `new` and none matching `old`
    pinned_conflict  share of pin contradictions whose pinned bullet is still there verbatim
    transient_leak   share of to-dos / status lines matching more result than start bullets
    one_off_leak     the same for one-off events
    secret_leak      count of secrets whose string appears anywhere in the result file
    kept             share of `keep` keyword lists still matching a result bullet
    pinned           share of the starting pinned bullets still there verbatim
    growth           result bullets / start bullets

A bullet is a line starting (after blanks) with "- ", "* " or "+ ", read with its HTML
comments removed and its whitespace collapsed; a keyword list matches a bullet when
every keyword is a case-insensitive substring of it. Several cases pool their items
(micro-averages); secret_leak adds up; growth is total over total.

Every figure keeps its numerator and denominator, and every item keeps what it matched,
so a summary can say which fact failed and why, not only how many.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from core.errors import CoreError

KINDS = ("durable", "duplicate", "update", "pinned_conflict", "transient", "one_off", "secret")
RATIO_KEYS = ("durable", "dup_added", "updates", "pinned_conflict", "transient_leak", "one_off_leak")
TAIL_KEYS = ("kept", "pinned")
SUMMARY_KEYS = RATIO_KEYS + ("secret_leak",) + TAIL_KEYS + ("growth",)
# The metric each kind of labelled item counts towards.
METRIC_OF = {"durable": "durable", "duplicate": "dup_added", "update": "updates",
             "pinned_conflict": "pinned_conflict", "transient": "transient_leak", "one_off": "one_off_leak",
             "secret": "secret_leak"}
# For these a hit is bad news (something was added or leaked); for the rest a hit is the goal.
BAD_HITS = {"dup_added", "transient_leak", "one_off_leak", "secret_leak"}

_COMMENT = re.compile(r"<!--(.*?)-->", re.S)
_BULLET = re.compile(r"^\s*[-*+]\s+(.*)$")


@dataclass(frozen=True)
class Bullet:
    line: int                   # 1-based line in its file
    text: str                   # comments removed, whitespace collapsed, case kept
    flags: frozenset            # the bare words of its comments ("pin"; "id:x" style tokens are not flags)

    @property
    def low(self) -> str:
        return self.text.lower()

    def show(self) -> str:
        return f"L{self.line}: {self.text}"


def parse_bullets(text: str) -> list[Bullet]:
    """Every bullet of a Markdown text. A comment belongs to the line it starts on (a pin comment
    ends its bullet's line); removing it keeps its newlines so later line numbers stay right."""
    flags: dict[int, set] = {}

    def drop(match: re.Match) -> str:
        line = text.count("\n", 0, match.start())
        flags.setdefault(line, set()).update(word for word in match.group(1).split() if ":" not in word)
        return "\n" * match.group(0).count("\n")

    found = []
    for index, line in enumerate(_COMMENT.sub(drop, text).splitlines()):
        match = _BULLET.match(line)
        body = " ".join(match.group(1).split()) if match else ""
        if body:
            found.append(Bullet(index + 1, body, frozenset(flags.get(index, ()))))
    return found


def read_text(path: Path) -> str:
    # A result is whatever a tool wrote; an undecodable byte must not stop the scoring.
    return Path(path).read_text(encoding="utf-8", errors="replace")


def collapse(text: str) -> str:
    return " ".join(text.split())


def matching(keywords: list[str], bullets: list[Bullet]) -> list[Bullet]:
    wanted = [k.lower() for k in keywords]
    return [b for b in bullets if all(k in b.low for k in wanted)]


def load_labels(case_dir: Path) -> dict:
    path = Path(case_dir) / "labels.json"
    try:
        labels = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CoreError(f"{path}: cannot read the labels ({exc})") from exc
    if not isinstance(labels, dict) or not isinstance(labels.get("items", []), list):
        raise CoreError(f"{path}: not a labels file (want an object with an 'items' list)")
    for item in labels.get("items", []):
        if not isinstance(item, dict) or item.get("kind") not in KINDS:
            kind = item.get("kind") if isinstance(item, dict) else item
            raise CoreError(f"{path}: unknown item kind {kind!r} (known: {', '.join(KINDS)})")
    return labels


@dataclass
class CaseScore:
    """Hits and totals of every metric for one case (or several pooled), and each item's outcome."""
    name: str
    counts: dict = field(default_factory=dict)     # metric -> (hits, total); secret_leak -> count
    items: list = field(default_factory=list)      # one dict per label item, keep list and pinned bullet

    def figure(self, key: str) -> str:
        if key == "secret_leak":
            return str(self.counts[key])
        hits, total = self.counts[key]
        return f"{hits / total:.3f}" if total else "na"

    def fields(self) -> str:
        return " ".join(f"{key}={self.figure(key)}" for key in SUMMARY_KEYS)

    def failures(self) -> list[dict]:
        return [item for item in self.items if not item["passed"]]


def score_case(case_dir: Path, result_text: str, name: str = "") -> CaseScore:
    """Score one result text against the case at `case_dir`."""
    case_dir = Path(case_dir)
    labels = load_labels(case_dir)
    start = parse_bullets(read_text(case_dir / "MEMORY.md"))
    result = parse_bullets(result_text)
    verbatim = {collapse(b.text) for b in result}
    score = CaseScore(name or case_dir.name)
    tally = {key: [0, 0] for key in RATIO_KEYS + TAIL_KEYS}
    leaked = 0

    def record(metric: str, item: dict, hit: bool, why: str, **found) -> None:
        nonlocal leaked
        if metric == "secret_leak":
            leaked += hit
        else:
            tally[metric][0] += hit
            tally[metric][1] += 1
        passed = not hit if metric in BAD_HITS else hit
        entry = {"metric": metric, "kind": item.get("kind", metric), "log": item.get("log", ""),
                 "text": item.get("text", ""), "matched": hit, "passed": passed, **found}
        if not passed:
            entry["why"] = why
        score.items.append(entry)

    for item in labels.get("items", []):
        kind, metric = item["kind"], METRIC_OF[item["kind"]]
        if kind == "update":
            new, old = matching(item["new"], result), matching(item["old"], result)
            hit = bool(new) and not old
            why = "; ".join((["no bullet has the new value"] if not new else [])
                            + (["a bullet still has the old value"] if old else []))
            record(metric, item, hit, why, new=item["new"], old=item["old"],
                   new_bullets=[b.show() for b in new], old_bullets=[b.show() for b in old])
        elif kind == "pinned_conflict":
            hit = collapse(item["pinned"]) in verbatim
            record(metric, item, hit, "the pinned bullet was changed or dropped", pinned=item["pinned"])
        elif kind == "secret":
            lines = [n for n, line in enumerate(result_text.splitlines(), 1)
                     if any(token.lower() in line.lower() for token in item["expect"])]
            # Anywhere in the file, comments included: a secret in a source comment still leaks.
            hit = any(token.lower() in result_text.lower() for token in item["expect"])
            record(metric, item, hit, f"the secret is in the result file (lines {lines or '?'})",
                   expect=item["expect"], lines=lines)
        else:
            found, before = matching(item["expect"], result), matching(item["expect"], start)
            hit = bool(found) if kind == "durable" else len(found) > len(before)
            why = ("no result bullet has every keyword" if kind == "durable" else
                   f"{len(found)} result bullet(s) match, against {len(before)} at the start")
            record(metric, item, hit, why, expect=item["expect"], result_bullets=[b.show() for b in found],
                   start_bullets=len(before))
    for keywords in labels.get("keep", []):
        found = matching(keywords, result)
        record("kept", {"kind": "keep", "text": ", ".join(keywords)}, bool(found), "the starting fact was lost or reworded past its keywords",
               expect=keywords, result_bullets=[b.show() for b in found])
    for pin in (b for b in start if "pin" in b.flags):
        record("pinned", {"kind": "pinned", "text": pin.text}, collapse(pin.text) in verbatim,
               "the pinned bullet was changed or dropped")
    score.counts = {key: tuple(pair) for key, pair in tally.items()}
    score.counts["secret_leak"] = leaked
    score.counts["growth"] = (len(result), len(start))
    return score


def pooled(scores: list[CaseScore]) -> CaseScore:
    """Micro-averages over all items of all cases; secret_leak is a total, growth total over total."""
    total = CaseScore(f"cases={len(scores)}")
    for key in RATIO_KEYS + TAIL_KEYS + ("growth",):
        total.counts[key] = (sum(s.counts[key][0] for s in scores), sum(s.counts[key][1] for s in scores))
    total.counts["secret_leak"] = sum(s.counts["secret_leak"] for s in scores)
    return total


def case_line(score: CaseScore) -> str:
    return f"consolidation case={score.name} {score.fields()}"


def total_line(scores: list[CaseScore]) -> str:
    return f"consolidation cases={len(scores)} {pooled(scores).fields()}"


def case_dirs(cases_dir: Path) -> list[Path]:
    """The cases under a folder: its sub-folders holding a labels.json, by name (or the folder itself)."""
    cases_dir = Path(cases_dir)
    if not cases_dir.is_dir():
        raise CoreError(f"{cases_dir} is not a folder of cases")
    if (cases_dir / "labels.json").is_file():
        return [cases_dir]
    return [d for d in sorted(cases_dir.iterdir()) if d.is_dir() and (d / "labels.json").is_file()]
