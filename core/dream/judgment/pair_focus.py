"""Where in a long log line a bullet's subject is, and whether two lines of one shape are about one subject.

A real log line is not a clean restatement: "14:32 Went through the palette with Noor on a call; she
thinks the sand reads as beige …, so we're adding a note …" mentions the bullet's subject in one
clause and reports something else in the rest. Read whole, it shares the bullet's words and brings
new ones, which is what an update looks like. Read by clause, the clause that shares the bullet's
subject says nothing new of its slot. And "Dana runs the Tuesday class at 6:30" / "Marco runs the
Thursday class at 7:00" share everything but their subject: a sentence model sees one fact with a
new value, but the two lines are about two people.

All of it is read from the shape of the texts, in any language: clauses are cut at punctuation
(Latin and CJK), a subject is the first word that is not a function word (a closed class per
language, wording.py), or the first two characters of a CJK text, and values are read by
signals.values (numbers with units, times, days, dates).
"""
from __future__ import annotations

import re

import numpy as np

from core.dream.judgment import signals
from core.dream.judgment.similarity import CJK, CJK_CHARS
from core.dream.judgment.wording import ENGLISH, _OTHER_FUNCTION_WORDS

_CLAUSE_BREAK = re.compile(r"[;；。!?！？]+\s*|,\s+|，|\s[—–]\s|\s-\s|:\s+(?=\S.{20,})")
_WORD = re.compile(rf"[{CJK_CHARS}]|[^\W\d_][\w'’.-]*|\d[\w.:]*")
FUNCTION_WORDS = ENGLISH | _OTHER_FUNCTION_WORDS


def clauses(text: str) -> list[str]:
    """The line's clauses, cut at sentence and clause punctuation; never empty."""
    parts = [p.strip() for p in _CLAUSE_BREAK.split(signals.unstamped(text))]
    return [p for p in parts if p] or [signals.unstamped(text)]


def _grams(text: str) -> set[str]:
    return signals.ngrams(text, (2, 3))


def _contained(a: set[str], b: set[str]) -> float:
    """The share of a's grams that b holds."""
    return len(a & b) / len(a) if a else 0.0


def focus(bullet: str, line: str) -> tuple[str, float]:
    """The clause of `line` that holds most of the bullet's characters, and that share."""
    grams = _grams(signals.unstamped(bullet))
    scored = [(_contained(grams, _grams(c)), c) for c in clauses(line)]
    share, clause = max(scored, key=lambda s: s[0])
    return clause, share


def _words(text: str) -> list[str]:
    return [re.sub(r"['’]s$", "", w.lower()).strip(".'’") for w in _WORD.findall(text)]


def _content_words(text: str) -> list[str]:
    """The words that are not function words or numbers, in order."""
    return [w for w in _words(text) if not w[0].isdigit() and w not in FUNCTION_WORDS]


def _same_word(a: str, b: str) -> bool:
    """One word in two forms: the same first five letters ("allergic" / "allergie", "word" / "words")."""
    return a[:5] == b[:5] if min(len(a), len(b)) >= 4 else a == b


def _mentions(text: str, word: str) -> bool:
    if CJK.match(word):
        return word in signals.unstamped(text)
    return any(_same_word(word, w) for part in _words(text) for w in [part, *part.split("-")])


def subject(text: str) -> str:
    """The first word of the text that is not a function word or a number, lower-cased; in CJK text
    the first two CJK characters ("小宇对芒果过敏" -> "小宇")."""
    body = signals.unstamped(text)
    if body and CJK.match(body[0]):
        return body[:2]
    words = _content_words(body)
    return words[0] if words else ""


def _cjk_pairs(text: str) -> set[str]:
    return {text[i:i + 2] for i in range(len(text) - 1) if CJK.match(text[i]) and CJK.match(text[i + 1])}


def subject_in_its_place(bullet: str, clause: str) -> str:
    """The word that opens `clause` where the bullet's subject opens the bullet: the clause goes on
    as the bullet does (its second content word, or the CJK character after a two-character subject,
    is the bullet's) and shares one more of the bullet's words or CJK pairs ("" if not so)."""
    b, c = signals.unstamped(bullet), clause.strip()
    if b and CJK.match(b[0]):
        if len(b) < 3 or len(c) < 3 or c[2] != b[2] or not all(CJK.match(x) for x in c[:2]):
            return ""
        return c[:2] if (_cjk_pairs(b[2:]) & _cjk_pairs(c[2:])) - {b[2:4]} else ""
    words, theirs = _content_words(b), _content_words(c)
    for k in (1, 2):        # a subject of one word ("Dana") or two ("Grandpa Tom")
        if len(words) > k + 1 and len(theirs) > k + 1 and _same_word(theirs[k], words[k]):
            more = any(_same_word(x, y) for x in words[k + 1:] for y in theirs[k + 1:])
            return " ".join(theirs[:k]) if more else ""
    return ""


def subjects_differ(bullet: str, line: str) -> float:
    """1.0 when the line's clause on the bullet's subject says the same about another person or thing
    ("Dana runs the Tuesday class" / "Marco runs the Thursday class"): the word in the place of the
    bullet's subject is another, and neither text mentions the other's subject."""
    clause = focus(bullet, line)[0]
    theirs = subject_in_its_place(bullet, clause)
    if not theirs:
        return 0.0
    if CJK.match(theirs):
        ours = subject(bullet)
    else:       # as many of the bullet's first words as the line's subject has
        ours = " ".join(_content_words(signals.unstamped(bullet))[:len(theirs.split())])
    if any(_same_word(o, t) for o in ours.split() for t in theirs.split()):
        return 0.0
    if any(_mentions(bullet, t) for t in theirs.split()) or any(_mentions(line, o) for o in ours.split()):
        return 0.0
    return 1.0


def another_subject(bullet: str, line: str) -> bool:
    """The line says what the bullet says, about another person or thing."""
    return subjects_differ(bullet, line) == 1.0


def _old_and_new(a: dict, b: dict) -> float:
    """The line keeps one of the bullet's values and brings another of the same type (numbers of one
    unit, times, days, dates): "from 45 mA to 8 mA", "从 2450 涨到 2600", "Wednesdays … Fridays instead"."""
    if any(mine & theirs and theirs - mine for mine, theirs in signals.value_slots(a, b)):
        return 1.0
    return float(bool(a["numbers"] & b["numbers"]) and bool(b["numbers"] - a["numbers"]))


def focus_signals(bullet: str, line: str) -> np.ndarray:
    """Signals of the clause that shares the bullet's subject, and of the two subjects."""
    parts = clauses(line)
    clause, share = focus(bullet, line)
    whole = _contained(_grams(signals.unstamped(bullet)), _grams(signals.unstamped(line)))
    a, c, whole_line = signals.values(bullet), signals.values(clause), signals.values(signals.unstamped(line))
    same_unit = float(any(u and a["units"].get(u) and c["units"].get(u) and a["units"][u] != c["units"][u]
                          for u in set(a["units"]) & set(c["units"])))
    other = subjects_differ(bullet, line)
    return np.asarray([
        min(len(parts), 8) / 8, share, whole - share, len(clause) / max(len(signals.unstamped(line)), 1),
        same_unit, float(bool(a["numbers"]) and bool(c["numbers"]) and a["numbers"] != c["numbers"]),
        float(bool(a["times"]) and bool(c["times"]) and a["times"] != c["times"]),
        float(bool(a["days"]) and bool(c["days"]) and a["days"] != c["days"]),
        _old_and_new(a, whole_line), _old_and_new(a, c), other,
    ], dtype=np.float32)


FOCUS_SIGNALS = 11
