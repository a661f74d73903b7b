"""MemoryFlushManager: durable facts from a span of conversation into today's daily log.

The model sees MEMORY.md (read-only) and today's log as "do not repeat"
references and answers with only new bullets, or exactly `NO_REPLY`. Code then
validates: only single-line bullets, none already in MEMORY.md or today's log,
none the conversation gives no ground for. New bullets go to today's log as a
`## Memory Flush — <timestamp>` block; the dream scheduler hears that there is
new material.

Idempotent: messages are flushed once (tracked by message id), and the same
span of content is never flushed twice (a hash of the span is recorded). Every
outcome is appended to `.reverie/flushes.jsonl`, so a person can see that
flushes really ran: written, no_reply, empty (nothing usable), duplicate, failed.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from dataclasses import dataclass, field

from core.cancel import CancelToken
from core.config import Settings
from core.dream.state import note_new_material
from core.errors import ContextOverflowError, CoreError
from core.harness.grounding import content_words, is_grounded, is_repetitive
from core.harness.messages import Message, ensure_ids, is_summary
from core.harness.modelcall import ask, context_length, counter_for
from core.harness.offload import UNSTATED
from core.harness.transcript import chunk_messages, render_transcript
from core.llm.whole import WholeReplies
from core.secrets import redact
from core.store.locks import locked
from core.store.daily import flush_block
from core.store.memory_md import strip_comments
from core.store.sessions import append_jsonl, read_jsonl
from core.tokens import truncate_to_tokens

NO_REPLY = "NO_REPLY"
OUTCOMES = ("written", "no_reply", "empty", "duplicate", "failed")
# "Stated" and "one per line" keep the bundled 135M/270M models from describing the conversation
# ("The conversation above is a list of...") instead of listing it: measured on four conversations,
# written flushes went from 0 to 1 (SmolLM2) and from 3 to 4 (Gemma 3) over the older wording.
FLUSH_REQUEST = (
    "Write the facts stated in the conversation above that are worth remembering later, one per line, "
    "each line starting with '- '. Leave out what MEMORY.md or today's log already say. "
    f"If there are none, reply {NO_REPLY}."
)
_BULLET = re.compile(r"^\s*(?:[-*•]|\d{1,2}[.)])\s+(?P<text>.+?)\s*$")
_ROLE_ECHO = re.compile(r"^(?:user|assistant|tool(?: [\w.-]+)?(?: result)?)\s*:\s*", re.IGNORECASE)
_WORD = re.compile(r"[\w][\w.'-]*", re.UNICODE)
MAX_BULLET_CHARS = 400
CLIP_CHARS = 600      # each message's share of a flush prompt, head + tail
MIN_FLUSH_TOKENS = 96  # room for a few bullets, however short the span
RESTATED_SHARE = 0.8   # of a bullet's content words found in one known line: it says nothing new
# Messages that state no one's fact: the harness's notes to the model, a reply the model could not
# give, an answer that quotes the memory lines recalled for it (core/harness/agent.py sets these).
NOT_STATED = UNSTATED
MEMORY_READS = ("memory_search", "memory_get")
_ASKING = frozenset("what who whom whose which when where why how does do did is are was were can could "
                    "should would will shall may might".split())


@dataclass
class FlushResult:
    outcome: str                      # one of OUTCOMES
    bullets: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)   # model bullets dropped by validation
    span_hash: str = ""
    path: str = ""                    # daily log written ("" when nothing was)
    lines: tuple[int, int] = (0, 0)
    error: str = ""
    messages: int = 0
    reply: str = ""                   # the model's raw reply, for a person checking why nothing was written
    redacted: int = 0                 # secret values the log got as `[redacted <kind>]` instead

    @property
    def wrote(self) -> bool:
        return self.outcome == "written"


def span_hash(messages: list[Message]) -> str:
    """A hash of a span's content (ids and private keys left out, so re-sent copies match)."""
    canon = [[m.get("role"), m.get("content") or "", m.get("tool_call_id") or "",
              [[c["function"]["name"], c["function"].get("arguments") or ""] for c in m.get("tool_calls") or []]]
             for m in messages]
    return hashlib.sha256(json.dumps(canon, ensure_ascii=False).encode("utf-8")).hexdigest()


def normalise(text: str) -> str:
    return " ".join(_WORD.findall(strip_comments(text).lower()))


