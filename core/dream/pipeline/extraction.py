"""Statements from a real markdown log, each able to stand on its own.

Agents write their daily logs as markdown documents, not as one fact per line: headings,
`**label**: value` lines, bullets nested under a header-only bullet, tables, code blocks,
quoted material, front matter, separators. Taking such a log line by line makes bullets of
"**Battle System:**", of a sub-bullet that lost its subject ("Gold currency"), of a table's
separator row or of a flattened code block.

This module reads the structure instead:
- a heading, a header-only line ("**关键洞察**：", "Battle system:") and a separator are not
  statements; a header-only line is the subject of the lines nested under it or following it;
- a sub-bullet carries its parent's subject when the parent is a header or the sub-bullet is
  too short to stand alone;
- `**label**: value` becomes "label: value";
- a table row is read with its header ("Name: Ada; Role: reviewer");
- code blocks, quoted blocks (`> …`), front matter and HTML comments are skipped;
- a line the log itself strikes through, or marks with a cross, is not a statement; nor is a line
  that ends with a colon (it announces the lines after it), or a row of four or more "|" cells
  with no table header above it.
The rules look at markdown structure only, never at what a line is about: whether a
statement is worth keeping is the judgment's job (core/dream/judgment).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from core.store.memory_md import strip_comments

_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_SEPARATOR = re.compile(r"^\s{0,3}(?:[-*_=]\s*){3,}$")
_BULLET = re.compile(r"^(\s*)(?:[-*+•]|\d{1,3}[.)]|\[[ xX]\])\s+(?:\[[ xX]\]\s+)?")
_TIME_PREFIX = re.compile(r"^\[?\d{1,2}:\d{2}(?::\d{2})?\s*(?:[AaPp][Mm])?\]?\s*[-–—:|]?\s*")
_BOLD_LABEL = re.compile(r"^\*\*(.+?)\*\*\s*[:：]\s*(.*)$|^\*\*(.+?)[:：]\*\*\s*(.*)$")
_HEADER_ONLY = re.compile(r"^(?:\*\*|__)?[^:：]{1,80}?[:：]?(?:\*\*|__)?\s*[:：]\s*$|^(?:\*\*|__)[^*_]{1,80}(?:\*\*|__)$")
_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*$")
_STRUCK = re.compile(r"^~~.+~~\s*[.。]?$")
_CROSSED = re.compile(r"^(?:❌|✗|✘|⛔)")
# A line the log itself labels as wrong or replaced: the marker opens the line as its label
# ("错误路径：…", "Wrong path: …", "Outdated: …") or stands in brackets ("… (wrong)", "（已废弃）").
# Near-certain markers only, in the languages the logs are written in; a fact *about* something
# deprecated ("The v1 API is deprecated") has no such label and is kept.
_WRONG = (r"wrong|incorrect|outdated|obsolete|superseded|no longer valid|错误|錯誤|过时|過時|已废弃|已作废|作废|"
          r"已过期|不再使用|falsch|veraltet|incorrecto|obsoleto|faux|obsolète|errato|間違い|古い情報")
_MARKED_WRONG = re.compile(rf"^(?:\*\*)?[^:：]{{0,12}}(?:{_WRONG})[^:：]{{0,12}}(?:\*\*)?\s*[:：]|"
                           rf"[(（\[]\s*(?:{_WRONG})\s*[)）\]]\s*[.。]?$", re.IGNORECASE)
_LETTERS = re.compile(r"[^\W\d_]")
_ALONE_MIN_WORDS = 3          # a sub-bullet shorter than this carries its parent's subject
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


def code_fence(line: str, fence: str) -> tuple[str, bool]:
    """One line through a fenced code block: (the fence still open after it, "" when none; whether the
    line is code or a fence, not text). A block closes with a fence of its character, at least as long."""
    match = _FENCE.match(line)
    if fence:
        closes = bool(match) and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence)
        return ("" if closes else fence), True
    if match:
        return match.group(1), True
    return "", False


@dataclass(frozen=True)
class Statement:
    text: str          # the statement as it would read in MEMORY.md (markers, bold and stamps removed)
    first: int         # 1-based line numbers in the log
    last: int
    heading: str = ""  # the nearest heading above it ("" at the top of the file)


def letters(text: str) -> int:
    return len(_LETTERS.findall(text))


def plain(text: str) -> str:
    """Markdown emphasis and links reduced to their words; spacing normalised."""
    text = re.sub(r"\[([^\]]+)\]\([^)]+\)", r"\1", text)
    text = re.sub(r"(\*\*|__)(.+?)\1", r"\2", text)
    text = re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", r"\1", text)
    return " ".join(text.split())


def _words(text: str) -> int:
    # a CJK character carries about as much as a short word; count both
    return len(text.split()) + len(_CJK.findall(text)) // 2


def _header_subject(text: str) -> str | None:
    """The subject a header-only line names ("**Battle System:**" -> "Battle System"), else None."""
    stripped = text.strip()
    if not _HEADER_ONLY.match(stripped):
        return None
    subject = plain(stripped).rstrip(":：").strip()
    return subject if letters(subject) else None


def _label_value(text: str) -> str:
    match = _BOLD_LABEL.match(text)
    if not match:
        return text
    label = (match.group(1) or match.group(3) or "").strip().rstrip(":：")
    value = (match.group(2) if match.group(1) is not None else match.group(4)) or ""
    return f"{label}: {value.strip()}" if value.strip() else label


def _cells(row: str) -> list[str]:
    return [plain(cell.strip()) for cell in row.strip().strip("|").split("|")]


def _struck_or_crossed(text: str) -> bool:
    return bool(_STRUCK.match(text) or _CROSSED.match(text) or _MARKED_WRONG.search(text))


def _headerless_row(text: str) -> bool:
    """Four or more cells split by "|" outside code spans, with no table header above: a record or
    status row ("时间：21:46 | v4.0 | 归档 | 14 项"); without its header its cells say nothing."""
    return re.sub(r"`[^`]*`", "", text).count("|") >= 3


def _announces(text: str) -> bool:
    """A line that ends with a colon announces what follows it ("白屏根因: … 如下：", "Commit them:"):
    without the lines it introduces it states nothing."""
    return text.rstrip("*_ ").endswith((":", "："))


def _is_dated_heading(heading: str) -> bool:
    # "# 2026-02-03", "## 10:30", "## Memory Flush — 2026-…": when, not what
    return not letters(re.sub(r"(?i)memory flush|\d+|[ap]m", "", heading))


def statements(lines: list[str], start: int = 0) -> list[Statement]:
    """The statements of lines[start:] (0-based `start`), in order."""
    out: list[Statement | None] = []
    heading = ""
    fence = ""
    front_matter = start == 0 and bool(lines) and lines[0].strip() == "---"
    table_header: list[str] | None = None
    # open bullets, outermost first: [indent, subject (header-only) or None, text, index in `out` or -1]
    parents: list[list] = []
    label = ["", 0]         # a header-only line outside a list: its subject, and how many lines it opened
    pending: list | None = None   # [first, last, text, indent, parent entry or None] being read

    def close() -> None:
        nonlocal pending
        if pending is not None:
            first, last, text, _, entry = pending
            text = " ".join(text.split())
            if (letters(text) >= 2 and not _struck_or_crossed(text) and not _announces(text)
                    and not _headerless_row(text)):
                out.append(Statement(text=text, first=first, last=last, heading=heading))
                if entry is not None:
                    entry[3] = len(out) - 1
            pending = None

    for index in range(start, len(lines)):
        number = index + 1
        raw = strip_comments(lines[index]).rstrip()
        stripped = raw.strip()
        if front_matter:
            if index > 0 and stripped in ("---", "..."):
                front_matter = False
            continue
        was_code = bool(fence)
        fence, code = code_fence(raw, fence)
        if code:
            if not was_code:
                close()          # a block opens: the statement before it ends
            continue
        if not stripped:
            close()
            table_header = None
            if label[1]:
                label[:] = ["", 0]          # a blank line ends the list a bold label opened
            continue
        heading_match = _HEADING.match(raw)
        if heading_match:
            close()
            title = plain(heading_match.group(2))
            heading = "" if _is_dated_heading(title) else title
            parents.clear()
            label[:] = ["", 0]
            table_header = None
            continue
        if _SEPARATOR.match(raw) or stripped.startswith(">"):
            close()
            continue
        if _TABLE_ROW.match(raw):
            close()
            if _TABLE_RULE.match(raw):
                continue
            cells = _cells(raw)
            if table_header is None:
                table_header = cells
                continue
            text = "; ".join(f"{h}: {c}" if h else c for h, c in zip(table_header, cells) if c)
            if letters(text) >= 2:
                out.append(Statement(text=text, first=number, last=number, heading=heading))
            continue
        table_header = None
        bullet = _BULLET.match(raw)
        indent = len(raw) - len(raw.lstrip())
        if not bullet and pending is not None and raw[:1].isspace() and indent > pending[3]:
            pending[1] = number                 # continuation of the bullet above
            pending[2] = f"{pending[2]} {stripped}"
            continue
        close()
        body = raw[bullet.end():] if bullet else stripped
        body = _TIME_PREFIX.sub("", body.strip(), count=1).strip()
        subject = _header_subject(body)
        if bullet:
            while parents and parents[-1][0] >= indent:
                parents.pop()
        else:
            parents.clear()
        if subject is not None:
            if bullet:
                parents.append([indent, subject, body, -1])
            else:
                label[:] = [subject, 0]
            continue
        if parents and parents[-1][1] is None and _words(parents[-1][2]) < _ALONE_MIN_WORDS:
            _promote_to_header(parents[-1], out)     # "- 部署" with sub-bullets: a header after all
        labelled = _BOLD_LABEL.match(body) is not None
        text = plain(_label_value(body))
        owner = _owner(parents) or (label[0] if not parents else "")
        if owner and (parents and parents[-1][1] is not None or _words(text) < _ALONE_MIN_WORDS
                      or (not parents and label[0])):
            text = f"{owner}: {text}"
        elif labelled and heading and _words(heading) <= 6:
            text = f"{heading} — {text}"      # "**配置**: 4核4G" under "## Dev server"
        if label[0]:
            label[1] += 1
        if not bullet:
            label[:] = ["", 0]                # a paragraph ends what a bold label line opened
        entry = [indent, None, text, -1] if bullet else None
        if entry is not None:
            parents.append(entry)
        pending = [number, number, text, indent, entry]
    close()
    return [statement for statement in out if statement is not None]


def _promote_to_header(entry: list, out: list) -> None:
    """A short bullet turns out to have sub-bullets: it names their subject and is no statement."""
    entry[1] = plain(entry[2]).rstrip(":：").strip()
    if entry[3] >= 0:
        out[entry[3]] = None


def _owner(parents: list[list]) -> str:
    """The subject a nested line inherits: its nearest header-only parent, or its parent's words."""
    if not parents:
        return ""
    _, subject, text, _ = parents[-1]
    if subject is not None:
        return subject
    return text if _words(text) <= 8 else ""
