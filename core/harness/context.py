"""The context builder: the system prompt of every model call, and the messages around it.

    system = base prompt
           + MEMORY.md (provenance comments stripped, within its token budget)
           + the session cache's recent summaries (short-term memory)
           + the attention anchor, last, where a model attends most

    messages = [system] + the conversation
             + the memory lines recalled for the person's last message (core/harness/recall.py),
               after the conversation, where a small model reads them right before it answers

Every N steps the anchor is also re-injected as a fresh message after the
conversation, so a long tool loop does not forget what it is for.
"""
from __future__ import annotations

from core.config import Settings
from core.harness.anchor import Anchor
from core.harness.messages import Message
from core.harness.transcript import clip
from core.store.memory_md import strip_comments
from core.tokens import count_tokens, truncate_to_tokens

ANCHOR_REMINDER = "[Reminder of the task: keep to it]\n"


def within_tokens(text: str, budget: int, count, note: str) -> str:
    """`text` cut at a line boundary to fit `budget` tokens, with a note saying more exists."""
    if count(text) <= budget:
        return text
    cut = truncate_to_tokens(text, max(0, budget - 24))
    if "\n" in cut:
        cut = cut[: cut.rfind("\n")]
    return cut.rstrip() + f"\n{note}"


class ContextBuilder:
    def __init__(self, workspace, base_prompt: str, *, settings: Settings | None = None, count=None,
                 window: int = 8192):
        self.ws = workspace
        self.base_prompt = base_prompt.strip()
        self.settings = settings or workspace.settings
        self.count = count or count_tokens
        self.window = window

    def memory_block(self) -> str:
        if not self.ws.paths.memory_md.exists():
            return ""
        text = strip_comments(self.ws.read_memory().text).strip()
        if not text:
            return ""
        # A small model's window cannot give MEMORY.md its full 4,000 tokens: a quarter at most.
        budget = min(self.settings.memory.memory_md_tokens, self.window // 4)
        body = within_tokens(text, budget, self.count,
                             "…(MEMORY.md continues: read the rest with memory_get path=MEMORY.md)")
        return "## Long-term memory (MEMORY.md)\n" + body

    def sessions_block(self) -> str:
        entries = self.ws.session_cache.read().objects
        if not entries:
            return ""
        budget = self.window // 8
        lines, used = [], 0
        for entry in reversed(entries):           # newest first: they matter most
            line = f"- {entry.get('ended', '')[:16]} {entry.get('session_id', '')}: " \
                   f"{clip(' '.join(str(entry.get('summary', '')).split()), 400)}"
            cost = self.count(line)
            if used + cost > budget:
                break
            lines.append(line)
            used += cost
        return "## Recent sessions\n" + "\n".join(lines) if lines else ""

    def system_prompt(self, anchor: Anchor | None = None) -> str:
        parts = [self.base_prompt, self.memory_block(), self.sessions_block()]
        if anchor is not None and not anchor.empty:
            parts.append(anchor.for_prompt())
        return "\n\n".join(p for p in parts if p)

    def anchor_due(self, step: int) -> bool:
        every = self.settings.memory.anchor_every_steps
        return bool(every) and step > 0 and step % every == 0

    def build(self, history: list[Message], *, step: int = 0, anchor: Anchor | None = None,
              recall: str = "") -> list[Message]:
        """[system prompt] + history (+ the anchor again when it is due) (+ the recalled memory lines)."""
        messages = [{"role": "system", "content": self.system_prompt(anchor)}]
        messages.extend(m for m in history if m.get("role") != "system")
        if anchor is not None and not anchor.empty and self.anchor_due(step):
            messages.append({"role": "user", "content": ANCHOR_REMINDER + anchor.for_prompt()})
        if recall:
            messages.append({"role": "user", "content": recall})
        return messages
