"""What gets indexed, and how one file becomes index rows.

Indexed: MEMORY.md, progress.md, OpenClaw's top-level files (USER.md, SOUL.md,
TOOLS.md, IDENTITY.md, AGENTS.md, HEARTBEAT.md), every markdown file under memory/
in any folder (the daily logs memory/YYYY-MM-DD.md, the hook-named ones
memory/YYYY-MM-DD-slug.md and -HHMM.md, months nested as memory/2026-02/ or
memory/archive/2026-02/, notes such as memory/people/maya.md, and
memory/superseded.md: the old values dream updates replaced, read like MEMORY.md),
the session logs sessions/*.log.jsonl, and the hand-offs and checkpoints
(handoffs/*.json, checkpoints/<session>/*.json: one row per text field,
records.py). Not .reverie/, not hidden folders (.git, .obsidian)
(derived, private) and not large_tool_results/ (evicted payloads: their head and
tail already sit in the session log, and a 100 kB blob per hit buries real
memories).

One row per non-empty line of text (for session logs, one per JSONL line: the
message text and its tool calls). A line longer than SPLIT_AT characters (a
100 kB tool result in a session log, a pasted document) becomes several rows,
windows of WINDOW_CHARS that overlap by WINDOW_OVERLAP, all with the line's
path and number: one 100 kB row would be cut at a keyword cap, embedded by its
first few hundred characters only, and buried by BM25's length normalisation,
so a fact deep inside it could not be found. Search returns one hit per
(path, line), from its best window (search.py). Each row carries, besides its
own words:

- a *context* for keyword search: the line's date (from the daily log's name or
  the message's timestamp) spelled as words, the topic in a hook-named log's file
  name (outline.py), the section heading it sits under,
  and its neighbouring lines (not for a heading line itself: carrying its
  section's first lines, it outranked them as a hit that says nothing). Conversations and logs state a fact across two
  lines ("Did you go?" / "Yes, to the support group"), and a question names
  the date or the topic more often than the exact words of the line. A
  markdown table's row carries its header row too ("| CHENLU | 18794 |" is a
  port only under "| bot | 端口 |"), and in its own words as well (the FTS
  body, not what a hit shows): a question that names the column ("which port
  is the CHENLU bot on?") finds the row as a line that holds its words, where
  through the context alone it was a "nearby" line, ranked in keyword mode
  after every line that holds any word of the question (matching.py).
  Measured in docs/benchmarks.md (real workspaces' tune half: keyword hit@5
  0.581 -> 0.605; LoCoMo and LongMemEval hold no tables: unchanged).
- an *embedded text*: the line, then its date, its heading and the line before
  it, within a length budget. Only the line before, never after: an append then
  never changes the embedded text of lines already there, so their cached
  vectors stay valid.

Lines that carry no content of their own are not embedded one by one (a busy
agent's logs are mostly these: ~70k lines of heartbeat and status took over 45
minutes to embed). A line with fewer than MIN_LETTERS letters (a bare
timestamp, a number, "[x]") gets no embedded text at all: keyword search finds
it, meaning has nothing to go on. A line whose words repeat at least
REPEATED times in its file with only its numbers changed ("04:00 HEARTBEAT_OK",
"**时间**：4:00 AM，系统稳定", "[watchdog] cron ok, latency 754ms (check 738fb6c2)")
is embedded as that shared shape alone, numbers and ids zeroed and without
date, heading or neighbour: every copy, in every file, has
the same embedded text and so one cached vector.

Nothing here is tuned to one data set: it is what a memory line means in a
workspace (a dated log of who said what under which heading).
"""
from __future__ import annotations

import datetime as dt
import functools
import hashlib
import json
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.index.cjk import has_cjk
from core.index.outline import file_topic
from core.index.records import record_lines
from core.store.fileio import confined_files, confined_glob, confined_tree
from core.store.jsonsafe import parse_json_line
from core.store.memory_md import parse_bullet, strip_comments
from core.store.paths import OPENCLAW_FILES, daily_date

MAX_TEXT = 4_000        # what a hit shows of one line
MAX_BODY = 200_000      # what search sees of one line, in windows (~110 rows at most)
SPLIT_AT = 2_500        # a line longer than this is indexed as windows
WINDOW_CHARS = 2_000    # of a long line, per row
WINDOW_OVERLAP = 200    # a fact cut by one window's end is whole in the next
MAX_NEIGHBOUR = 300     # what a line carries of each neighbour
MAX_EMBED = 400         # characters of embedded text per line (see embed_text)
MIN_LETTERS = 2         # fewer letters than this: nothing to embed
REPEATED = 3            # a line shape seen this often in one file is embedded once, as the shape

