"""The four stages of a dream: Orient, Gather, Consolidate, Prune.

Each stage works on a DreamContext and never writes a file; only the consolidator
writes, after the last stage, so a dream stopped at any boundary leaves nothing
behind. The model is asked for small structured operations; every operation is
validated here (its fact exists, its target was shown to it and may be edited, its
text is grounded in the fact) and anything that fails falls back to a deterministic
choice, so the result never depends on how good the model is.
"""
from __future__ import annotations

import datetime as dt
import time
from dataclasses import dataclass, field
from typing import Callable, Iterator

from core.cancel import CancelToken
from core.config import Settings
from core.dream import prompts
from core.dream.material import Fact, Material, gather
from core.dream.sections import guess_section, pick_section
from core.dream.similarity import Similarity, grounded
from core.dream.sources import SourceResolver
from core.dream.state import ConsolidationState
from core.dream.working import Entry, WorkingMemory
from core.errors import ContextOverflowError, ModelCancelled, ModelError
from core.store.documents import Snapshot
from core.store.paths import WorkspacePaths

BATCH = 6            # facts per Consolidate call: small prompts, small replies
RELATED = 3          # existing bullets shown next to each fact


class StopDream(Exception):
    """Raised at a stage boundary when the dream must stop (cancelled, agent active)."""


@dataclass
class DreamStats:
    model_calls: int = 0
    model_failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model_seconds: float = 0.0
    fallbacks: int = 0           # facts decided without (valid) model output
    stage_seconds: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"model_calls": self.model_calls, "model_failures": self.model_failures,
                "prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                "model_seconds": round(self.model_seconds, 3), "fallbacks": self.fallbacks,
                "stage_seconds": {k: round(v, 3) for k, v in self.stage_seconds.items()}}


@dataclass
class Prepared:
    fact: Fact
    related: list[tuple[Entry, float]]
    sourced: bool


@dataclass
class DreamContext:
    paths: WorkspacePaths
    settings: Settings
    llm: object | None                      # an LLMClient, or None for a model-free dream
    now: dt.datetime
    cancel: CancelToken
    should_stop: Callable[[], str] | None   # returns a reason to stop ("" = go on)
    state: ConsolidationState
    snapshot: Snapshot
    memory: WorkingMemory
    similarity: Similarity
    resolver: SourceResolver
    material: Material = field(default_factory=Material)
    themes: dict[str, list[str]] = field(default_factory=dict)
    prepared: list[Prepared] = field(default_factory=list)
    stats: DreamStats = field(default_factory=DreamStats)
    notes: list[str] = field(default_factory=list)
    hold_reasons: list[str] = field(default_factory=list)
    skipped: list[dict] = field(default_factory=list)   # new facts deliberately not promoted, with why
    _model_off: bool = False

    def checkpoint(self) -> None:
        """A stage boundary: stop here if cancelled or the agent became active."""
        if self.cancel.cancelled:
            raise StopDream(self.cancel.reason or "cancelled")
        if self.should_stop is not None:
            reason = self.should_stop()
            if reason:
                raise StopDream(reason)

    def ask(self, messages: list[dict], schema: dict, max_tokens: int):
        """One model call, or None when there is no model or it failed (the caller falls back)."""
        if self.llm is None or self._model_off:
            return None
        started = time.perf_counter()
        try:
            reply = self.llm.complete(messages, max_tokens=max_tokens, temperature=0.0, json_schema=schema,
                                      cancel=self.cancel)
        except ModelCancelled as exc:
            raise StopDream(str(exc) or "cancelled") from exc
        except ContextOverflowError as exc:
            self.notes.append(f"a prompt did not fit the model ({exc}); decided without it")
            self.stats.model_failures += 1
            return None
        except ModelError as exc:
            self.stats.model_failures += 1
            self.notes.append(f"model call failed: {exc}")
            if self.stats.model_failures >= 2:
                self._model_off = True
                self.notes.append("the model failed twice; the rest of this dream is decided without it")
            return None
        finally:
            self.stats.model_seconds += time.perf_counter() - started
        self.stats.model_calls += 1
        self.stats.prompt_tokens += int(getattr(reply, "prompt_tokens", 0) or 0)
        self.stats.completion_tokens += int(getattr(reply, "completion_tokens", 0) or 0)
        return reply


