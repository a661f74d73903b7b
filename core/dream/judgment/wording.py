"""The words a fact states, for the relation rules (core/dream/judgment/relations.py): stems that give a
word's forms one key, anchors (names, numbers, identifiers), the values a text states by type and
what each number counts, whether a line is in another language, and how rare a word is among the
texts at hand (so a name in every bullet links nothing)."""
from __future__ import annotations

import functools

import math
import re
from typing import Sequence

from core.dream.judgment.similarity import CJK, words

_ANCHOR = re.compile(r"(?<![\w@.])(?:[#@]?[\w.-]*\d[\w.:/%-]*|[A-Z][\w’-]*[A-Za-z\d](?:\.[\w-]+)*|"
                     r"[a-z]+(?:[./][\w-]+)+|\w+_\w+[\w-]*|[#@]\w[\w-]*)")
_QUOTED = re.compile(r"[«“\"「『„](?P<inner>[^«»“”\"「」『』„]{8,})[»”\"」』“]")
ENGLISH = frozenset("""the a an and of to in is are on for with at by from it its this that be was were has have
not no but or as he she they we you his her their our my me him them there which who what when will would can
should must do does than then so also only every each all any into out up after before over about""".split())
_OTHER_FUNCTION_WORDS = frozenset("""la le les el los las il lo gli di del della der die das den dem und ist sind est et
y e en het een van met zijn une un una uno sont nicht non pas que che per por para avec mit von dans sur ich wir je
nous elle ein eine einen jedes jeden muy più molto sehr des du au aux ce cette ces qui ou où mais pour zu im auf
nel nella alla sono questo esta este estos lo da dei delle geen niet ook voor als bij naar ab ni más
con se sus à chez ses leur vom zum zur beim auch oder com dos nei""".split())
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
CALENDAR = frozenset(WEEKDAYS + _MONTHS + tuple(m[:3] for m in _MONTHS))
_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")
_NUMBER_WORDS = {w: str(n) for n, w in enumerate("zero one two three four five six seven eight nine ten eleven "
                                                 "twelve".split())}
ORDINALS = frozenset("first second third fourth last final".split())
_TIME = re.compile(r"^\d{1,2}:\d{2}$")
_GENERIC_WORDS = ("week month year time morning afternoon evening night hour minute weekend date "
                  "every other each first last next one two thing way lot")


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


@functools.lru_cache(maxsize=65536)      # a dream compares each fact with every bullet: the same texts again
def stems(text: str) -> frozenset[str]:
    return frozenset(stem(w) for w in words(text))


# Words that say a change, never a subject: they link no fact to a bullet.
CUE_WORDS = frozenset(stem(w) for w in words("now from on instead new moved switched changed raised lowered increased "
                                             "reduced bumped shifted renamed replaced takes took taken over handed "
                                             "after all starting only longer gone given gave left leaving retired "
                                             "declined off stopped quit dropped sold ended talked mind went back"))
GENERIC = stems(_GENERIC_WORDS)      # time words every schedule shares: no subject of their own


@functools.lru_cache(maxsize=65536)
def anchors(text: str) -> frozenset[str]:
    """Names, numbers and identifiers, lower-cased; a sentence's first word only when it looks
    like a name elsewhere too (it is capitalised because it comes first)."""
    found = set()
    for index, match in enumerate(_ANCHOR.finditer(text)):
        token = re.sub(r"['’]s$", "", match.group(0).strip(".-:/")).lower()
        if not token or token in ENGLISH or stem(token) in CUE_WORDS:
            continue
        if match.start() == 0 or text[max(0, match.start() - 2):match.start()].strip() in (".", ":", "—", ";"):
            if token.replace("-", "").isalpha() and text.count(match.group(0)) == 1:
                continue
        found.add(token)
    return frozenset(found)


def numbers_of(text: str) -> frozenset[str]:
    """Numbers, written in digits or as a word up to twelve ("two hives" states 2)."""
    found = {n.replace(",", ".") for n in _NUMBER.findall(text)}
    found |= {_NUMBER_WORDS[w] for w in re.findall(r"[a-z]+", text.lower()) if w in _NUMBER_WORDS}
    return frozenset(found)


_ISO_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_BRACKETED = re.compile(r"\([^()]*\)|（[^（）]*）|\[[^\[\]]*\]")


def unbracketed(text: str) -> str:
    """The text without what stands in brackets: "(16:02 UTC completed)", "(2026-03-05)" say when a
    line was written or what it refers to, not a value it states."""
    return _BRACKETED.sub(" ", text)


def values_of(text: str) -> dict[str, frozenset[str]]:
    """The values a text states, by type: times, dates, other numbers, weekdays, months, ordinals. An
    ISO date is one value ("2026-04-16"), not three numbers; what stands in brackets is none."""
    text = unbracketed(text)
    lower = {stem(w) for w in re.findall(r"[a-z]+", text.lower())}
    dates = frozenset(_ISO_DATE.findall(text))
    # A ticket's number ("ORCH-1301") names the ticket; it is not a value of the sentence.
    nums = numbers_of(re.sub(r"\b[A-Z]{2,}-\d+\b", " ", _ISO_DATE.sub(" ", text)))
    return {"time": frozenset(n for n in nums if _TIME.match(n)),
            "date": dates,
            "number": frozenset(n for n in nums if not _TIME.match(n)),
            "weekday": frozenset(d for d in WEEKDAYS if d in lower or stem(d) in lower),
            "month": frozenset(m for m in _MONTHS if m in lower or m[:3] in lower),
            "ordinal": frozenset(lower & ORDINALS)}


def foreign(text: str) -> bool:
    """A line not in English: CJK script, or more function words of another European language
    than of English (a terse English note has few of either: "Figures: matplotlib, PDF out")."""
    if len(CJK.findall(text)) >= 4:
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


_TOKEN = re.compile(r"[€$£¥]|\d+(?:[.,:]\d+)*[A-Za-z%]*|[^\W\d_]+")


def _units(text: str) -> dict[str, set[str]]:
    """Each number of `text` with the words that say what it counts: the word before and the two
    after ("port 5432", "200 bootstrap resamples"), a currency sign or an attached unit ("€520",
    "48h", "10th"). Numbers written as words ("two hives") count too."""
    tokens = _TOKEN.findall(text.lower())
    found: dict[str, set[str]] = {}
    for index, token in enumerate(tokens):
        number = re.match(r"\d+(?:[.,:]\d+)*", token)
        value = number.group(0).replace(",", ".") if number else _NUMBER_WORDS.get(token)
        if value is None:
            continue
        context = {token[number.end():]} if number else set()
        for near in tokens[max(0, index - 1):index] + tokens[index + 1:index + 3]:
            if near in "€$£¥" or (near.isalpha() and near not in ENGLISH):
                context.add(near if not near.isalpha() else stem(near))
        found.setdefault(value, set()).update(context - {""})
    return found


def same_unit(fact: str, bullet: str, f_values: dict, b_values: dict) -> bool:
    """A new number replaces a gone one only when they count the same thing: "400 dpi" is no new
    value for "pays on the 10th". A number with no word beside it can stand for anything."""
    f_units, b_units = _units(fact), _units(bullet)
    new = [f_units.get(n, set()) for n in f_values["number"] - b_values["number"]]
    gone = [b_units.get(n, set()) for n in b_values["number"] - f_values["number"]] or \
           [b_units.get(n, set()) for n in b_values["number"]]
    if any(not units for units in new + gone):
        return True
    return any(a & b for a in new for b in gone)
