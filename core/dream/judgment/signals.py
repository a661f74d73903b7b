"""Language-independent signals of a text and of a pair of texts, as numbers for the learned heads.

No phrase lists: a value is recognised by its shape (digits with a unit, a clock time, a date, a
weekday, an identifier, a capitalised or Latin name inside CJK text), and negation by the small
closed set of negators each language has. Character n-grams (hashed into a fixed number of slots)
carry the rest: they work for Chinese and Japanese, where a word tokenizer or an English sentence
model sees nothing, and they let the heads learn change words ("改为", "switched", "不再", "now")
from the corpus instead of from a list.
"""
from __future__ import annotations

import re
import zlib

import numpy as np

from core.dream.judgment.similarity import CJK, CJK_CHARS

HASH_SLOTS = 2048

# A number and its unit: a currency sign before it ("€42", "$ 1,200"), else what follows it: a sign, a
# Latin word's first letters ("15 min", "3 lines") or ONE CJK character ("14元一碗" is 14 of 元: a CJK
# word has no spaces to end it, so more characters would make "元了" and "元一碗" two units).
_CJK_LETTER = "\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af"
_NUMBER_UNIT = re.compile(
    r"(?P<sign>[€$£¥￥])\s?(?P<signed>\d+(?:[.,:]\d+)*)|"
    rf"(?P<number>\d+(?:[.,:]\d+)*)\s*(?P<unit>[%€$£¥￥]|[^\W\d_{_CJK_LETTER}]{{1,6}}|[{_CJK_LETTER}])?",
    re.UNICODE)
_TIME = re.compile(r"\b\d{1,2}[:.h]\d{2}\b|\b\d{1,2}\s*(?:am|pm)\b|[上下]午\s*\d{1,2}\s*[点時时]|\d{1,2}\s*[点時时](?:半|\d+分)?",
                   re.IGNORECASE)