Progress = Iterator[tuple[int, int, str]]   # (done, total, message) within a stage


# ----- Orient -------------------------------------------------------------------------------
def orient(ctx: DreamContext) -> Progress:
    """Read what is new since the watermark and name its goals, decisions, patterns, preferences."""
    ctx.material = gather(ctx.paths, ctx.state)
    read = len(ctx.material.facts)
    # A log read again (a lost watermark, an edit) brings back facts MEMORY.md already cites.
    ctx.material.facts = [f for f in ctx.material.facts if _already_consolidated(ctx, f) is None]
    yield 1, 2, (f"{len(ctx.material.files_read)} of {ctx.material.files_seen} daily logs changed, "
                 f"{len(ctx.material.sessions)} new session summaries, {len(ctx.material.facts)} new facts"
                 + (f" ({read - len(ctx.material.facts)} already in MEMORY.md)" if read > len(ctx.material.facts) else ""))
    ctx.themes = {name: [] for name in prompts.THEMES}
    if ctx.material.facts:
        reply = ctx.ask(prompts.orient_messages(ctx.memory.sections, ctx.material.digest()),
                        prompts.orient_schema(), max_tokens=96)
        if reply is not None:
            ctx.themes = prompts.read_orient(reply)
    yield 2, 2, "themes: " + "; ".join(f"{k}: {', '.join(v)}" for k, v in ctx.themes.items() if v)


# ----- Gather -------------------------------------------------------------------------------
def gather_stage(ctx: DreamContext) -> Progress:
    """Check each fact's sources, drop what MEMORY.md already holds, find related bullets."""
    facts = ctx.material.facts
    if facts:
        ctx.similarity.prepare([f.text for f in facts] + [e.text for e in ctx.memory.live()])
    for number, fact in enumerate(facts, start=1):
        candidates = [(e.key, e.text) for e in ctx.memory.live()]
        related = [(ctx.memory.get(key), score) for key, score in
                   ctx.similarity.related(fact.text, candidates, k=RELATED)]
        if related and ctx.similarity.near_duplicate(fact.text, related[0][0].text)[0]:
            _seen_again(ctx, related[0][0], fact)
        else:
            ctx.prepared.append(Prepared(fact, related, ctx.resolver.all_resolve(fact.sources)))
        if number % 20 == 0 or number == len(facts):
            yield number, len(facts), f"{len(ctx.prepared)} new facts to consolidate"
    if not facts:
        yield 0, 0, "nothing new"


def _already_consolidated(ctx: DreamContext, fact: Fact) -> Entry | None:
    """An entry whose sources already include this fact's (a log re-read after an edit)."""
    wanted = set(fact.sources)
    for entry in ctx.memory.live():
        if wanted & set(entry.refs):
            return entry
    return None


def _seen_again(ctx: DreamContext, entry: Entry, fact: Fact) -> None:
    if entry.editable:
        ctx.memory.update(entry, add_sources=fact.sources, op="sources",
                          reason=f"the same fact appeared again in {', '.join(fact.sources)}")
    else:
        ctx.notes.append(f"{fact.sources[0]} repeats pinned bullet {entry.bullet.id or entry.key}")


