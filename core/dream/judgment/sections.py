"""Which MEMORY.md section a fact belongs in, when the model does not say (or says nonsense).

Keyword rules over the usual sections (User profile, Preferences, Decisions,
Learnings, Projects); the first rule that matches picks the section, mapped onto
the workspace's own section titles when it has them.
"""
from __future__ import annotations

import re

RULES: tuple[tuple[str, re.Pattern], ...] = (
    ("Preferences", re.compile(r"\b(prefer\w*|likes?|dislikes?|loves?|hates?|favou?rite|wants?|rather|"
                               r"always|never|drinks?|style)\b|喜欢|偏好|不要", re.I)),
    ("Decisions", re.compile(r"\b(decid\w*|decision|chose|chosen|agreed|will use|switch(ed)? to|"
                             r"settled on|picked|go with)\b|决定|选择", re.I)),
    ("User profile", re.compile(r"\b(name is|lives? in|based in|works? (as|at|for)|manager|colleague|"
                                r"born|birthday|timezone|utc[+-]|job|role)\b|同事|负责", re.I)),
    ("Learnings", re.compile(r"\b(learn\w*|lesson|turns? out|found that|bug|workaround|fix(ed)?|failed|"
                             r"cause[sd]?|because|needs?|gotcha|note)\b|发现|需要", re.I)),
    ("Projects", re.compile(r"\b(project|repo\w*|release|deploy\w*|milestone|deadline|roadmap|feature|"
                            r"task|sprint|ticket|version)\b|项目", re.I)),
)
DEFAULT = "Learnings"


def guess_section(text: str, existing: list[str], default: str = "") -> str:
    """The title to file `text` under: an existing section's own spelling when it has one.
    `default`: where it goes when no rule matches (a session fact's role section), else Learnings."""
    lower = {title.lower(): title for title in existing}
    for title, pattern in RULES:
        if pattern.search(text):
            return lower.get(title.lower(), title)
    if default:
        return lower.get(default.lower(), default)
    return lower.get(DEFAULT.lower(), existing[-1] if existing else DEFAULT)


def pick_section(proposed: str, text: str, existing: list[str]) -> str:
    """The model's section when it names one that exists, else the keyword guess."""
    wanted = proposed.strip().lower()
    for title in existing:
        if title.lower() == wanted:
            return title
    return guess_section(text, existing)
