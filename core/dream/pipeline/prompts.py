"""What the model is asked during a dream, and how its replies are read.

The model sees compact inputs (the new facts, the few existing bullets related to
each) and answers with small JSON: themes for Orient, one relation per fact for
Consolidate (new, duplicate of B2, update of B1). It writes no text: the bullet's
words are the fact's own, so a small model can neither garble nor invent one, and its
reply stays a few tokens long; core/dream/pipeline/judge.py accepts an answer only when the
rules find it possible. Schemas are small on purpose: constrained decoding costs
a lot on large vocabularies. No string length bounds: a grammar for "at most 240
characters" nests 240 optional rules; lengths are capped when the reply is read. Replies are read defensively; anything malformed is
dropped here and the deterministic fallback decides instead.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass

from core.store.memory_md import strip_comments

OPS = ("new", "duplicate", "update")
THEMES = ("goals", "decisions", "patterns", "preferences")


@dataclass(frozen=True)
class ModelOp:
    fact: int            # 1-based number of the fact in the batch
    op: str              # new | duplicate | update
    target: str          # "B1".. handle of a shown bullet, or ""


@dataclass(frozen=True)
class Budget:
    """MEMORY.md's character budget (told to the model; met by a per-dream limit on new facts and a
    condense proposal, never by cutting the person's lines) and its size now."""

    limit: int
    used: int

    def sentence(self) -> str:
        if not self.limit:
            return ""
        return (f"MEMORY.md must stay under {self.limit:,} characters (now {self.used:,}): prefer duplicate and "
                f"update over new when a bullet already holds the fact; only the best-supported new facts are added.")


@dataclass(frozen=True)
class BatchFact:
    number: int
    text: str
    related: tuple[tuple[str, str], ...]   # (handle, bullet text)


CONTEXT_CHARS = 1500   # of USER.md in the Orient prompt: who the person is, not the whole file


def orient_messages(sections: list[str], digest: str, budget: Budget | None = None, context: str = "") -> list[dict]:
    system = ("You read an AI agent's new notes and name what matters for its long-term memory. "
              + (budget.sentence() + " " if budget and budget.limit else "") + "Reply with JSON only.")
    about = " ".join(strip_comments(context).split())[:CONTEXT_CHARS]
    user = ((f"About the person (USER.md):\n{about}\n\n" if about else "")
            + f"Memory sections: {', '.join(sections) or 'none yet'}\n\nNew notes:\n{digest}\n\n"
            "Name up to 2 short items for each of: goals, decisions, patterns, preferences.")
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def orient_schema() -> dict:
    item = {"type": "array", "items": {"type": "string"}, "maxItems": 2}
    return {"type": "object", "properties": {name: item for name in THEMES}, "required": list(THEMES)}


def read_orient(reply) -> dict[str, list[str]]:
    value = _value(reply)
    themes: dict[str, list[str]] = {name: [] for name in THEMES}
    if isinstance(value, dict):
        for name in THEMES:
            items = value.get(name)
            if isinstance(items, list):
                cleaned = (" ".join(str(i).split())[:120] for i in items if str(i).strip())
                themes[name] = list(dict.fromkeys(cleaned))[:2]   # small models repeat themselves
    return themes


def consolidate_messages(sections: list[str], themes: dict[str, list[str]], facts: list[BatchFact],
                         budget: Budget | None = None) -> list[dict]:
    system = ("You maintain MEMORY.md, an AI agent's long-term memory: one fact per bullet. "
              "For each new fact say how it relates to the bullets shown under it:\n"
              "new - no bullet says it.\n"
              "duplicate - a bullet already says the same thing (maybe in other words or another language); "
              "target it.\n"
              "update - the fact changes what a bullet says (a new value, an opposite preference, "
              "a reversed decision); target it.\n"
              + (budget.sentence() + "\n" if budget and budget.limit else "")
              + "Reply with JSON only.")
    lines = []
    focus = [item for name in THEMES for item in themes.get(name, [])]
    if focus:
        lines.append("Themes of the new notes: " + "; ".join(focus))
        lines.append("")
    for fact in facts:
        lines.append(f"Fact {fact.number}: {fact.text}")
        for handle, text in fact.related:
            lines.append(f"  {handle}: {text}")
    return [{"role": "system", "content": system}, {"role": "user", "content": "\n".join(lines)}]


def consolidate_schema(n_facts: int, handles: list[str]) -> dict:
    op = {"type": "object",
          "properties": {"fact": {"type": "integer", "enum": list(range(1, n_facts + 1))},
                         "relation": {"type": "string", "enum": list(OPS)},
                         "target": {"type": "string", "enum": [""] + handles}},
          "required": ["fact", "relation", "target"]}
    return {"type": "object", "properties": {"ops": {"type": "array", "items": op, "maxItems": n_facts}},
            "required": ["ops"]}


def read_ops(reply) -> list[ModelOp]:
    value = _value(reply)
    items = value.get("ops") if isinstance(value, dict) else value if isinstance(value, list) else None
    ops: list[ModelOp] = []
    for item in items or []:
        if not isinstance(item, dict):
            continue
        try:
            number = int(item.get("fact"))
        except (TypeError, ValueError):
            continue
        name = str(item.get("relation") or item.get("op") or "").strip().lower()
        if name not in OPS:
            continue
        ops.append(ModelOp(fact=number, op=name, target=str(item.get("target") or "").strip()))
    return ops


def _value(reply):
    """The JSON value of a completion: `.parsed` when the engine validated it, else the text."""
    parsed = getattr(reply, "parsed", None)
    if parsed is not None:
        return parsed
    text = getattr(reply, "text", reply if isinstance(reply, str) else "")
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        match = re.search(r"\{.*\}", text or "", re.DOTALL)
        if match:
            try:
                return json.loads(match.group(0))
            except ValueError:
                return None
    return None