# ----- Consolidate ----------------------------------------------------------------------------
def consolidate(ctx: DreamContext) -> Progress:
    """Ask the model for one operation per new fact (in small batches), validate, apply; then
    merge existing near-duplicates."""
    todo = ctx.prepared
    for start in range(0, len(todo), BATCH):
        ctx.checkpoint()
        batch = todo[start:start + BATCH]
        handles: dict[str, Entry] = {}
        shown: list[prompts.BatchFact] = []
        for number, item in enumerate(batch, start=1):
            pairs = []
            for entry, _score in item.related:
                handle = next((h for h, e in handles.items() if e is entry), f"B{len(handles) + 1}")
                handles[handle] = entry
                pairs.append((handle, entry.text))
            shown.append(prompts.BatchFact(number, item.fact.text, tuple(pairs)))
        sections = ctx.memory.sections or ["User profile", "Preferences", "Decisions", "Learnings", "Projects"]
        reply = ctx.ask(prompts.consolidate_messages(sections, ctx.themes, shown),
                        prompts.consolidate_schema(len(batch), list(handles), sections),
                        max_tokens=32 * len(batch) + 16)
        ops = prompts.read_ops(reply) if reply is not None else []
        for number, item in enumerate(batch, start=1):
            op = next((o for o in ops if o.fact == number), None)
            allowed = {h: e for h, e in handles.items() if any(e is r for r, _ in item.related)}
            decide(ctx, item, op, allowed)
        for op in ops:
            if not 1 <= op.fact <= len(batch) and op.op in ("add", "update", "supersede") and op.text:
                _invented(ctx, op)
        yield min(start + BATCH, len(todo)), len(todo), f"{ctx.stats.model_calls} model calls"
    merge_near_duplicates(ctx)
    yield len(todo), len(todo), "near-duplicates merged"


def decide(ctx: DreamContext, item: Prepared, op: prompts.ModelOp | None, allowed: dict[str, Entry]) -> None:
    """Turn one (possibly missing or invalid) model operation into a valid edit."""
    fact = item.fact
    flags = () if item.sourced else ("unsourced",)
    origin = ", ".join(fact.sources)
    sections = ctx.memory.sections
    if op is None:
        ctx.stats.fallbacks += 1
        ctx.memory.add(guess_section(fact.text, sections), fact.text, fact.sources, op="add",
                       reason=f"new fact from {origin}", flags=flags)
        return
    target = allowed.get(op.target)
    usable = target is not None and target.editable and not target.dropped
    section = pick_section(op.section, fact.text, sections)
    if op.op == "skip":
        score = ctx.similarity.score(fact.text, target.text) if target is not None else 0.0
        if target is not None and score >= ctx.similarity.duplicate_floor:
            _seen_again(ctx, target, fact)
            return
        if target is None and fact.origin == "session":
            # A session summary is not curated like a flush; the model may leave a line of it out.
            ctx.skipped.append({"fact": fact.text, "sources": list(fact.sources),
                                "reason": "the model judged this session-summary line not worth keeping"})
            return
        ctx.stats.fallbacks += 1
        ctx.memory.add(section, fact.text, fact.sources, op="add", flags=flags,
                       reason=f"new fact from {origin} (the model called it known, but no related bullet says it)")
        return
    if op.op == "update" and usable:
        # The newer fact's words replace the bullet's (or the model's combined text, when it gave
        # one that the fact and the bullet back up); the bullet keeps its id and all its sources.
        text = op.text if op.text and grounded(op.text, fact.text + " " + target.text) else fact.text
        old = target.text
        ctx.memory.update(target, text=text, add_sources=fact.sources, add_flags=flags, op="update",
                          reason=f"updated from {origin}; it said: {old}")
        return
    if op.op == "supersede" and usable:
        text = op.text if op.text and grounded(op.text, fact.text) else fact.text
        group = f"g-{target.key}"
        new = ctx.memory.add(target.section, text, fact.sources, op="supersede", flags=flags, group=group,
                             reason=f"replaces {target.bullet.id or target.key}: new fact from {origin}")
        ctx.memory.update(target, add_flags=("superseded",), op="supersede", group=group,
                          reason=f"superseded by {new.bullet.id} ({origin})")
        target.superseded_by = new.bullet.id
        return
    # add, or an update/supersede that cannot be used as given: keep the fact as a bullet of its own
    text = op.text if op.op == "add" and op.text and grounded(op.text, fact.text) else fact.text
    if op.op != "add" or text != op.text:
        ctx.stats.fallbacks += 1
    why = ""
    if op.op != "add":
        why = (f" (the model's {op.op} text was not grounded in the fact)" if usable
               else f" (the model's {op.op} named no bullet it may change)")
    ctx.memory.add(section, text, fact.sources, op="add", flags=flags, reason=f"new fact from {origin}{why}")


