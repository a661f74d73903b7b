"""The words a fact states, for finding the bullets a fact is compared with
(core/dream/pipeline/judge.py): stems that give a word's forms one key, anchors (names, numbers,
identifiers), whether a line is in another language, what a reported line says, and how rare a word
is among the texts at hand. The decisions themselves are learned (core/dream/judgment/heads.py)."""
from __future__ import annotations

import math
import re
from typing import Sequence

from core.dream.judgment.similarity import words

_ANCHOR = re.compile(r"(?<![\w@.])(?:[#@]?[\w.-]*\d[\w.:/%-]*|[A-Z][\w’-]*[A-Za-z\d](?:\.[\w-]+)*|"
                     r"[a-z]+(?:[./][\w-]+)+|\w+_\w+[\w-]*|[#@]\w[\w-]*)")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_QUOTED = re.compile(r"[«“\"「『„](?P<inner>[^«»“”\"「」『』„]{8,})[»”\"」』“]")
ENGLISH = frozenset("""the a an and of to in is are on for with at by from it its this that be was were has have
not no but or as he she they we you his her their our my me him them there which who what when will would can
should must do does than then so also only every each all any into out up after before over about""".split())
_OTHER_FUNCTION_WORDS = frozenset("""la le les el los las il lo gli di del della der die das den dem und ist sind est et
y e en het een van met zijn une un una uno sont nicht non pas que che per por para avec mit von dans sur ich wir je
nous elle ein eine einen jedes jeden muy più molto sehr des du au aux ce cette ces qui ou où mais pour zu im auf
nel nella alla sono questo esta este estos lo da dei delle geen niet ook voor als bij naar ab ni más""".split())
def stem(word: str) -> str:
    """A light English stem that gives a word's forms one key: "hive"/"hives", "change"/"changed"/
    "changes", "go"/"goes", "flip"/"flipped" (only "-es" after a hissing sound is an ending of its own)."""
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("sses") or word.endswith(("ches", "shes", "xes", "zes")):
        base = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        base = word[:-1]
    elif word.endswith("ed") and len(word) > 4:
        base = word[:-2]
    elif word.endswith("ing") and len(word) > 5:
        base = word[:-3]
    else:
        base = word
    if base is not word and len(base) > 3 and base[-1] == base[-2] and base[-1] not in "lsz":
        base = base[:-1]                      # "flipped" -> "flip", "planned" -> "plan"
    if (len(base) > 3 or base.endswith("oe")) and base.endswith("e") and not base.endswith("ee"):
        base = base[:-1]                      # "change" and "changed" meet at "chang"
    return base


def stems(text: str) -> frozenset[str]:
    return frozenset(stem(w) for w in words(text))


def anchors(text: str) -> frozenset[str]:
    """Names, numbers and identifiers, lower-cased; a sentence's first word only when it looks
    like a name elsewhere too (it is capitalised because it comes first)."""
    found = set()
    for index, match in enumerate(_ANCHOR.finditer(text)):
        token = re.sub(r"['’]s$", "", match.group(0).strip(".-:/")).lower()
        if not token or token in ENGLISH:
            continue
        if match.start() == 0 or text[max(0, match.start() - 2):match.start()].strip() in (".", ":", "—", ";"):
            if token.replace("-", "").isalpha() and text.count(match.group(0)) == 1:
                continue
        found.add(token)
    return frozenset(found)


def foreign(text: str) -> bool:
    """A line not in English: CJK script, or more function words of another European language
    than of English (a terse English note has few of either: "Figures: matplotlib, PDF out")."""
    if len(_CJK.findall(text)) >= 4:
        return True
    tokens = re.findall(r"[^\W\d_]+", text.lower())
    theirs = sum(t in _OTHER_FUNCTION_WORDS for t in tokens)
    return theirs >= 2 and theirs > sum(t in ENGLISH for t in tokens)


def content(text: str) -> str:
    """What a reported line says: the quote in «Marco, in italiano: «...»», else the text."""
    match = _QUOTED.search(text)
    if match:
        return match.group("inner")
    speaker = re.match(r"^[^:：]{1,40}[:：]\s*(?P<rest>.{8,})$", text)
    if speaker and foreign(speaker.group("rest")) and len(speaker.group(0).split(":")[0].split()) <= 4:
        return speaker.group("rest")      # "Jonas nochmal: ..." -> what Jonas said
    return text


class Rarity:
    """Inverse document frequency of stems over the texts at hand."""

    def __init__(self, texts: Sequence[str]):
        self.total = max(1, len(texts))
        self.counts: dict[str, int] = {}
        for text in texts:
            for token in stems(text) | anchors(text):
                self.counts[token] = self.counts.get(token, 0) + 1

    def count(self, token: str) -> int:
        """How many texts hold `token`; a name ("Tove") also counts where its stem ("tov") stood."""
        return max(self.counts.get(token, 0), self.counts.get(stem(token), 0))

    def weight(self, token: str) -> float:
        return math.log((self.total + 1) / (self.count(token) + 0.5))

    def overlap(self, mine: frozenset[str], theirs: frozenset[str]) -> float:
        """Share of `mine`'s weight that `theirs` holds."""
        total = sum(self.weight(t) for t in mine)
        return sum(self.weight(t) for t in mine & theirs) / total if total else 0.0