_WORDY = re.compile(r"\w", re.UNICODE)
_BULLET_MARK = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_TS = re.compile(r"^(\d{4})-(\d{2})-(\d{2})")
_NUMBERISH = re.compile(r"[A-Za-z0-9_]*[0-9][A-Za-z0-9_]*")   # 42, 24ms, 7d, a hex id like 922ccc15
_LETTER = re.compile(r"[^\W\d_]", re.UNICODE)


@dataclass(frozen=True)
class IndexOptions:
    """How much surrounding text a row carries (the knobs the benchmarks measured)."""

    context_neighbours: int = 2     # lines on each side carried in the keyword context
    embed_previous: int = 1         # lines before a line prefixed to its embedded text
    dates: bool = True              # the line's date, as words, in context and embedding
    headings: bool = True           # the section heading, in context and embedding
    file_topic: bool = True         # a hook-named log's topic ("mail-access"), in context (outline.py)
    table_header: bool = True       # a table row's header row counts among the row's own words


@dataclass(frozen=True)
class Row:
    line: int
    text: str
    body: str
    context: str
    etext: str
    sources: tuple[str, ...] = ()
    day: int = 0

    @functools.cached_property     # asked for several times per row by a sync; a frozen row's hash never changes
    def ehash(self) -> str:
        return content_hash(self.etext)

    @functools.cached_property
    def fhash(self) -> str:
        return content_hash("\x1f".join((self.text, self.body, self.context, self.etext,
                                         " ".join(self.sources), str(self.day))))


