"""When a dream may rewrite a line the person wrote: only on strong evidence that the fact is a new
value of that line's slot. Otherwise the fact is added beside it (or is a duplicate), never a rewrite.

Why: the word rules and the head read a long, chatty log line that shares a subject word with a
curated rule ("Newsletter sends need strict daily caps" / "Checked that Priya now shows in the
send log with message id 7f3a…") as an update of it, and a person's line rewritten by a wrong update is
a line lost. A dream's own lines (with its comment) are cheap to rewrite; the person's are not.

The evidence is read from the shape of the two texts, in any language, not from words:
- the fact covers the line's subject: at least COVER of the line's content words (word stems for
  Latin script, character pairs for CJK; numbers, code spans, paths, URLs, addresses and dashed or
  dotted names left out: they are values)
  are in the fact; or the fact says a name the line holds is gone ("dropped PagerDuty for Grafana
  OnCall" against "... paged through PagerDuty": the word rules' old side, a name not a word);
- the fact is about the line's size: at most LONGER times its length, in at most CLAUSES clauses.
  A new value of a slot is stated in about as many words as the old one; a log line several times
  longer, or a run of clauses ("did X; patched Y; verified Z"), is about more;
- when both are "label: value" lines (the label before ":" or "：", after any "heading— " the
  extraction put in front), the fact's label holds at least half of the line's label: "磁盘空间: 58%"
  and "系统自检— 磁盘空间: 61%" are one slot, "文件大小: 1633字节" and "备份统计— 平均大小: ~260KB" are two.

Thresholds, chosen on the labelled corpus (core/dream/judgment/corpus/: every non-pinned "update"
pair, pools' matches included), never on real workspaces (those are the check):
COVER is the corpus updates' 10th percentile of coverage (0.144, rounded down), LONGER and CLAUSES
their 99th percentiles of the length ratio and of the clause count, so 90% of the corpus updates
pass (`corpus_thresholds()` recomputes them; tests/dream/test_persons_lines_evidence.py checks the
shipped values still let at least 80% of the corpus updates through). The rest are terse lines that
drop the subject ("600dpi.") or name none of the line's words: the dream adds those beside the
person's line, and the person sees both.
"""
from __future__ import annotations

import re

from core.dream.judgment import signals, word_relations
from core.dream.judgment.similarity import words
from core.dream.judgment.wording import CUE_WORDS, ENGLISH, anchors, stem
from core.store.memory_md import strip_comments

COVER = 0.14
LONGER = 6.5
CLAUSES = 3
LABEL_COVER = 0.5

_MARKUP = re.compile(r"[*_`~#>|]+")
_CLAUSE = re.compile(r"\s*[;；。！!？?]\s*|\.\s+|\s+[—–]\s*|[—–]\s+")
# "label: value", the label short, after any "heading— " the extraction put in front of it.
_LABEL = re.compile(r"^(?:.*[—–]\s*)?(?P<label>[^:：—–]{1,24}?)\s*(?:(?<!\d):|：)\s*\S")


def _text(line: str) -> str:
    return _MARKUP.sub(" ", strip_comments(signals.body(line))).strip()


# Identifiers: code spans, paths, URLs, e-mail addresses, dotted or dashed names ("db-stg-02.internal",
# "/root/.openclaw/workspace", "openai-codex/gpt-5.3"). They are values a line holds, not its subject,
# and split into words they would make a path "share" the subject of any line about the same tool.
# An identifier ends at a space and at CJK script or punctuation, which need no space before them
# ("06:30-14:00、17:00-21:00，每周一店休" holds two ranges and then the line's subject).
_NOT_SPACE = r"[^\s\u3000-\u303f\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uff00-\uffef]"
_IDENTIFIER = re.compile(rf"`[^`]*`|{_NOT_SPACE}*[/\\@]{_NOT_SPACE}*|{_NOT_SPACE}+\.[A-Za-z]\w*{_NOT_SPACE}*|"
                         rf"{_NOT_SPACE}*\w[-_]\w{_NOT_SPACE}*")


def content_words(text: str) -> frozenset[str]:
    """The words that name what a line is about: stems of its words (character pairs in CJK),
    without numbers and identifiers (those are its values)."""
    bare = _IDENTIFIER.sub(" ", strip_comments(signals.body(text)))
    return frozenset(stem(w) for w in words(_MARKUP.sub(" ", bare)) if not any(ch.isdigit() for ch in w))


def coverage(fact: str, line: str) -> float:
    """The share of the line's content words the fact has."""
    mine = content_words(line)
    return len(mine & content_words(fact)) / len(mine) if mine else 0.0


def length_ratio(fact: str, line: str) -> float:
    return len(_text(fact)) / max(len(_text(line)), 1)


def names_gone(fact: str, line: str) -> frozenset[str]:
    """Names (not plain words, not numbers) of the line that the fact says went: "from X", "dropped X
    for", "X has left"."""
    gone = word_relations.gone_words(fact)
    if not gone:
        return frozenset()
    return gone & {n for a in anchors(line) if not a[:1].isdigit() for n in (a, stem(a))}


# How much of the bullet's slot (its content words that are not names) a fact must hold to name it.
SLOT_COVER = 0.5


# A capitalised word in any Latin script ("Peiró", "Inés", "Ibáñez": signals' names are ASCII).
_CAPITALISED = re.compile(r"(?<![\w'’])[A-ZÀ-ÖØ-Þ][^\W\d_]+")
_FIRST_WORD = re.compile(r"[^\w]*([^\W\d_]+)")
_TITLE = re.compile(r"(?<![\w])([A-ZÀ-Þ][^\W\d_]{0,3})\.(?=\s+[A-ZÀ-Þ])")