_DATE = re.compile(r"\b\d{1,4}[/-]\d{1,2}(?:[/-]\d{1,4})?\b|\d{1,2}\s*月\s*\d{1,2}\s*[日号]|\d{1,2}月|"
                   r"\b\d{1,2}(?:st|nd|rd|th)?\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b|"
                   r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\s+\d{1,2}\b", re.IGNORECASE)
# Weekdays: these are the calendar's own names (closed sets), not phrases.
_DAY = re.compile(r"\b(?:mon|tue|wed|thu|fri|sat|sun)(?:day|sday|s|nesday|rsday|urday)?s?\b|"
                  r"\b(?:montag|dienstag|mittwoch|donnerstag|freitag|samstag|sonntag|lundi|mardi|mercredi|jeudi|"
                  r"vendredi|samedi|dimanche|lunes|martes|miércoles|jueves|viernes|sábado|domingo|lunedì|martedì|"
                  r"mercoledì|giovedì|venerdì|sabato|segunda|terça|quarta|quinta|sexta)s?\b|"
                  r"(?:周|星期|礼拜)[一二三四五六日天]|[月火水木金土日]曜", re.IGNORECASE)
_IDENT = re.compile(r"[A-Za-z][\w.+#-]*\d[\w.+-]*|[A-Za-z]+[_./-][\w./-]+|\b[a-z]+[A-Z]\w*|\b[A-Z][A-Za-z'’-]+\b")
_LATIN_IN_CJK = re.compile(r"[A-Za-z][\w.+#-]*")
# Negators: a closed class in every language (not phrases about any subject).
_NEGATION = re.compile(r"\b(?:not|no|never|none|nothing|nobody|without|nicht|kein\w*|nie|niemals|ne|pas|jamais|"
                       r"sans|nunca|sin|nada|non|mai|senza|não|nem)\b|n['’]t\b|[不没沒别別勿禁無无莫未]|ない|ません|ず",
                       re.IGNORECASE)
_MARKER = re.compile(r"^\s*(?:[-*+]\s+|\d+[.)]\s+|\[[^\]]{1,20}\]\s*)+")


# Each weekday's names in the languages _DAY reads, by the day's number (Monday 1): "sábados",
# "samedi", "Saturdays", "周六", "土曜" are one day, so a restatement in another language keeps its value.
_WEEKDAYS = {
    1: "mon montag lundi lunes lunedì segunda 一 月", 2: "tue dienstag mardi martes martedì terça 二 火",
    3: "wed mittwoch mercredi miércoles mercoledì quarta 三 水", 4: "thu donnerstag jeudi jueves giovedì quinta 四 木",
    5: "fri freitag vendredi viernes venerdì sexta 五 金", 6: "sat samstag samedi sábado sabato 六 土",
    7: "sun sonntag dimanche domingo 日 天"}
_DAY_NUMBER = {name: day for day, names in _WEEKDAYS.items() for name in names.split()}


def weekday_names(text: str) -> list[str]:
    """The weekday names a text holds, as written."""
    return _DAY.findall(text)


def weekday(name: str) -> str:
    """The number of the weekday a matched name (_DAY) says, as text; the name itself if unknown."""
    low = name.lower()
    for key in (low, low.rstrip("s"), low[:3], low[-1:], low[:1]):
        if key in _DAY_NUMBER:
            return str(_DAY_NUMBER[key])
    return low[:3]


def body(text: str) -> str:
    """The text without a bullet marker or a leading time stamp ("- [14:02] ")."""
    return _MARKER.sub("", text).strip()


def cjk_share(text: str) -> float:
    letters = [c for c in text if c.isalpha()]
    return sum(bool(CJK.match(c)) for c in letters) / max(len(letters), 1)


# The word rules (word_kinds.py, word_relations.py) are phrases of English; in a line whose letters are
# mostly Chinese, Japanese or Korean they find nothing and answer by default (durable, new). On the
# corpus, leave one domain out, those lines are judged better by the learned heads (docs/benchmarks.md).
RULES_UNREAD_CJK = 0.3


def rules_unread(text: str) -> bool:
    """A line the word rules cannot read: at least RULES_UNREAD_CJK of its letters are CJK."""
    return cjk_share(text) >= RULES_UNREAD_CJK


def ngrams(text: str, sizes=(1, 2, 3)) -> set[str]:
    """Character n-grams of the lower-cased text with its spacing squeezed (CJK and Latin alike)."""
    t = " ".join(text.lower().split())
    return {t[i:i + n] for n in sizes for i in range(len(t) - n + 1) if t[i:i + n].strip()}


def hashed(grams, slots: int = HASH_SLOTS) -> np.ndarray:
    """A bag of n-grams in `slots` counts (crc32: the same slot in every process and on every machine),
    scaled to unit length."""
    vector = np.zeros(slots, dtype=np.float32)
    for gram in grams:
        vector[zlib.crc32(gram.encode("utf-8")) % slots] += 1.0
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm else vector


def values(text: str) -> dict[str, set[str]]:
    t = body(text)
    numbers: dict[str, set[str]] = {}
    for match in _NUMBER_UNIT.finditer(t):
        number, unit = match["signed"] or match["number"], match["sign"] or match["unit"] or ""
        numbers.setdefault(unit.replace("￥", "¥").lower(), set()).add(number.replace(",", "."))
    names = {m.lower() for m in _IDENT.findall(t)}
    if CJK.search(t):
        names |= {m.lower() for m in _LATIN_IN_CJK.findall(t)}
    return {"numbers": {n for group in numbers.values() for n in group},
            "units": numbers,
            "times": {m.lower().replace(" ", "") for m in _TIME.findall(t)},
            "dates": {m.lower().replace(" ", "") for m in _DATE.findall(t)},
            "days": {weekday(m) for m in _DAY.findall(t)},
            "names": names}


def negations(text: str) -> int:
    return len(_NEGATION.findall(body(text)))


def _differ(a: set, b: set) -> float:
    return float(bool(a) and bool(b) and a != b)


def jaccard(a: set, b: set) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


def _within(a: set, b: set) -> float:
    return len(a & b) / len(a) if a else 1.0


def line_signals(text: str) -> np.ndarray:
    """Shape signals of one line (its markers kept: "- ", "?", "TODO:", "[14:02]" are shape)."""
    t = body(text)
    v = values(text)
    return np.asarray([
        min(len(t), 600) / 600, float(len(t) < 25), cjk_share(t),
        float(t.rstrip().endswith(("?", "？"))), float(":" in t[:24] or "：" in t[:24]),
        float(bool(v["numbers"])), float(bool(v["times"])), float(bool(v["dates"])), float(bool(v["days"])),
        min(negations(text), 3) / 3, float(text.lstrip().startswith("|")),
        float(bool(re.match(r"\s*(?:[-*+]\s+)?\[[^\]]{1,20}\]", text))),
    ], dtype=np.float32)


LINE_SIGNALS = 12


def pair_signals(bullet: str, line: str) -> np.ndarray:
    """How a new line differs from a bullet, by value type; the overlap of their characters."""
    a, b = values(bullet), values(line)
    ga, gb = ngrams(body(bullet), (2, 3)), ngrams(body(line), (2, 3))
    same_unit_change = float(any(u and a["units"].get(u) and b["units"].get(u) and a["units"][u] != b["units"][u]
                                 for u in set(a["units"]) & set(b["units"])))
    la, lb = max(len(body(bullet)), 1), max(len(body(line)), 1)
    na, nb = negations(bullet), negations(line)
    return np.asarray([
        same_unit_change, _differ(a["numbers"], b["numbers"]), _within(b["numbers"], a["numbers"]),
        _within(a["numbers"], b["numbers"]),
        _differ(a["times"], b["times"]), _differ(a["dates"], b["dates"]), _differ(a["days"], b["days"]),
        jaccard(a["names"], b["names"]), _within(b["names"], a["names"]), _within(a["names"], b["names"]),
        float(bool(na)), float(bool(nb)), float(bool(na) != bool(nb)),
        min(lb / la, 4.0) / 4, min(la / lb, 4.0) / 4,
        jaccard(ga, gb), _within(gb, ga), _within(ga, gb),
        abs(cjk_share(bullet) - cjk_share(line)),
    ], dtype=np.float32)


PAIR_SIGNALS = 19


# ----- numbered siblings --------------------------------------------------------------------------
# A token: a run of letters (one CJK character at a time), or a run with digits in it ("21", "rack-021",
# "S3", "3号"). A name's number ("valve 3", "Service 21", "第3条") is a label, not a value.
_TOKEN = re.compile(rf"[A-Za-z0-9][\w.:+#/-]*[%°]?|[{CJK_CHARS}]|[^\W\d_]+")
_DIGIT = re.compile(r"\d")


def _tokens(text: str) -> list[str]:
    return [t.lower().rstrip(".:") for t in _TOKEN.findall(body(text))]


def _is_value(token: str) -> bool:
    """A number that states a value, not a name: a time, a date, a decimal, a percentage or degrees,
    or a number with its unit attached ("600dpi", "5ms")."""
    return bool(_TIME.fullmatch(token) or _DATE.fullmatch(token)
                or re.fullmatch(r"\d+(?:[.,]\d+)?(?:[%°]|[a-z]{1,4})?", token) and not token.isdigit()
                or re.search(r"\d[%°]$", token))


def _labels(text: str) -> dict[str, set[str]]:
    """Numbered names of a text: the word before an integer ("valve" -> {"3"}), and an identifier's
    letters ("rack-021" -> "rack-#" -> {"021"}), for the first few tokens (where a line names its
    subject)."""
    tokens = _tokens(text)
    found: dict[str, set[str]] = {}
    for i, token in enumerate(tokens[:max(4, len(tokens) // 2 + 1)]):
        if not _DIGIT.search(token) or _is_value(token):
            continue
        if token.isdigit() and i > 0 and not _DIGIT.search(tokens[i - 1]):
            found.setdefault(tokens[i - 1], set()).add(token)
        elif not token.isdigit():
            found.setdefault(re.sub(r"\d+", "#", token), set()).add(token)
    return found


def numbered_siblings(a: str, b: str) -> bool:
    """Two lines about different members of one numbered set ("valve 3" / "valve 4", "Service 21 runs
    on rack-021" / "Service 22 runs on rack-022", "line 0" / "line 1", "3号阀门" / "4号阀门"), told
    apart by shape alone: either they differ only in tokens with digits that are not values (times,
    dates, decimals), or both name their subject with one label and different numbers. A sentence
    model sees such lines as the same sentence, so its reading of them as one fact is no evidence."""
    ta, tb = _tokens(a), _tokens(b)
    if len(ta) == len(tb) and ta != tb:
        differing = [(x, y) for x, y in zip(ta, tb) if x != y]
        if all(_DIGIT.search(x) and _DIGIT.search(y) and not _is_value(x) and not _is_value(y)
               for x, y in differing):
            return True
    la, lb = _labels(a), _labels(b)
    return any(la[label].isdisjoint(lb[label]) for label in set(la) & set(lb))


def value_slots(a: dict, b: dict):
    """(a's values, b's values) of each kind of value `a` (values() of one text) may state: its times,
    days and dates, then its numbers of each unit beside b's numbers of that unit. Where b states no
    number of a unit, its bare numbers stand in ("涨到 4,500" beside "月薪 4,200 元": a sentence names
    the unit once, or not at all when the subject makes it plain); a clock time is no bare number."""
    for kind in ("times", "days", "dates"):
        yield a[kind], b[kind]
    bare = {n for n in b["units"].get("", set()) if ":" not in n}
    for unit, numbers in a["units"].items():
        yield numbers, b["units"].get(unit) or (bare if unit else b["units"].get("", set()))


def value_changed(bullet: str, line: str) -> bool:
    """The line gives another value of a kind the bullet states: numbers of one unit, times, days or
    dates ("£24 an hour" -> "£30 an hour", "299 元" -> "399 元", "Mondays" -> "Wednesdays"). Language
    independent evidence that the line is a new value of the bullet's slot, not a remark that merely
    shares a word with it."""
    return any(mine and theirs - mine for mine, theirs in value_slots(values(bullet), values(line)))


# ----- a log line's own time stamp ----------------------------------------------------------------
# "- 14:32 Went through the palette …": the dream's extraction drops such a stamp before it judges a
# fact (pipeline/extraction.py); a corpus line keeps it, and as a "time" it would read as a new value
# of a bullet that states a time. Only a stamp followed by a word is dropped ("9:30" alone stays).
_STAMP = re.compile(r"^\d{1,2}:\d{2}(?::\d{2})?\s*(?:[AaPp][Mm])?\s*[-–—|]?\s+(?=\w)")


def unstamped(text: str) -> str:
    """body(text) without a leading bare clock time."""
    return _STAMP.sub("", body(text), count=1)