def content_hash(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


# ----- which files ---------------------------------------------------------------------------
TOP_FILES = ("MEMORY.md", "progress.md", *OPENCLAW_FILES)
RECORD_FOLDERS = ("handoffs", "checkpoints")     # JSON records: records.py
CURATED_FILES = ("MEMORY.md", "memory/superseded.md")
MEMORY_DEPTH = 6          # folders nested under memory/ that are still read (confined_tree's limit)


def is_indexed(rel: str) -> bool:
    parts = rel.split("/")
    if len(parts) == 1:
        return rel in TOP_FILES
    if any(not p or p.startswith(".") or p == ".." for p in parts[1:-1]):
        return False      # hidden folders (.git, .obsidian) and odd paths are never read
    if parts[0] == "memory":
        return len(parts) - 2 <= MEMORY_DEPTH and parts[-1].endswith(".md")
    if parts[0] == "sessions":
        return len(parts) == 2 and parts[1].endswith(".log.jsonl")
    if parts[0] == "handoffs":
        return len(parts) == 2 and parts[1].endswith(".json")
    if parts[0] == "checkpoints":
        return len(parts) == 3 and parts[2].endswith(".json")
    return False


def indexed_files(root: Path) -> dict[str, Path]:
    """Workspace-relative path -> file, for every file the index covers (links out are skipped)."""
    candidates = confined_files(root, [root / name for name in TOP_FILES])
    candidates += confined_tree(root, root / "memory", ".md", max_depth=MEMORY_DEPTH)
    for folder, pattern in (("sessions", "*.log.jsonl"), ("handoffs", "*.json"), ("checkpoints", "*/*.json")):
        # a folder that is a link out is not even listed (the sync names it among its problems)
        candidates += sorted(confined_glob(root, root / folder, pattern))
    found: dict[str, Path] = {}
    for path in candidates:
        rel = path.relative_to(root).as_posix()
        if is_indexed(rel):
            found[rel] = path
    return found


# ----- dates ---------------------------------------------------------------------------------
def file_day(rel: str) -> dt.date | None:
    return daily_date(Path(rel))


@functools.lru_cache(maxsize=4096)
def date_words(day: dt.date | None, cjk_text: bool = False) -> str:
    """The date as a question may name it. In a file written in Chinese or Japanese, also the way
    those write it ("2026年2月12日", month and day as their own words): "2月12号的事" names the
    month 2 and day 12, which "2026-02-12 Thursday 12 February" does not hold as words."""
    if day is None:
        return ""
    words = f"{day.isoformat()} {day.strftime('%A')} {day.day} {day.strftime('%B')} {day.year}"
    return words + (f" {day.year}年{day.month}月{day.day}日" if cjk_text else "")


def _ts_day(value: Any) -> dt.date | None:
    match = _TS.match(str(value or ""))
    if not match:
        return None
    try:
        return dt.date(int(match.group(1)), int(match.group(2)), int(match.group(3)))
    except ValueError:
        return None


# ----- files -> rows -------------------------------------------------------------------------
@dataclass
class _Draft:
    line: int
    text: str
    body: str
    heading: str = ""
    sources: tuple[str, ...] = ()
    day: dt.date | None = None
    prefix: str = ""            # e.g. the session id a message belongs to
    title: bool = False         # a heading line: its own words say what it is about
    columns: str = ""           # a table row's header row: "| CHENLU | 18794 |" means little without it
    topic: str = ""             # the topic words of its file's name (outline.py)


def file_rows(rel: str, text: str, options: IndexOptions = IndexOptions()) -> tuple[list[Row], list[str]]:
    """The rows of one file, and problems met on the way (e.g. malformed JSONL lines)."""
    if rel.startswith("sessions/"):
        drafts, problems = _session_drafts(rel, text)
    elif rel.split("/", 1)[0] in RECORD_FOLDERS:
        found, problems = record_lines(rel, text)
        drafts = [_Draft(r.line, r.text[:MAX_TEXT], r.text[:MAX_BODY], r.field, (), r.day, prefix=r.about)
                  for r in found]
    else:
        drafts, problems = _markdown_drafts(rel, text), []
    return _finish(drafts, options), problems


def _markdown_drafts(rel: str, text: str) -> list[_Draft]:
    # Bullets with provenance comments: the comment gives the row its sources and is not searched.
    is_memory = rel in CURATED_FILES
    day = file_day(rel)
    drafts, heading, header = [], "", ""
    topic = file_topic(rel)[:MAX_NEIGHBOUR]
    for number, raw in enumerate(text.split("\n"), start=1):
        in_table = raw.lstrip().startswith("|")
        columns = header if in_table else ""
        if in_table and not header:
            header = " ".join(cell.strip() for cell in raw.strip().strip("|").split("|") if cell.strip())
        elif not in_table:
            header = ""
        sources: tuple[str, ...] = ()
        if is_memory:
            bullet = parse_bullet(raw, number)
            if bullet is not None:
                sources = tuple(s.ref for s in bullet.sources)
                shown = f"{bullet.indent}{bullet.mark} {bullet.text}"
            else:
                shown = strip_comments(raw)
        else:
            shown = raw
        shown = shown.rstrip()
        if not _WORDY.search(shown):
            continue
        match = _HEADING.match(shown)
        if match:
            body = match.group(2)
            if len(match.group(1)) > 1:   # "# 2026-11-30" is the document's title, not a section
                heading = body
        else:
            body = _BULLET_MARK.sub("", shown, count=1).strip()
        drafts.append(_Draft(number, shown[:MAX_TEXT], body[:MAX_BODY], "" if match else heading, sources, day,
                             title=bool(match), columns=columns[:MAX_NEIGHBOUR], topic=topic))
    return drafts


def _session_drafts(rel: str, text: str) -> tuple[list[_Draft], list[str]]:
    session = rel.rsplit("/", 1)[-1][: -len(".log.jsonl")]
    drafts, problems = [], []
    for number, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        obj, why = parse_json_line(raw)      # a 5,000-digit number or deep nesting is a reason, not a crash
        if why:
            problems.append(f"{rel}:{number}: {why}; line skipped")
            continue
        if not isinstance(obj, dict):
            problems.append(f"{rel}:{number}: not a JSON object; line skipped")
            continue
        shown = message_text(obj)
        if not _WORDY.search(shown):
            continue
        drafts.append(_Draft(number, shown[:MAX_TEXT], shown[:MAX_BODY], "", (), _ts_day(obj.get("ts")),
                             prefix=f"session {session}"))
    return drafts, problems


def message_text(obj: dict[str, Any]) -> str:
    """One session-log message as a line of text: who, what they said, which tools they called."""
    role = str(obj.get("role") or obj.get("type") or "message")
    if role == "tool" and obj.get("name"):
        role = f"tool {obj['name']}"
    parts = [_content_text(obj.get("content"))]
    for call in obj.get("tool_calls") or []:
        if not isinstance(call, dict):
            continue
        function = call.get("function") if isinstance(call.get("function"), dict) else call
        name = str(function.get("name") or "")
        args = function.get("arguments", "")
        if not isinstance(args, str):
            args = json.dumps(args, ensure_ascii=False)
        parts.append(f"{name}({args})")
    body = " ".join(" ".join(p.split()) for p in parts if p)
    return f"{role}: {body}" if body else ""


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):   # OpenAI/Anthropic content parts
        return " ".join(_content_text(part.get("text", "") if isinstance(part, dict) else part) for part in content)
    if content is None:
        return ""
    return json.dumps(content, ensure_ascii=False) if isinstance(content, dict) else str(content)


