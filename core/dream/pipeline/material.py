"""The new material of a dream: facts from daily logs changed since the watermark and
from the session summaries that arrived since the last dream, and from the session logs
themselves (core/dream/pipeline/session_facts.py).

Cost follows the new material: every daily log is only stat()ed; a file is read
only when its mtime is past the watermark, and an append-only log the last dream
already read is read from the line where that dream stopped (when the lines it read
are unchanged). Every fact keeps exact sources: `memory/2026-11-30.md#L12` (or a
line range for a bullet with continuation lines), `session:<id>` for a summary and
`session:<id>#<n>` for a message of a session log. The same text found in a log and in a
session is one fact with both sources.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from core.dream.pipeline.session_facts import lines_hash, read_session_logs
from core.dream.judgment.similarity import normalise
from core.dream.pipeline.extraction import letters, statements
from core.dream.pipeline.noise import MIN_VARIANTS, leading_label, pasted_labels, repeated_shapes, skeleton
from core.dream.pipeline.transcript import transcript_statements
from core.dream.state import ConsolidationState, parse_time
from core.errors import PathEscapeError
from core.secrets import hidden_secret_lines
from core.store.daily import list_daily_logs
from core.store.fileio import read_bytes
from core.store.memory_md import strip_comments
from core.store.paths import WorkspacePaths
from core.store.sessions import read_jsonl
from core.store.textio import decode_lossy

_MARKER = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_TIME_PREFIX = re.compile(r"^\[\d{1,2}:\d{2}(?::\d{2})?\]\s*")
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+")


@dataclass(frozen=True)
class Fact:
    text: str                       # the fact, marker / time stamp / comments removed
    sources: tuple[str, ...]        # provenance refs
    day: str = ""                   # ISO date of the daily log ("" for a session summary)
    origin: str = "daily"           # "daily" | "transcript" (a conversation saved as a log) | "session" | "carried"
    section: str = ""               # where the fact goes when no keyword says better ("": the default)


@dataclass
class Material:
    facts: list[Fact] = field(default_factory=list)
    files_read: list[str] = field(default_factory=list)
    files_seen: int = 0             # daily logs stat()ed
    bytes_read: int = 0
    watermark: float = 0.0          # newest mtime among the files read (taken before reading)
    consumed: dict[str, list] = field(default_factory=dict)
    sessions: list[str] = field(default_factory=list)
    session_summaries: dict[str, str] = field(default_factory=dict)
    session_logs_read: list[str] = field(default_factory=list)
    session_consumed: dict[str, list] = field(default_factory=dict)
    session_watermark: float = 0.0  # newest mtime among the session logs read
    status_lines: int = 0           # lines left out as status (one shape, other numbers each time)
    include_archive: bool = False   # archived logs were read too (asked for)
    context: str = ""               # USER.md as the agent keeps it: who the person is (read, never rewritten)
    known: int = 0                  # facts left out because USER.md already states them

    @property
    def empty(self) -> bool:
        return not self.facts

    def digest(self, max_chars: int = 3000) -> str:
        """The new material in a few thousand characters, for the Orient prompt."""
        out, used = [], 0
        for fact in self.facts:
            line = f"- {fact.text}"
            if used + len(line) > max_chars:
                out.append(f"- ... and {len(self.facts) - len(out)} more")
                break
            out.append(line)
            used += len(line) + 1
        return "\n".join(out)


def clean_fact_text(raw: str) -> str:
    """A fact's text with its list marker, time stamp and comments removed; never cut (a long line
    is judged whole: its new value may sit at the end)."""
    text = strip_comments(raw).strip()
    text = _MARKER.sub("", text, count=1)
    text = _TIME_PREFIX.sub("", text, count=1).strip()
    return " ".join(text.split())


def facts_from_lines(rel_path: str, lines: list[str], start: int, day: str) -> list[Fact]:
    """Facts from lines[start:] of a daily log (0-based `start`): the statements its markdown makes
    (core/dream/pipeline/extraction.py), or, when the log is a pasted conversation, what the person
    said in it (core/dream/pipeline/transcript.py); less a pasted report's lines (core/dream/pipeline/noise.py)."""
    found = transcript_statements(lines, start)
    origin = "daily" if found is None else "transcript"
    if found is None:
        found = statements(lines, start)
    hidden = hidden_secret_lines("\n".join(lines))   # a line of a key block is never a fact on its own
    pasted = pasted_labels(s.text for s in found)
    facts = []
    for statement in found:
        text = clean_fact_text(statement.text)
        if letters(text) < 4 or (pasted and leading_label(text) in pasted):
            continue          # "ok", "v2", a bot's "🟠 Major: …" comment
        if hidden.intersection(range(statement.first, statement.last + 1)):
            continue          # a line of a private key block: never promoted, not even alone
        ref = f"{rel_path}#L{statement.first}" + (f"-L{statement.last}" if statement.last != statement.first else "")
        facts.append(Fact(text=text, sources=(ref,), day=day, origin=origin))
    return facts