def _invented(ctx: DreamContext, op: prompts.ModelOp) -> None:
    """A bullet the model proposed without any fact behind it: kept for review, flagged."""
    section = pick_section(op.section, op.text, ctx.memory.sections)
    ctx.memory.add(section, op.text, (), op="add", flags=("unsourced",),
                   reason="the model proposed it without a source; review before accepting")


def merge_near_duplicates(ctx: DreamContext) -> None:
    """Fold bullets that say the same thing into one, keeping all their sources."""
    live = [e for e in ctx.memory.live() if "superseded" not in e.bullet.flags]
    # Same-text duplicates are found by grouping, always; the embedding pass runs when there is
    # new material (older pairs were compared by earlier dreams), so an idle dream embeds nothing.
    pairs = ctx.similarity.duplicate_pairs([e.text for e in live], semantic=bool(ctx.material.facts))
    for first, second, score in pairs:
        a, b = live[first], live[second]
        if a.dropped or b.dropped:
            continue
        keep, gone = _keeper(a, b)
        if not gone.editable:
            continue
        group = f"g-merge-{keep.key}"
        how = "same text" if score >= 0.9999 else f"cosine {score:.2f}"
        if keep.editable:
            ctx.memory.update(keep, add_sources=gone.refs, op="merge", group=group,
                              reason=f"merged near-duplicate {gone.bullet.id or gone.key} ({how})")
        ctx.memory.drop(gone, op="merge", group=group,
                        reason=f"near-duplicate of {keep.bullet.id or keep.key} ({how}); its sources moved there"
                        if keep.editable else f"duplicate of pinned bullet {keep.bullet.id or keep.key} ({how})")


def _keeper(a: Entry, b: Entry) -> tuple[Entry, Entry]:
    """Which of two duplicates stays: a pinned one, then the one with more sources, then the older."""
    def rank(e: Entry):
        return (not e.editable, len(e.refs), not e.is_new, -e.base_line if e.base_line else -10**9)
    return (a, b) if rank(a) >= rank(b) else (b, a)


# ----- Prune -------------------------------------------------------------------------------------
def prune(ctx: DreamContext) -> Progress:
    """Drop what is superseded or expired, then the oldest facts until the budget holds."""
    today = ctx.now.date().isoformat()
    for entry in ctx.memory.live():
        if not entry.editable:
            continue
        if "superseded" in entry.bullet.flags:
            by = f"superseded by {entry.superseded_by}" if entry.superseded_by else "marked superseded"
            ctx.memory.drop(entry, op="supersede", reason=by, group=f"g-{entry.key}" if entry.superseded_by else "")
            continue
        expiry = next((f.split(":", 1)[1] for f in entry.bullet.flags if f.startswith(("expires:", "until:"))), "")
        if expiry and expiry < today:
            ctx.memory.drop(entry, op="expired", reason=f"expired on {expiry}")
    yield 1, 2, "superseded and expired facts dropped"
    enforce_budget(ctx)
    yield 2, 2, f"MEMORY.md is {ctx.memory.tokens()} tokens (budget {ctx.settings.memory.memory_md_tokens})"


def enforce_budget(ctx: DreamContext) -> None:
    from core.store.memory_md import strip_comments
    from core.tokens import count_tokens

    budget = ctx.settings.memory.memory_md_tokens
    tokens = ctx.memory.tokens()
    if tokens <= budget:
        return
    # Oldest first by the newest source date; bullets without dated sources (a person's own
    # notes) and this dream's additions go last.
    candidates = sorted((e for e in ctx.memory.live() if e.editable),
                        key=lambda e: (e.is_new, e.day or "9999-99-99", e.base_line))
    for entry in candidates:
        if tokens <= budget:
            break
        ctx.memory.drop(entry, op="budget", reason=f"MEMORY.md was over its {budget}-token budget; "
                                                   f"this was among the oldest facts ({entry.day or 'undated'})")
        tokens -= count_tokens(strip_comments(entry.bullet.render())) + 1
        if tokens <= budget:
            tokens = ctx.memory.tokens()   # the estimate said done: confirm with an exact count
    if ctx.memory.tokens() > budget:
        ctx.hold_reasons.append(f"MEMORY.md stays over its {budget}-token budget even after pruning "
                                f"(pinned and read-only bullets are kept)")
