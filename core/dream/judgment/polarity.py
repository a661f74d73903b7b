"""A rule's polarity, and how a new line stands to it: signals for the relation head's pinned pairs.

A pinned bullet forbids ("Never …", "不许 …", "Keine …"), permits ("… is fine", "可以 …", "darf …")
or demands ("Always …", "必须 …", "muss …"). Whether a line agrees with it or breaks it turns on
that polarity and on whether the line is negated: "Turned down the spec job" agrees with "Never do
spec work", "Took the spec job" breaks it, and both share most of their words with the pin. A linear
head cannot multiply "the bullet forbids" by "the line is negated" by itself, so the crossings are
given as features.

The words are the modal verbs and adverbs of the corpus' languages: closed classes (like the
negators in signals.py), not phrases about any subject.
"""
from __future__ import annotations

import re

import numpy as np

from core.dream.judgment import signals

POLARITIES = ("prohibition", "permission", "obligation")

_PROHIBITION = re.compile(
    r"\b(?:never|don['’]?t|do not|must not|mustn['’]?t|may not|cannot|can['’]?t|shall not|no one|nobody|"
    r"not allowed|forbidden|banned|prohibited|"
    r"nie|niemals|kein\w*|nicht|verboten|jamais|interdit\w*|aucun\w*|nunca|prohibido|nada de|ningún|"
    r"mai|vietato|nenhum\w*|proibido)\b"
    r"|^no\b|[,.;:]\s*no\b"                                 # "No screens after 7pm", "…; no exceptions"
    r"|不许|不准|不得|不能|不可|不要|禁止|严禁|别|別|勿|不[做用买接住留发给]|"
    r"しない|ないこと|禁止|ではいけない|てはいけない|ない$",
    re.IGNORECASE)
_PERMISSION = re.compile(
    r"\b(?:can(?![’']t|not)|may(?! not)|allowed|permitted|fine|ok|okay|"
    r"darf|dürfen|erlaubt|peut|peuvent|autoris\w*|permis|puede|pueden|permitido|se permite|può|pode|permitido)\b"
    r"|可以|允许|准许|没事|没关系|无所谓|てもいい|てもよい|可(?![能是惜爱怕见靠])",
    re.IGNORECASE)
_OBLIGATION = re.compile(
    r"\b(?:always|must|have to|has to|need to|needs to|required|every|all|only|"
    r"immer|stets|muss|müssen|jede\w*|toujours|doit|doivent|il faut|tous|toutes|siempre|debe|deben|hay que|"
    r"todos|todas|sempre|deve|devono)\b"
    r"|必须|必需|一定要|一律|务必|都要|至少|最多|每[天周次月场]|只[能用]|"
    r"必ず|なければ|こと$",
    re.IGNORECASE)


def polarity(text: str) -> np.ndarray:
    """Which of prohibition, permission and obligation a text's wording carries (each 0 or 1)."""
    t = signals.unstamped(text).strip().rstrip(".。!！")
    return np.asarray([float(bool(p.search(t))) for p in (_PROHIBITION, _PERMISSION, _OBLIGATION)],
                      dtype=np.float32)


def pair_polarity(bullet: str, line: str) -> np.ndarray:
    """The bullet's polarity, the line's, and each of the bullet's crossed with the line's polarity and
    with whether the line is negated or not (signals' negators): 3 + 3 + 3 × 5 numbers."""
    pb, pl = polarity(bullet), polarity(line)
    negated = float(signals.negations(line) > 0)
    state = np.concatenate([pl, [negated, 1.0 - negated]])
    return np.concatenate([pb, pl, np.outer(pb, state).ravel()]).astype(np.float32)


POLARITY_SIGNALS = 21