def shape(body: str) -> str:
    """The line with its numbers (and ids, sizes, durations: any Latin token holding a digit) as "0" and
    its spacing collapsed: what repeats in a heartbeat or watchdog log."""
    return " ".join(_NUMBERISH.sub("0", body).split())


def has_content(body: str) -> bool:
    """Whether a line has words enough to embed (MIN_LETTERS letters, in any script)."""
    found = 0
    for _ in _LETTER.finditer(body):
        found += 1
        if found >= MIN_LETTERS:
            return True
    return False


def _finish(drafts: list[_Draft], options: IndexOptions) -> list[Row]:
    rows = []
    forms = [shape(d.body) if len(d.body) <= SPLIT_AT else "" for d in drafts]
    shapes = Counter(forms)
    cjk_file = any(has_cjk(d.body) for d in drafts)
    for i, d in enumerate(drafts):
        date = date_words(d.day) if options.dates else ""
        # The keyword context only: the embedded text keeps its date as it was (its cached vector stays).
        spoken = date_words(d.day, cjk_file) if options.dates and cjk_file else date
        heading = d.heading if options.headings else ""
        around = []
        # A heading gets no neighbours: matched by its section's first lines' words, it would outrank them.
        reach = 0 if d.title else options.context_neighbours
        for j in range(max(0, i - reach), min(len(drafts), i + reach + 1)):
            if j != i:
                around.append(drafts[j].body[:MAX_NEIGHBOUR])
        topic = d.topic if options.file_topic else ""
        context = " ".join(p for p in (d.prefix, spoken, topic, heading, d.columns, *around) if p)
        lead = " ".join(p for p in (date, heading, d.columns) if p)
        day = d.day.toordinal() if d.day else 0
        spans = windows(d.body)
        if len(spans) == 1:
            if not has_content(d.body):
                etext = ""
            elif shapes[forms[i]] >= REPEATED:
                etext = forms[i][:MAX_EMBED]
            else:
                before = [drafts[j].body for j in range(max(0, i - options.embed_previous), i)]
                etext = embed_text(d.body, lead, before)
            # A table row holds its header's words as its own (module docstring): keyword body only.
            body = f"{d.body} {d.columns}" if d.columns and options.table_header else d.body
            rows.append(Row(d.line, d.text, body, context, etext, d.sources, day))
            continue
        for start, end in spans:   # a long line: every window a row of its own, same path and line
            body = d.body[start:end]
            shown = ("…" if start else "") + body + ("…" if end < len(d.body) else "")
            rows.append(Row(d.line, shown, body, context, embed_text(body, lead, []), d.sources, day))
    return rows


def windows(body: str, size: int = WINDOW_CHARS, overlap: int = WINDOW_OVERLAP,
            split_at: int = SPLIT_AT) -> list[tuple[int, int]]:
    """(start, end) of the windows a line is indexed as; one window when it is not long.

    Windows end at a space when there is one in their last `overlap` characters
    (a word is not cut in two) and start `overlap` characters before the previous
    end, at a word start; the last one stretches to the end rather than leave a
    sliver of a few words as a row of its own.
    """
    if len(body) <= split_at:
        return [(0, len(body))]
    out, start = [], 0
    while True:
        if len(body) - start <= size + overlap:
            out.append((start, len(body)))
            return out
        end = start + size
        cut = body.rfind(" ", end - overlap, end)
        if cut > start:
            end = cut
        out.append((start, end))
        nxt = end - overlap
        space = body.find(" ", nxt, end)
        start = space + 1 if space != -1 else nxt


def embed_text(body: str, lead: str, before: list[str]) -> str:
    """The line first (it matters most), then its date/heading and the line before, within MAX_EMBED.

    Embedding cost grows with length (measured on one core: 99 texts/s at 100
    characters, 28 at 400, 11 at 1,000), so a line's embedded text is bounded: a
    long line speaks for itself, a short one borrows its surroundings.
    """
    parts = [body[:MAX_EMBED]]
    room = MAX_EMBED - len(parts[0])
    for extra in (lead, *reversed(before)):
        if room < 40 or not extra:
            continue
        parts.append(extra[:room])
        room -= len(parts[-1]) + 1
    return "\n".join(parts)