def parse_bullets(text: str) -> list[str]:
    """The bullet lines of a model reply (prose around them is ignored).

    A reply with no bullet at all but whole sentences, one per line, is read as one fact per
    line (small models often drop the markers); validation decides what is kept.
    """
    out = []
    for line in text.splitlines():
        match = _BULLET.match(line)
        if match:
            # A small model echoes transcript lines ("user: ..."): keep the words, not the speaker.
            out.append(_ROLE_ECHO.sub("", " ".join(match.group("text").split())))
    if not out:
        out = [_ROLE_ECHO.sub("", " ".join(line.split())) for line in text.splitlines()
               if len(line.split()) >= 4 and line.strip().endswith((".", "!")) and not line.strip().endswith(":")]
    return out


def known_facts(memory_md: str) -> str:
    """MEMORY.md as a "do not repeat" reference: its bullets under their headings, nothing else.

    A fresh MEMORY.md is a title, a line of help and empty headings; shown as it is, a small
    model copies that skeleton back ("# MEMORY.md", "#", "#", ...) instead of reading the
    conversation. Headings with no bullets and prose say nothing to repeat.
    """
    out, heading = [], ""
    for line in memory_md.splitlines():
        if line.startswith("#"):
            heading = line.strip()
        elif _BULLET.match(line):
            if heading:
                out.append(heading)
                heading = ""
            out.append(line.rstrip())
    return "\n".join(out)


def is_question(text: str) -> bool:
    """A question the person asked ("What does Maya drink?"): asking is not stating a fact."""
    words = _WORD.findall(text.lower())
    stripped = text.strip().rstrip(" \"')")
    return stripped.endswith(("?", "？")) or bool(words and words[0] in _ASKING and len(words) <= 25
                                                  and not stripped.endswith((".", "!")))


def restates(bullet: str, lines: list[set[str]]) -> bool:
    """Whether `bullet` says nothing one of `lines` (their content words) does not already say: most of
    its words are in that one line, and every number-like word of it is."""
    words = content_words(bullet)
    if not words:
        return False
    numbers = {w for w in words if any(c.isdigit() for c in w)}
    return any(len(words & line) >= RESTATED_SHARE * len(words) and numbers <= line for line in lines)


def validate_bullets(candidates: list[str], *, known: str, evidence: str,
                     questions: tuple[str, ...] = ()) -> tuple[list[str], list[str]]:
    """(accepted, rejected): new, grounded, single facts; nothing already known, no repeats, no question.

    `evidence` holds what the conversation stated (the person's questions left out, so a bullet made of
    a question is not grounded); `questions` are those questions, so a bullet that only repeats one
    ("what Maya drinks") is dropped too; a bullet that restates a known line is known."""
    known_lines = {normalise(line) for line in known.splitlines() if line.strip()}
    known_words = [content_words(line) for line in known.splitlines() if line.strip()]
    asked = [content_words(q) for q in questions]
    evidence_words = content_words(evidence)
    accepted, rejected, seen = [], [], set()
    for bullet in candidates:
        key = normalise(bullet)
        if (not key or NO_REPLY in bullet or len(bullet) > MAX_BULLET_CHARS or key in seen
                or key in known_lines or is_question(bullet) or restates(bullet, asked)
                or restates(bullet, known_words)
                or not is_grounded(bullet, evidence_words) or is_repetitive(bullet)):
            rejected.append(bullet)
            continue
        seen.add(key)
        accepted.append(bullet)
    return accepted, rejected


def states_something(msg: Message) -> bool:
    """Whether a message can carry a fact worth keeping: the person saying something (not asking),
    the agent's own answer, a tool's result that is not a read of memory itself."""
    role, text = msg.get("role"), str(msg.get("content") or "")
    if not content_words(text):
        return False
    if role == "user":
        return not is_question(text)
    if role == "tool":
        return msg.get("name") not in MEMORY_READS
    return role == "assistant"


def memory_reads(messages: list[Message]) -> list[str]:
    """The lines the conversation read from memory (memory_search, memory_get): known, not new."""
    return [line for m in messages if m.get("role") == "tool" and m.get("name") in MEMORY_READS
            for line in str(m.get("content") or "").splitlines() if line.strip()]


