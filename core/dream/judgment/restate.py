"""An update as a statement of what is true now.

"Switched the electricity from Octopus Agile to Octopus Tracker; Agile was too spiky"
replaces "Energy: Octopus, on the Agile tariff". MEMORY.md states the present, so the
new bullet must not carry the old value along: "from Agile", "(was 0.5%)" and the
clause about why the old value went are cut; the superseded value itself is kept
elsewhere (with the dates it was valid) for search and `reverie why`.

Which words are the old value: words of the old bullet that the fact uses only in the
parts that talk about the past. The clause that states the change ("... is now ...",
"moved to ...", "... instead") always stays.
"""
from __future__ import annotations

import re

from core.dream.judgment.similarity import words

# "from X to Y" inside a change: keep "to Y"; "instead of X", "off X": drop them.
_FROM_TO = re.compile(r"\s+from\s+(?P<old>[^;:,.()—–]+?)\s+(?=to\s)", re.IGNORECASE)
_INSTEAD_OF = re.compile(r"\s+(?:instead of|rather than|in place of)\s+(?P<old>[^;:,.()—–]+)", re.IGNORECASE)
_OFF = re.compile(r"\s+(?:off|away from)\s+(?P<old>[A-Z][^;:,.()—–]*?)(?=[;:,.()—–]|$)")
# "replaced X with Y" states the change with the old value first: "switched to Y".
_REPLACED = re.compile(r"\b(?:replaced|swapped|traded|dropped|ditched)\s+(?P<old>[^;:,.()—–]+?)\s+(?:with|for)\s+",
                       re.IGNORECASE)
_PARENTHESES = re.compile(r"\s*\((?P<inner>[^()]*)\)")
_WAS = re.compile(r"^(?:was|were|previously|formerly|before|used to be|instead of|not)\b", re.IGNORECASE)
_CLAUSE_SPLIT = re.compile(r"(\s*;\s*|\s*:\s+|\.\s+(?=[A-Z])|\s+[—–]\s+|[—–]\s+|,\s+(?:so|but|and so|which means)\s+)")
# A clause that states the present ...
_NEW_CUE = re.compile(
    r"\b(?:now|from now on|instead|new|moved|moves|switched|changed|raised|lowered|increased|reduced|bumped|"
    r"shifted|renamed|replaced|takes over|took over|taken over|has taken|handed|after all|from (?:v?\d|next)|"
    r"starting|only)\b", re.IGNORECASE)
# ... one that only says the old value went ...
_OLD_CUE = re.compile(
    r"\b(?:no longer|not any more|anymore|gone off|given up|gave up|has left|have left|left for|is leaving|"
    r"retired|declined|is off|are off|stopped|quit|dropped|was too|were too|is gone|are gone|sold|ended|"
    r"talked \w+ out of|went back|changed (?:\w+ )?mind|closed|has closed|shut down|went bust)\b", re.IGNORECASE)
# ... and one that says what did not change, which stays.
_SAME_CUE = re.compile(r"\b(?:stays|stay|still|same|unchanged|as before|carries on|continues|as they were)\b",
                       re.IGNORECASE)


_PRONOUN_START = re.compile(r"^(?:it|that|this|which|he|she|they)\b(?!'s \w+ now)", re.IGNORECASE)


def _clauses(text: str) -> tuple[list[str], list[str]]:
    parts = _CLAUSE_SPLIT.split(text)
    return [p.strip() for p in parts[0::2]], [g.strip() for g in parts[1::2]]