_LOGGED = ("daily", "transcript")


def drop_status_lines(facts: list[Fact]) -> tuple[list[Fact], int]:
    """The facts less the status lines (one shape repeated with other numbers) and the text a harness
    pastes into every conversation it saves (the same words in the person's turns of several
    transcripts: people do not type a sentence the same way in three sessions); and how many went."""
    shapes = repeated_shapes((f.text, f.sources[0].split("#")[0]) for f in facts if f.origin in _LOGGED)
    spoken: dict[str, set[str]] = {}
    for fact in facts:
        if fact.origin == "transcript":
            spoken.setdefault(fact.text, set()).add(fact.sources[0].split("#")[0])
    templates = {text for text, logs in spoken.items() if len(logs) >= MIN_VARIANTS}
    if not shapes and not templates:
        return facts, 0
    kept = [f for f in facts if f.origin not in _LOGGED or (skeleton(f.text) not in shapes and f.text not in templates)]
    return kept, len(facts) - len(kept)


# What a compaction summary (core/harness/summary.render) holds besides facts: its bracketed
# "[Summary of the earlier conversation: ...]" marker, section titles ("Key decisions:"), and
# sections about the session's own to-do list, which is stale once the session has ended.
_SUMMARY_MARKER = re.compile(r"^\s*\[.*\]\s*$")
_SUMMARY_TITLE = re.compile(r"^\s*([A-Z][\w ]{2,40}):\s*$")
_TRANSIENT_SECTIONS = frozenset({"pending", "next steps"})


def summary_facts(session_id: str, summary: str) -> list[Fact]:
    """A session summary as facts: one per line or sentence, each sourced to the session; not the
    summary's marker line, its titles, or the session's intent, pending work and next steps."""
    facts = []
    section = ""
    for line in summary.splitlines():
        title = _SUMMARY_TITLE.match(line)
        if title:
            section = title.group(1).strip().lower()
            continue
        if _SUMMARY_MARKER.match(line) or section in _TRANSIENT_SECTIONS or line.startswith("Session intent:"):
            continue
        for sentence in _SENTENCE.split(line):
            text = clean_fact_text(sentence)
            if len(text) >= 12 and len(text.split()) >= 4:   # "Finished; tests pass." is not a fact
                facts.append(Fact(text=text, sources=(f"session:{session_id}",), origin="session"))
    return facts


def _dedupe(facts: list[Fact]) -> list[Fact]:
    """The same fact flushed twice becomes one fact with both sources."""
    merged: dict[str, Fact] = {}
    for fact in facts:
        key = normalise(fact.text)
        if key in merged:
            old = merged[key]
            sources = old.sources + tuple(s for s in fact.sources if s not in old.sources)
            merged[key] = Fact(old.text, sources, max(old.day, fact.day), old.origin, old.section or fact.section)
        else:
            merged[key] = fact
    return list(merged.values())