class MemoryFlushManager:
    def __init__(self, workspace, llm, *, settings: Settings | None = None, cancel: CancelToken | None = None,
                 today=None):
        self.ws = workspace
        self.also_known: list[str] = []      # lines the caller showed the model from memory (its recall)
        self.llm = llm
        self.settings = settings or workspace.settings
        self.cancel = cancel
        self.today = today or dt.date.today   # a function, so a long session flushes into the right day
        self.count = counter_for(llm)

    @property
    def record_path(self):
        return self.ws.paths.flush_record

    def records(self) -> list[dict]:
        return read_jsonl(self.record_path, self.ws.root).objects

    def _already(self) -> tuple[set[str], set[str]]:
        """(span hashes, message ids) of flushes that finished (written, no_reply or empty)."""
        hashes, ids = set(), set()
        for rec in self.records():
            if rec.get("outcome") in ("written", "no_reply", "empty"):
                hashes.add(rec.get("span_hash", ""))
                ids.update(rec.get("message_ids") or [])
        return hashes, ids

    def flush(self, messages: list[Message], *, session_id: str = "") -> FlushResult:
        # Summaries are derived; the harness's notes, failed replies and quotes of memory are no one's facts.
        messages = [m for m in ensure_ids(list(messages)) if not is_summary(m) and m.get("kind") not in NOT_STATED]
        hashes, done_ids = self._already()
        todo = [m for m in messages if m["id"] not in done_ids]
        digest = span_hash(todo)
        if not todo or digest in hashes:
            return self._record(FlushResult("duplicate", span_hash=span_hash(messages), messages=len(messages)),
                                session_id, [])
        try:
            result = self._run(todo, digest)
        except ContextOverflowError as exc:
            result = FlushResult("failed", span_hash=digest, error=f"prompt did not fit: {exc}", messages=len(todo))
        except CoreError as exc:
            if getattr(self.cancel, "cancelled", False):
                raise
            result = FlushResult("failed", span_hash=digest, error=str(exc), messages=len(todo))
        return self._record(result, session_id, [m["id"] for m in todo])

    def _references(self) -> tuple[str, str]:
        memory = known_facts(strip_comments(self.ws.read_memory().text))
        today = self.ws.paths.daily_log(self.today())
        daily = self.ws.read(self.ws.relative(today)).text if today.exists() else ""
        return memory, daily

    def _run(self, todo: list[Message], digest: str) -> FlushResult:
        if not any(states_something(m) for m in todo):
            # Only questions, and reads of what memory already holds: nothing to ask the model about.
            return FlushResult("empty", span_hash=digest, messages=len(todo),
                               error="nothing was stated: only questions and what memory already holds")
        memory, daily = self._references()
        read_back = "\n".join([*memory_reads(todo), *self.also_known])
        window = context_length(self.llm)
        out_tokens = self.settings.compaction.flush_max_tokens
        # References get at most a third of the room each; the conversation gets the rest.
        room = window - out_tokens - self.count(FLUSH_REQUEST) - 96
        ref_budget = max(0, room // 3)
        memory_ref = truncate_to_tokens(memory, ref_budget)
        daily_ref = daily[-4 * ref_budget:] if self.count(daily) > ref_budget else daily
        budget = room - self.count(memory_ref) - self.count(daily_ref)
        if self.settings.compaction.input_tokens:
            budget = min(budget, self.settings.compaction.input_tokens)
        if budget < 64:
            return FlushResult("failed", span_hash=digest, error="the model's window is too small for a flush prompt",
                               messages=len(todo))
        # Walk the span in chunks that fit, so no message goes unseen (a small model also
        # does better on a short span than on a long one).
        accepted: list[str] = []
        rejected: list[str] = []
        replies: list[str] = []
        errors: list[str] = []
        notes: list[str] = []
        no_reply = 0
        chunks = chunk_messages(todo, budget, self.count, limit=CLIP_CHARS)
        for chunk in chunks:
            transcript, _dropped = render_transcript(chunk, budget, self.count, start_limit=CLIP_CHARS)
            # One user message, the request last: small models echo a long system prompt back,
            # and attend most to the end of what they read.
            user = (f"MEMORY.md (already known; read-only, do not repeat):\n{memory_ref.strip() or '(empty)'}\n\n"
                    f"Today's log (already known; do not repeat):\n{daily_ref.strip() or '(empty)'}\n\n"
                    f"Conversation:\n<<<\n{transcript}\n>>>\n\n{FLUSH_REQUEST}")
            # New facts from a span are shorter than the span: a reply longer than half of it is the
            # small model copying the transcript back, and at a few tokens a second the longest step.
            span_out = min(out_tokens, max(MIN_FLUSH_TOKENS, self.count(transcript) // 2))
            reply = ask(WholeReplies(self.llm), [{"role": "user", "content": user}], max_tokens=span_out,
                        cancel=self.cancel)
            if reply.cut and not reply.text.strip():
                # Nothing whole came back (the server broke off, or the first line was cut): nothing of
                # this flush is written, so the span is flushed again later.
                return FlushResult("failed", span_hash=digest, error=reply.error, messages=len(todo))
            if reply.cut:
                # Stopped at its token limit after some whole bullets (a small model lists many): those
                # are checked like any others and the unfinished last line is never read. Said in the
                # result, but not a failure: the same span would be cut the same way again.
                notes.append(reply.error)
            elif not reply.ok:
                errors.append(reply.error)
                continue
            replies.append(reply.text)
            if reply.text.strip() == NO_REPLY:
                no_reply += 1
                continue
            known = "\n".join([memory, daily, read_back, *accepted])
            questions = tuple(str(m.get("content") or "") for m in chunk
                              if m.get("role") == "user" and is_question(str(m.get("content") or "")))
            stated, _ = render_transcript([m for m in chunk if states_something(m)], budget, self.count,
                                          start_limit=CLIP_CHARS)
            good, bad = validate_bullets(parse_bullets(reply.text), known=known, evidence=stated,
                                         questions=questions)
            accepted.extend(good)
            rejected.extend(bad)
        raw = "\n---\n".join(replies)
        error = "; ".join(dict.fromkeys(errors + notes))
        if accepted:
            return self._write(accepted, rejected, digest, len(todo), error=error)
        if errors and len(errors) == len(chunks):
            return FlushResult("failed", span_hash=digest, error=error, messages=len(todo))
        if no_reply == len(chunks):
            return FlushResult("no_reply", span_hash=digest, messages=len(todo), reply=raw)
        return FlushResult("empty", rejected=rejected, span_hash=digest, messages=len(todo), reply=raw,
                           error=error or ("" if rejected else "the reply had no bullets"))

    def _write(self, bullets: list[str], rejected: list[str], digest: str, count: int, *,
               error: str = "") -> FlushResult:
        with locked(self.ws.paths.locks_dir / "flush.lock"):
            # Another flush of the same span may have finished while the model was thinking.
            if digest in self._already()[0]:
                return FlushResult("duplicate", span_hash=digest, messages=count)
            block = flush_block("\n".join(f"- {b}" for b in bullets))
            changes = self.ws.append_daily(block, day=self.today(), bullets=False)
        redacted = changes.info.get("redacted", 0)
        if redacted:
            # The result is shown and recorded: it says what the log holds, never the secret.
            bullets = [redact(b) for b in bullets]
        path = changes.paths[0] if changes.paths else ""
        lines = tuple(changes.info.get("lines", (0, 0)))
        error = "; ".join(e for e in (error, self._reindex(path)) if e)
        note_new_material(self.ws.paths, early_min_minutes=self.settings.dream.early_dream_min_minutes)
        return FlushResult("written", bullets=bullets, rejected=rejected, span_hash=digest, path=path,
                           lines=lines, messages=count, error=error, redacted=redacted)

    def _reindex(self, rel_path: str) -> str:
        """Bring the search index up to date for the log just written ("" or why it could not)."""
        if self.ws.index_is_open:
            return ""   # Workspace.append_daily already reindexed it
        try:
            self.ws.index.reindex_file(rel_path)
        except (CoreError, ImportError) as exc:
            # The index is derived state: the next sync picks the file up; the facts are safe on disk.
            return f"reindex deferred: {exc}"
        return ""

    def _record(self, result: FlushResult, session_id: str, message_ids: list[str]) -> FlushResult:
        record = {"ts": dt.datetime.now().astimezone().isoformat(timespec="seconds"), "session_id": session_id,
                  "outcome": result.outcome, "span_hash": result.span_hash, "messages": result.messages,
                  "message_ids": message_ids, "bullets": len(result.bullets), "rejected": len(result.rejected),
                  "path": result.path, "lines": list(result.lines), "error": result.error,
                  "redacted": result.redacted,
                  "reply_excerpt": redact(result.reply[:300]) if not result.wrote else "",
                  "model": getattr(self.llm, "model_id", "")}
        append_jsonl(self.record_path, [record], root=self.ws.root)
        return result
