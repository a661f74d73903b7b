"""Recall: what memory says about the person's message, found before the model's first step.

A small local model does not reliably call `memory_search` with a real query: the
bundled 135M model copied the tool description ("a query") and answered with it.
So the harness searches for it: before each turn it looks the person's message up
in the index (keyword and meaning, as `reverie search` does) and the best lines go
into the context, next to MEMORY.md and the recent sessions. The model may still
search for more; when it cannot produce an answer, the recalled lines are the
answer, quoted with where they come from.

Lines that cannot answer are left out: the current session's own log (the question
itself, once offloaded), questions (a past "user: What does Maya drink?" is not a
fact), hits found only through their neighbours, and the harness's own notes.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Callable

from core.errors import CoreError
from core.harness.grounding import content_words, is_grounded, is_repetitive
from core.harness.modelcall import ask
from core.harness.transcript import clip

RECALL_K = 4              # lines put in the context: enough for a fact and its dated source
SEARCH_K = 12             # looked at, before the ones that cannot answer are dropped
LINE_CHARS = 240
ANSWER_LINES = 3          # lines the plain answer step shows the model
ANSWER_MAX_TOKENS = 60
ANSWER_REQUEST = "Answer in one short sentence from the notes."
GROUNDED_SHARE = 0.75     # of an answer's content words found in the lines and the question
ECHO_OPENING = 4          # a reply whose first words are a phrase of the prompt copies it
MEANING_ALONE = 0.6       # a line holding none of the message's words must be this close in meaning
RESYNC_AFTER_S = 5.0
# Words that say how a message is put, not what it is about: a line holding only these answers nothing.
FUNCTION_WORDS = frozenset("a an the and or but of to in on at for with by from as is are was were be been "
                           "do does did done have has had can could will would should may might must shall "
                           "what who whom whose which when where why how this that these those there here "
                           "one more most some any all each every no not yes than then also just very so "
                           "me my you your we our it its they them their he she his her i about please tell "
                           "know think get got like".split())      # another process (a shell, an agent over MCP) may have written since
_LEAD = re.compile(r"^\s*(?:[-*]\s+)?(?:\[\d{1,2}:\d{2}\]\s*)?")
_SPEAKER = re.compile(r"^(?:user|assistant|system)\s*:\s*", re.IGNORECASE)
_WORD = re.compile(r"\w+", re.UNICODE)
_TOOL_CALL = re.compile(r"^assistant:\s*[\w.-]+\(")     # a past session's tool call: a request, not a fact


@dataclass(frozen=True)
class Recalled:
    path: str
    line: int
    text: str             # the line as a person reads it: no bullet mark, no time stamp

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


def clean_line(text: str) -> str:
    return " ".join(_LEAD.sub("", str(text)).split())


def is_question(text: str) -> bool:
    return clean_line(text).rstrip(" \"')").endswith(("?", "？"))


class Recaller:
    """Searches memory for a message, keeping the index fresh enough to find what was just written."""

    def __init__(self, workspace, *, sync: bool = True, k: int = RECALL_K,
                 clock: Callable[[], float] = time.monotonic):
        self.ws = workspace
        self.sync = sync          # the app keeps its index current itself; the CLI and tests sync here
        self.k = k
        self.clock = clock
        self._synced_at: float | None = None
        self.error = ""           # why the last recall found nothing to work with ("" when it ran)

    def _sync_if_stale(self) -> None:
        now = self.clock()
        if self.sync and (self._synced_at is None or now - self._synced_at >= RESYNC_AFTER_S):
            self.ws.sync_index()
            self._synced_at = self.clock()

    def recall(self, message: str, *, skip_paths: tuple[str, ...] = ()) -> list[Recalled]:
        query = " ".join(str(message).split())
        self.error = ""
        if not _WORD.search(query):
            return []
        try:
            self._sync_if_stale()
            hits = self.ws.search(query, k=SEARCH_K).hits
        except (CoreError, ImportError, OSError) as exc:
            # Recall helps the model; a turn without it still runs (the model may search itself).
            self.error = f"memory could not be searched: {exc}"
            return []
        out: list[Recalled] = []
        seen: set[str] = set()
        for hit in informative_first(hits):
            if getattr(hit, "match", "words") == "nearby" or hit.path in skip_paths or _TOOL_CALL.match(hit.text):
                continue
            held = [w for w in getattr(hit, "words", ()) or () if w.lower() not in FUNCTION_WORDS]
            if not held and (getattr(hit, "similarity", None) or 0.0) < MEANING_ALONE:
                continue      # only "one" or "what" in common, or close in meaning and not very
            text = clean_line(_SPEAKER.sub("", clean_line(hit.text)))
            key = " ".join(_WORD.findall(text.lower()))
            if not key or key in seen or is_question(text) or text.startswith("[harness]"):
                continue
            seen.add(key)
            out.append(Recalled(hit.path, hit.line, clip(text, LINE_CHARS)))
            if len(out) >= self.k:
                break
        return out


def informative_first(hits: list) -> list:
    """The hits re-ordered by the query words they hold, a word counting less the more hits hold it.

    A question names who it is about and what it asks: "What does Maya drink?" puts "Maya" in half
    the workspace and "drink" in two lines. Search ranks by the whole query (and by meaning, where
    the name weighs most), so "Maya introduced herself" came before "Maya drinks tea"; the line that
    answers holds the rare word. Lines holding none keep their place after the others.
    """
    held = [tuple(getattr(h, "words", ()) or ()) for h in hits]
    frequency: dict[str, int] = {}
    for words in held:
        for word in set(words):
            frequency[word] = frequency.get(word, 0) + 1
    weight = [sum(1.0 / frequency[w] for w in set(words)) for words in held]
    order = sorted(range(len(hits)), key=lambda i: (-round(weight[i], 6), i))
    return [hits[i] for i in order]


def render(recalled: list[Recalled]) -> str:
    """The recalled lines for the prompt, each with where it comes from."""
    if not recalled:
        return ""
    return ("## Memory already searched for the user's last message (answer from these lines when they "
            "answer it)\n"
            + "\n".join(f"- \"{r.text}\" ({r.where})" for r in recalled))


def cite(recalled: list[Recalled]) -> str:
    best = recalled[0]
    return f"(memory: \"{best.text}\", {best.where})"


def answer_from(recalled: list[Recalled]) -> str:
    """The deterministic answer when the model gave none: what memory says, quoted with its source."""
    if not recalled:
        return ""
    best = recalled[0]
    also = [r for r in recalled[1:3]]
    text = f"From memory: {best.text} ({best.where})"
    if also:
        text += "\nAlso: " + "; ".join(f"{r.text} ({r.where})" for r in also)
    return text


def answer_in_words(llm, question: str, recalled: list[Recalled], *, cancel=None) -> str:
    """One short sentence from the model answering `question` from the recalled lines, or "".

    Asked plainly, without the agent's JSON protocol and tool list, which a small model copies
    instead of answering: the lines, the question, one instruction, last. The sentence is kept
    only when it is grounded in the lines and the question (core/harness/grounding.py: most of
    its words, every number exactly) and is not a loop or a copy of the instruction.
    """
    if llm is None or not recalled:
        return ""
    notes = "\n".join(f"- {r.text}" for r in recalled[:ANSWER_LINES])
    prompt = f"Notes:\n{notes}\n\nQuestion: {question}\n{ANSWER_REQUEST}"
    reply = ask(llm, [{"role": "user", "content": prompt}], max_tokens=ANSWER_MAX_TOKENS, cancel=cancel)
    text = " ".join(reply.text.split())
    if not reply.ok or not text:
        return ""
    evidence = content_words(notes + " " + question)
    if (is_repetitive(text) or echoes(text, ANSWER_REQUEST, question)
            or not is_grounded(text, evidence, share=GROUNDED_SHARE)):
        return ""
    return clip(text, LINE_CHARS)


def echoes(text: str, prompt_text: str, message: str) -> bool:
    """Whether a model's tool input or answer repeats the instructions it was given ("a query",
    "TEXT", an example such as "database port", or a long reply that opens with one) and shares no
    content word with the person's message: a small model copying its prompt, not asking or saying
    anything."""
    words = _WORD.findall(text.lower())
    if len(words) < 2 or content_words(text) & content_words(message):
        # One word ("done", "yes") is an answer a prompt's wording may well hold.
        return False        # "Maya drink", taken from the question, is a real query
    prompt = " " + " ".join(_WORD.findall(prompt_text.lower())) + " "
    opening = " ".join(words[:ECHO_OPENING])
    return f" {opening} " in prompt or is_repetitive(text)
