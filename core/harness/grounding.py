"""Is a model's sentence grounded in the text it was given? A cheap deterministic check.

Small models invent: identifiers that appear nowhere, repeated fragments, echoes
of the schema. A proposal is kept only when most of its content words (three
letters or more, not stop words) occur in the evidence it was asked about.
"""
from __future__ import annotations

import re

_WORD = re.compile(r"[\w][\w.'-]*", re.UNICODE)
_STOP = frozenset("the a an and or of to in on for with is are was were be been it this that these those "
                  "user assistant tool has have had will would should can could not no yes as at by from "
                  "fact facts new memory".split())


def content_words(text: str) -> set[str]:
    """Words of three letters or more, and every number-like word however short ("step 7", "v2")."""
    words = {w.strip(".'-") for w in _WORD.findall(text.lower())}
    return {w for w in words if len(w) >= 3 or any(c.isdigit() for c in w)} - _STOP


def is_grounded(text: str, evidence_words: set[str], share: float = 0.5) -> bool:
    """Most content words occur in the evidence, and every number-like word does, exactly.

    Numbers, versions, ports and ids are where a small model invents most ("amber-4" for "amber-4076",
    "step 17" where the conversation only reached step 12).
    """
    words = content_words(text)
    if not words or len(words & evidence_words) < share * len(words):
        return False
    return all(w in evidence_words for w in words if any(c.isdigit() for c in w))


def is_repetitive(text: str) -> bool:
    """A degenerate reply: the same word over and over (a small model's loop)."""
    words = _WORD.findall(text.lower())
    return len(words) >= 8 and len(set(words)) * 3 < len(words)