def gather(paths: WorkspacePaths, state: ConsolidationState, include_archive: bool = False,
           read_archived: frozenset = frozenset()) -> Material:
    """The new material since the watermark. Archived logs (memory/archive/…) are read only when
    asked, or when named in `read_archived` (maintenance archived them before any dream read them):
    a workspace opened with years of archives should not have them all proposed."""
    material = Material(watermark=state.mtime_watermark, include_archive=include_archive)
    facts: list[Fact] = []
    for log in list_daily_logs(paths, include_archive=True):
        if log.archived and not include_archive and paths.relative(log.path) not in read_archived:
            continue
        material.files_seen += 1
        try:
            mtime = os.stat(log.path).st_mtime   # before reading: a later append moves it past the watermark
        except FileNotFoundError:
            continue
        if mtime <= state.mtime_watermark:
            continue
        rel = paths.relative(log.path)
        data = log.path.read_bytes()
        material.bytes_read += len(data)
        text = decode_lossy(data).text
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()    # the final newline ends the last line; it is not a line of its own
        start = 0
        seen = state.consumed.get(rel)
        if isinstance(seen, list) and len(seen) == 2 and isinstance(seen[0], int) and 0 < seen[0] <= len(lines):
            if lines_hash(lines[: seen[0]]) == seen[1]:
                start = seen[0]
        facts.extend(facts_from_lines(rel, lines, start, log.date.isoformat()))
        material.files_read.append(rel)
        material.consumed[rel] = [len(lines), lines_hash(lines)]
        material.watermark = max(material.watermark, mtime)
    last = state.last_run_time()
    for line_no, entry in read_jsonl(paths.session_cache, paths.root).records:
        sid, summary = str(entry.get("session_id") or ""), entry.get("summary")
        if not sid or not isinstance(summary, str):
            continue
        ended = parse_time(str(entry.get("ended") or ""))
        if last is not None and ended is not None and ended <= last:
            continue
        material.sessions.append(sid)
        material.session_summaries[sid] = summary
        facts.extend(summary_facts(sid, summary))
    # A workspace dreamed over before session logs were read starts them at the daily logs' watermark:
    # those sessions' summaries were read then, and reading months of logs at once helps no one.
    logs = read_session_logs(paths, state.session_watermark or state.mtime_watermark, state.session_consumed)
    for said in logs.statements:
        text = clean_fact_text(said.text)
        if len(text) >= 12:
            facts.append(Fact(text=text, sources=(said.ref,), day=said.day, origin="session", section=said.section))
    material.session_logs_read = logs.logs_read
    material.session_consumed = logs.consumed
    material.bytes_read += logs.bytes_read
    material.session_watermark = logs.watermark
    facts, material.status_lines = drop_status_lines(facts)
    facts.extend(carried_facts(state))
    material.context, known = read_context(paths)
    before = len(facts)
    facts = [f for f in facts if normalise(f.text) not in known]
    material.known = before - len(facts)
    material.facts = _dedupe(facts)
    return material


def carried_facts(state: ConsolidationState) -> list[Fact]:
    """The facts the last dream left for this one (over its per-dream limit): read again, ranked again
    with the new material, so the next best are proposed and none is passed by the watermark."""
    out = []
    for item in state.carried:
        sources = tuple(str(ref) for ref in item["sources"] if isinstance(ref, str))
        text = clean_fact_text(item["text"])
        if text and sources:
            out.append(Fact(text=text, sources=sources, day=str(item.get("day") or ""), origin="carried",
                            section=str(item.get("section") or "")))
    return out


CONTEXT_FILES = ("USER.md",)
CONTEXT_MAX_BYTES = 256 * 1024


def read_context(paths: WorkspacePaths) -> tuple[str, frozenset[str]]:
    """USER.md's text (OpenClaw keeps the person's name and preferences there) and its statements,
    normalised: a fact it already states is not news for MEMORY.md. Never written by a dream."""
    texts, known = [], set()
    for name in CONTEXT_FILES:
        try:
            data = read_bytes(paths.root, paths.root / name)[:CONTEXT_MAX_BYTES]
        except (OSError, PathEscapeError):
            continue        # none, unreadable, or a link out: no context, never an error
        text = decode_lossy(data).text
        texts.append(text)
        known.update(normalise(clean_fact_text(s.text)) for s in statements(text.split("\n")))
    return "\n".join(texts), frozenset(known)
