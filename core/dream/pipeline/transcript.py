"""A log that is a pasted conversation, read as a session: only what the person said.

OpenClaw's session-memory hook saves a session as `memory/2026-02-01-slug.md`: a short header
(title, `**Session ID**: …`), then the conversation itself, one turn per role label
("user: …", "assistant: Perfect! … Commit them:"), a turn running on over the lines below it.
People paste chats into their logs the same way ("**User**: …", "用户：…", "助手：…"). Read as
markdown, every line of the assistant's chatter would be a candidate fact. Read as a session
(core/dream/pipeline/session_facts.py), only the person's statements are: what the person says
is what they want remembered; what the assistant says about it is narration.

A transcript is recognised by its structure, not by what it talks about:
- role lines: a line (outside code blocks, not indented, not a list item) that opens with a
  short label and a colon;
- the turns alternate: at least two labels, the speaker changes from one role line to the next;
- the labels are role names (person or assistant, in the languages the logs are written in), or,
  for named speakers ("Kip:", "Jarvis:"), two labels that open at least half of the lines after
  the first turn and switch at least three times. The person is then the one who says less.
The header above the first turn is read as a log, less its one-word record fields
("Source: telegram", "Session Key: agent:main:main").
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from core.dream.pipeline.extraction import Statement, code_fence, plain, statements
from core.dream.pipeline.session_facts import is_statement

# A role label: one or two words (letters in any script), maybe in bold or with a short remark in
# brackets ("System (untrusted):"), then ":" or "：".
_ROLE_LINE = re.compile(r"^(?:\*\*|__)?([^\W\d_][^\W_]{0,15}(?:[ -][^\W\d_][^\W_]{0,15})?)"
                        r"(?:\*\*|__)?(?:\s*[(（][^)）]{0,30}[)）])?\s*(?::(?:\*\*|__)?(?:\s|$)|：(?:\*\*|__)?)")
# A block a harness wraps in a tag inside the person's turn ("<composio> … </composio>"): context it
# injected, not what the person said.
_TAG_OPEN = re.compile(r"^\s*<([A-Za-z][\w-]{0,40})(?:\s[^>]*)?>\s*$")
# Role names, lower-cased: who the person is, and who is not (the assistant, the system, tools).
PERSON_ROLES = frozenset({
    "user", "human", "me", "person", "you", "customer", "client", "用户", "用戶", "使用者", "我", "人类", "ユーザー",
    "사용자", "usuario", "usuária", "usuário", "utilisateur", "benutzer", "nutzer", "utente", "пользователь"})
OTHER_ROLES = frozenset({
    "assistant", "ai", "bot", "agent", "model", "system", "tool", "tool result", "function", "claude", "chatgpt",
    "gpt", "助手", "助理", "机器人", "機器人", "系统", "系統", "工具", "アシスタント", "システム", "어시스턴트",
    "asistente", "assistent", "assistente", "ассистент", "система"})
MIN_NAMED_SWITCHES = 3
_STAMP = re.compile(r"^\[[^\]]{0,60}\d[^\]]{0,60}\]\s*")    # "[Sat 2026-03-21 19:26 GMT] …"
_HEADER_ONLY = re.compile(r"[:：]\s*$")
_RECORD_FIELD = re.compile(r"^[^:：]{1,30}[:：]\s*\S+$")      # "Source: telegram", "Session ID: 4f0c…"


@dataclass(frozen=True)
class Turn:
    role: str          # the label as written, lower-cased
    person: bool       # the person's turn (else the assistant's, the system's, a tool's)
    first: int         # 0-based index of its role line
    last: int          # 0-based index of its last line


def _role_lines(lines: list[str]) -> list[tuple[int, str]]:
    found, fence = [], ""
    for index, line in enumerate(lines):
        fence, code = code_fence(line, fence)
        if code:
            continue
        role = _ROLE_LINE.match(line)
        if role:
            found.append((index, role.group(1).strip().lower()))
    return found


def _switches(sequence: list[str]) -> int:
    return sum(1 for a, b in zip(sequence, sequence[1:]) if a != b)


def turns(lines: list[str]) -> list[Turn] | None:
    """The conversation's turns when `lines` are a transcript, else None."""
    role_lines = _role_lines(lines)
    known = [(i, r) for i, r in role_lines if r in PERSON_ROLES or r in OTHER_ROLES]
    labels = {r for _, r in known}
    if labels & PERSON_ROLES and labels & OTHER_ROLES and _switches([r for _, r in known]) >= 1:
        starts, person = known, {r for r in labels if r in PERSON_ROLES}
    else:
        starts, person = _named_speakers(lines, role_lines)
        if not starts:
            return None
    out = []
    for number, (index, role) in enumerate(starts):
        end = starts[number + 1][0] - 1 if number + 1 < len(starts) else len(lines) - 1
        out.append(Turn(role, role in person, index, end))
    return out


def _named_speakers(lines: list[str], role_lines: list[tuple[int, str]]) -> tuple[list, set]:
    """Two speakers by name: they open most lines after the first turn and take turns; the person is
    the one who says less (an assistant explains at length)."""
    counts: dict[str, int] = {}
    for _, role in role_lines:
        counts[role] = counts.get(role, 0) + 1
    top = sorted(counts, key=lambda r: -counts[r])[:2]
    if len(top) < 2 or counts[top[1]] < 2:
        return [], set()
    starts = [(i, r) for i, r in role_lines if r in top]
    body = [line for line in lines[starts[0][0]:] if line.strip()]
    if _switches([r for _, r in starts]) < MIN_NAMED_SWITCHES or len(starts) * 2 < len(body):
        return [], set()
    said = {role: 0 for role in top}
    for number, (index, role) in enumerate(starts):
        end = starts[number + 1][0] if number + 1 < len(starts) else len(lines)
        said[role] += sum(len(line) for line in lines[index:end])
    return starts, {min(top, key=lambda r: said[r])}


def _person_statements(lines: list[str], turn: Turn, start: int) -> list[Statement]:
    out, fence, tag = [], "", ""
    for index in range(turn.first, turn.last + 1):
        line = lines[index]
        if index == turn.first:
            line = line[_ROLE_LINE.match(line).end():]
        if tag:
            if line.strip() == f"</{tag}>":
                tag = ""
            continue
        opened = _TAG_OPEN.match(line)
        if opened:
            tag = opened.group(1)
            continue
        fence, code = code_fence(line, fence)
        if code:
            continue
        text = _STAMP.sub("", line.strip())
        if index < start or not text or text.startswith(">") or _HEADER_ONLY.search(text):
            continue        # read before, quoted, or a label over metadata ("Conversation info (…):")
        for piece in re.split(r"(?<=[.!?。！？])\s+", text):
            piece = " ".join(piece.split())
            if len(piece) >= 12 and is_statement(piece):
                out.append(Statement(text=piece, first=index + 1, last=index + 1))
    return out


def _field(line: str) -> str:
    """A header line as `label: value` words: list marker and emphasis taken off."""
    return plain(re.sub(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+", "", line)).strip()


def transcript_statements(lines: list[str], start: int = 0) -> list[Statement] | None:
    """The statements of a transcript log from lines[start:] (0-based): its header read as a log, less
    its record fields, and what the person said; None when the log is not a transcript."""
    found = turns(lines)
    if found is None:
        return None
    header = [s for s in statements(lines[:found[0].first], start)
              if not (s.first == s.last and _RECORD_FIELD.match(_field(lines[s.first - 1])))]
    spoken = [s for turn in found if turn.person for s in _person_statements(lines, turn, start)]
    return header + spoken