def _names(text: str) -> frozenset[str]:
    """Names a text holds (signals.values: mixed-case or numbered words, Latin words in CJK; and any
    capitalised word), without English function and change words. The first word counts only when
    its case says it is a name ("memoQ", "CAT"): a sentence starts with a capital in every language
    ("Spends every August …", "Comme chaque année …")."""
    body = signals.body(text)
    found = set(signals.values(body)["names"]) | {m.lower() for m in _CAPITALISED.findall(body)}
    first = _FIRST_WORD.match(body)
    if first and first.group(1)[1:].islower():
        found.discard(first.group(1).lower())
    # A weekday is a value of its own kind (signals.value_changed reads it in every language), and a
    # title ("Dr.", "Mrs.", "Sra.") stands before a name, it is none.
    found -= {m.lower() for m in _TITLE.findall(body)} | {d.lower() for d in signals.weekday_names(body)}
    return frozenset(n for n in found if n not in ENGLISH and stem(n) not in CUE_WORDS and not n.isdigit())


def slot_renamed(bullet: str, fact: str) -> bool:
    """The fact puts another name in the bullet's slot: a name of the bullet is gone from it, it names
    one the bullet lacks, and it holds at least SLOT_COVER of the bullet's slot (its content words
    but the names gone) ("CAT tool: Trados Studio 2022" / "memoQ 11 is my main CAT tool now"; "Head
    nurse Inés Roca makes the rota" / "Carla Peiró is head nurse from Monday"). Two lines about the
    same named thing ("Dave asked to redo the Photos edit window" / "Dave approved: rename the Dropbox
    photos") keep its name; two about different things share no slot."""
    low_bullet, low_fact = bullet.lower(), fact.lower()
    gone = {n for n in _names(bullet) if n not in low_fact}
    new = {n for n in _names(fact) if n not in low_bullet}
    if not gone or not new:
        return False
    slot = content_words(bullet) - {stem(n) for n in gone} - gone
    return bool(slot) and len(slot & content_words(fact)) / len(slot) >= SLOT_COVER


def clauses(text: str) -> int:
    return len([c for c in _CLAUSE.split(_text(text)) if len(c.strip()) >= 3])


def labelled_value(text: str) -> tuple[str, str]:
    """(label, value) of a "label: value" line (("", "") for any other line)."""
    clean = _text(text)
    match = _LABEL.match(clean)
    if not match:
        return "", ""
    return match.group("label").strip(), clean[match.end("label"):].lstrip(" :：")


# Two lines under one label whose values share under RECORD_OVERLAP of their character bigrams are
# two records of one list ("按钮: ⚔️ 攻; 说明: 普通攻击" / "按钮: 🛡️ 防; 说明: 本回合减伤"), not one fact said twice.
RECORD_OVERLAP = 0.5


def another_record(bullet: str, fact: str) -> bool:
    """The fact and the bullet are two records under one label, with values that differ."""
    (mine, value), (theirs, other) = labelled_value(bullet), labelled_value(fact)
    if not mine or mine.casefold() != theirs.casefold():
        return False
    a, b = signals.ngrams(value, (2,)), signals.ngrams(other, (2,))
    return bool(a and b) and len(a & b) / len(a | b) < RECORD_OVERLAP


def label(text: str) -> str:
    """The label of a "label: value" line ("" for any other line)."""
    return labelled_value(text)[0]


def why_not_replace(fact: str, line: str) -> str:
    """"" when the fact may replace the person's `line`; else why not, in words a person can check."""
    covered, ratio, parts = coverage(fact, line), length_ratio(fact, line), clauses(fact)
    if covered < COVER and not names_gone(fact, line):
        return f"it shares too little of the line's subject ({covered:.2f} of its words)"
    if ratio > LONGER or parts > CLAUSES:
        return f"it is {ratio:.1f} times as long as the line, in {parts} clauses: about more than its value"
    mine, theirs = label(line), label(fact)
    if mine and theirs and coverage(theirs, mine) < LABEL_COVER:
        return f"its label \"{theirs}\" is not the line's \"{mine}\""
    return ""


# What takes the person's line's place is the fact restated as what is true now (restate.py), which
# drops the old value on purpose: "Replaced Van Acker with Printhuis Lootens for proofs; Van Acker's
# colour drifted" -> "Switched to Printhuis Lootens for proofs". A spurious change cue inside a fact
# ("Content check: reads 20KB, searches for 'no longer open'") can leave almost nothing: "Content
# check". Such a text does not take the person's line's place: it keeps under KEPT of the fact's
# content words AND holds fewer than WORDS of them. On the corpus' updates 0.4% keep under 0.4 and
# 1.3% hold under 3 words (the terse "Mon/Wed/Fri at 7:00 from next week" kind).
KEPT = 0.4
WORDS = 3


def why_not_written(written: str, fact: str) -> str:
    """"" when `written` (the fact restated) still says something of the fact; else why not."""
    said, mine = content_words(fact), content_words(written)
    kept = len(mine & said) / len(said) if said else 1.0
    if kept < KEPT and len(mine) < WORDS:
        return f"restated as \"{written[:40]}\", it keeps {kept:.2f} of the fact's words"
    return ""


def corpus_thresholds(pairs) -> tuple[float, float, float]:
    """(COVER, LONGER, CLAUSES) from labelled (bullet, line) update pairs: the percentiles named above."""
    import numpy as np

    covered = [coverage(line, bullet) for bullet, line in pairs]
    ratios = [length_ratio(line, bullet) for bullet, line in pairs]
    counts = [clauses(line) for _bullet, line in pairs]
    return (float(np.quantile(covered, 0.10)), float(np.quantile(ratios, 0.99)),
            float(np.quantile(counts, 0.99)))