def _cut_old_parts(text: str, old_bullet: frozenset[str]) -> str:
    """Remove "from X" / "instead of X" / "(was X)" where X names the old bullet's words."""
    text = _REPLACED.sub(lambda m: "switched to " if words(m.group("old")) & old_bullet else m.group(0), text)
    text = _FROM_TO.sub(lambda m: " " if words(m.group("old")) & old_bullet else m.group(0), text)
    text = _OFF.sub(lambda m: " " if words(m.group("old")) & old_bullet else m.group(0), text)
    text = _OFF.sub(lambda m: " " if words(m.group("old")) & old_bullet else m.group(0), text)
    text = _INSTEAD_OF.sub(lambda m: "" if words(m.group("old")) & old_bullet else m.group(0), text)
    return _PARENTHESES.sub(lambda m: "" if (_WAS.match(m.group("inner").strip())
                                             or words(m.group("inner")) & old_bullet) else m.group(0), text)


def _present_clauses(clauses: list[str], glue: list[str]) -> set[int]:
    """Which clauses state the present: those with a change cue (and what follows their colon);
    when none has one, every clause that does not only say the old value went."""
    cued = set()
    for index, clause in enumerate(clauses):
        if _NEW_CUE.search(clause) and not (_OLD_CUE.search(clause) and not _NEW_CUE.search(
                _OLD_CUE.sub("", clause))):
            cued.add(index)
            if index < len(glue) and glue[index] == ":":
                cued.add(index + 1)
    if not cued:
        cued = {i for i, c in enumerate(clauses) if not _OLD_CUE.search(c)}
    return cued


_HANDED = re.compile(r"^(?P<old>[^,;:]+?)\s+(?:has\s+|have\s+)?(?:handed|passed|given)\s+(?:over\s+)?"
                     r"(?P<what>[^,;:]+?)\s+to\s+(?P<new>[^,;:]+?)(?P<rest>(?:[,;:].*)?)$", re.IGNORECASE)


def current_statement(fact: str, old: str) -> str:
    """`fact` without what only states `old`'s value; the fact itself when nothing needs cutting
    or cutting would leave nothing of the change."""
    old_bullet = words(old)
    handed = _HANDED.match(fact.strip())
    if handed and words(handed.group("old")) & old_bullet:
        # "Helen has handed the coordinator job to Sione, who ..." -> "Sione has the coordinator job, who ..."
        fact = f"{handed.group('new')} has {handed.group('what')}{handed.group('rest')}"
    text = _cut_old_parts(fact, old_bullet)
    clauses, glue = _clauses(text)
    present = _present_clauses(clauses, glue)
    present_words: set[str] = set()
    for index in present:
        present_words |= words(clauses[index])
    stale = old_bullet - present_words
    kept: list[str] = []
    dropped_subject = ""
    previous_dropped = False
    for index, clause in enumerate(clauses):
        if not clause:
            continue
        keep = index in present or bool(_SAME_CUE.search(clause))
        if not keep:
            stale_here = bool(words(clause) & stale) or (_OLD_CUE.search(clause) is not None)
            keep = not stale_here and not (previous_dropped and _PRONOUN_START.match(clause))
        if not keep:
            previous_dropped = True
            if not kept and not dropped_subject:
                dropped_subject = _subject(clause)
            continue
        previous_dropped = False
        joiner = glue[index - 1] if index and kept else ""
        kept.append(("" if not kept else ("; " if joiner in (";", ".", "") else f"{joiner} ")) + clause)
    result = "".join(kept).strip(" ;,:")
    if not result or not (words(result) - old_bullet):
        return fact.strip()
    if dropped_subject and dropped_subject.lower() not in result.lower() and re.match(
            r"^(?:it|that|this|he|she|they)\b", result, re.IGNORECASE):
        result = f"{dropped_subject}: {result}"     # "it's flat whites now" needs to say whose
    return _capitalise(result)


def _subject(clause: str) -> str:
    """A leading name ("Daniel has given up oolong" -> "Daniel"), or ""."""
    match = re.match(r"^((?:[A-Z][\w'’.-]+)(?:\s+[A-Z][\w'’.-]+)?)\s+(?:has|had|is|was|wants|moved|switched|"
                     r"changed|gave|replaced|dropped|stopped|left|declined)\b", clause)
    return match.group(1) if match else ""


def _capitalise(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text
