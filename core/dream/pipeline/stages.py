"""The four stages of a dream: Orient, Gather, Consolidate, Prune.

Each stage works on a DreamContext and never writes a file; only the consolidator
writes, after the last stage, so a dream stopped at any boundary leaves nothing
behind. Gather gives every fact a kind (core/dream/judgment/kinds.py) and only durable facts go
on; Consolidate relates each to MEMORY.md (core/dream/pipeline/judge.py). A model, when there is
one, is asked for the relation of each fact; its answer is taken only when the rules
find it possible, else the rules decide (counted as a fallback), so the result never
depends on how good the model is.
"""
from __future__ import annotations

import datetime as dt
import os
import time
from dataclasses import dataclass, field
from typing import Callable, Iterator

from core.cancel import CancelToken
from core.config import Settings
from core.dream.pipeline import condense, judge, prompts, relevance
from core.dream.pipeline.budget import addable, limit_new_facts, not_proposed
from core.dream.judgment import model_check, pools, signals
from core.dream.judgment.kinds import DURABLE, FactKind, classify_facts, classify_facts_both
from core.dream.pipeline.material import Fact, Material, gather
from core.dream.judgment.relations import CONFLICT, DUPLICATE, NEW, UPDATE, Rarity, Relation, contradicts
from core.dream.judgment.similarity import Similarity
from core.dream.review.sources import SourceResolver
from core.dream.state import ConsolidationState, is_rejected
from core.dream.pipeline.working import Entry, WorkingMemory
from core.errors import ContextOverflowError, ModelCancelled, ModelError
from core.secrets import redact
from core.store.documents import Snapshot
from core.store.paths import WorkspacePaths

BATCH = 6            # facts per Consolidate call: small prompts, small replies
RELATED = 3          # bullets shown to the model next to each fact


class StopDream(Exception):
    """Raised at a stage boundary when the dream must stop (cancelled, agent active)."""


@dataclass
class DreamStats:
    model_calls: int = 0
    model_failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model_seconds: float = 0.0
    fallbacks: int = 0           # facts the rules decided because the model gave no usable answer
    model_decided: int = 0       # facts whose relation the model chose (among what the rules allow)
    rejected_answers: int = 0    # model answers the rules found impossible (counted in fallbacks too)
    stage_seconds: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"model_calls": self.model_calls, "model_failures": self.model_failures,
                "prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                "model_seconds": round(self.model_seconds, 3), "fallbacks": self.fallbacks,
                "model_decided": self.model_decided, "rejected_answers": self.rejected_answers,
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
    include_archive: bool = False           # read memory/archive/ too (asked for)
    read_archived: frozenset = frozenset()  # archived logs to read anyway (maintenance just moved them)
    material: Material = field(default_factory=Material)
    themes: dict[str, list[str]] = field(default_factory=dict)
    prepared: list[Prepared] = field(default_factory=list)
    stats: DreamStats = field(default_factory=DreamStats)
    notes: list[str] = field(default_factory=list)
    hold_reasons: list[str] = field(default_factory=list)
    skipped: list[dict] = field(default_factory=list)   # facts not promoted (kind, why), conflicts with pins
    superseded: list[dict] = field(default_factory=list)  # old values an update replaced, with dates
    relations: dict[str, int] = field(default_factory=dict)
    not_proposed: list[dict] = field(default_factory=list)   # new candidates over dream.max_new_facts
    kind_scores: dict[str, float] = field(default_factory=dict)   # fact text -> its kind's score (doubt)
    condense: list = field(default_factory=list)             # condense.Suggestion, when over budget
    irrelevant: list[dict] = field(default_factory=list)     # relevance-prune suggestions (core/dream/pipeline/relevance.py)
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
    ctx.material = gather(ctx.paths, ctx.state, ctx.include_archive, ctx.read_archived)
    read = len(ctx.material.facts)
    # A log read again (a lost watermark, an edit) brings back facts MEMORY.md already cites.
    # So does one a person rejected, unless its line changed since.
    ctx.material.facts = [f for f in ctx.material.facts if _already_consolidated(ctx, f) is None
                          and not is_rejected(ctx.state, f.sources, ctx.resolver.mark)]
    found = (f"{len(ctx.material.files_read)} of {ctx.material.files_seen} daily logs changed, "
             f"{len(ctx.material.session_logs_read)} session logs changed, "
             f"{len(ctx.material.sessions)} new session summaries, {len(ctx.material.facts)} new facts"
             + (f" ({read - len(ctx.material.facts)} already in MEMORY.md or rejected)"
                if read > len(ctx.material.facts) else "")
             + (f"; {ctx.material.status_lines} status lines left out" if ctx.material.status_lines else "")
             + (f"; {ctx.material.known} already in USER.md" if ctx.material.known else ""))
    yield 1, 2, found
    ctx.themes = {name: [] for name in prompts.THEMES}
    if ctx.material.facts:
        reply = ctx.ask(prompts.orient_messages(ctx.memory.sections, ctx.material.digest(),
                                                budget=prompts.Budget(ctx.settings.memory.memory_md_chars_hint,
                                                                      memory_chars(ctx)),
                                                context=ctx.material.context),
                        prompts.orient_schema(), max_tokens=96)
        if reply is not None:
            ctx.themes = prompts.read_orient(reply)
    named = "; ".join(f"{k}: {', '.join(v)}" for k, v in ctx.themes.items() if v)
    yield 2, 2, f"{found}; themes: {named}" if named else found     # no model, or it named none


# ----- Gather -------------------------------------------------------------------------------
def gather_stage(ctx: DreamContext) -> Progress:
    """Give each fact its kind; only durable facts go on, the rest are listed as not promoted."""
    facts = ctx.material.facts
    if facts:
        ctx.similarity.prepare([f.text for f in facts] + [e.text for e in ctx.memory.live()])
    texts = [f.text for f in facts]
    kinds = (classify_facts_both(texts, kept=[e.text for e in ctx.memory.live()],
                                 arbitrated=pools.arbiter_on(_arbiter(ctx))) if _judgment(ctx) == "both"
             else classify_facts(texts, _learned(ctx)))      # the head runs once for all of them
    kinds = _spare_updates(ctx, facts, kinds)
    for number, (fact, kind) in enumerate(zip(facts, kinds), start=1):
        ctx.kind_scores[fact.text] = kind.score
        if kind.promoted:
            ctx.prepared.append(Prepared(fact, [], ctx.resolver.all_resolve(fact.sources)))
        else:
            ctx.skipped.append({"fact": redact(fact.text), "sources": list(fact.sources), "kind": kind.kind,
                                "reason": f"{kind.kind}: {kind.reason}"})
        if number % 20 == 0 or number == len(facts):
            yield number, len(facts), (f"{len(ctx.prepared)} durable facts; {len(ctx.skipped)} not promoted "
                                       f"(to-dos, status, one-off events, secrets)")
    if not facts:
        yield 0, 0, "nothing new"


def _spare_updates(ctx: DreamContext, facts: list[Fact], kinds: list[FactKind]) -> list[FactKind]:
    """A fact that only the learned head held back (as status or a single event), and that the dream's
    relation judgment (the word rules, and the head where the dream's policy lets it) finds gives a new
    value of a MEMORY.md bullet, is promoted after all: the bullet it replaces
    shows the slot is a lasting one. The head reads "raised her rate to €520 from 1 October" as an
    event, and a missed update leaves a wrong value in the memory. The new value must be one the
    bullet states (signals.value_changed): a "no longer so" cue alone is no evidence here, since
    "a courier dropped off pastries for the night porter" would then replace a bullet about the porter."""
    held = [i for i, kind in enumerate(kinds) if kind.by_head]
    if not held:
        return kinds
    rarity = Rarity([e.text for e in ctx.memory.live()] + [facts[i].text for i in held])
    policy = _policy(ctx)
    out = list(kinds)
    for i in held:
        relation, pool = judge.judge(facts[i], ctx.memory, ctx.similarity.score, rarity, False, policy)
        target = judge.target_of(relation, pool)
        if relation.kind == UPDATE and target is not None and signals.value_changed(target.text, facts[i].text):
            out[i] = FactKind(DURABLE, "updates a MEMORY.md bullet", kinds[i].score)
    return out


def _already_consolidated(ctx: DreamContext, fact: Fact) -> Entry | None:
    """An entry whose sources already include this fact's (a log re-read after an edit)."""
    wanted = set(fact.sources)
    for entry in ctx.memory.live():
        if wanted & set(entry.refs):
            return entry
    return None


# ----- Consolidate ----------------------------------------------------------------------------
def consolidate(ctx: DreamContext) -> Progress:
    """Relate each durable fact to MEMORY.md as it stands after the facts before it (a fact first
    stated earlier in the same logs can be updated too): new, duplicate, update or conflict.
    With a model, each batch is also put to it; an answer the rules find possible is taken."""
    todo = ctx.prepared
    rarity = Rarity([e.text for e in ctx.memory.live()] + [item.fact.text for item in todo])
    counts = {NEW: 0, DUPLICATE: 0, UPDATE: 0, CONFLICT: 0}
    trust, learned = _model_trust(ctx), _learned(ctx)
    policy = _policy(ctx)
    may_add = addable(ctx, [item.fact for item in todo])
    for start in range(0, len(todo), BATCH):
        ctx.checkpoint()
        batch = todo[start:start + BATCH]
        answers = _ask_model(ctx, batch, rarity)
        for number, item in enumerate(batch, start=1):
            rule, pool = judge.judge(item.fact, ctx.memory, ctx.similarity.score, rarity, learned, policy)
            verdict = judge.Verdict(item.fact, rule)
            answer = answers.get(number)
            if answer is not None:
                kind, target = answer
                if (kind, target if kind != NEW else "") in judge.allowed(item.fact, rule, pool, rarity,
                                                                           trusted=trust == "better", learned=learned):
                    chosen = next((c for c, _ in pool if c.key == target), None)
                    if kind != rule.kind or target != rule.target:
                        verdict.relation = Relation(kind, target if kind != NEW else "", "the model's choice",
                                                    chosen.cosine if chosen else 0.0)
                    verdict.by_model = True
                    ctx.stats.model_decided += 1
                else:
                    ctx.stats.fallbacks += 1
                    ctx.stats.rejected_answers += 1
            elif ctx.llm is not None:
                ctx.stats.fallbacks += 1
            if verdict.relation.kind == NEW and id(item.fact) not in may_add:
                not_proposed(ctx, item.fact.text, item.fact.sources)   # a long tail: never in the working memory
                counts[NEW] += 1
                continue
            judge.apply_verdict(verdict, ctx.memory, pool, item.sourced, ctx.notes, ctx.skipped)
            if verdict.superseded:
                ctx.superseded.append(verdict.superseded)
            counts[verdict.relation.kind] = counts.get(verdict.relation.kind, 0) + 1
        yield min(start + BATCH, len(todo)), len(todo), _counted(counts)
    ctx.relations = counts
    merged = merge_near_duplicates(ctx)
    yield len(todo), len(todo), _counted(counts) + (f"; {merged} near-duplicate bullets merged" if merged else "")


def _counted(counts: dict[str, int]) -> str:
    return (f"{counts[NEW]} new, {counts[DUPLICATE]} already known, {counts[UPDATE]} updates, "
            f"{counts[CONFLICT]} conflicts with pins")


def _ask_model(ctx: DreamContext, batch: list[Prepared], rarity: Rarity) -> dict[int, tuple[str, str]]:
    """The model's relation for each fact of the batch ({number: (relation, bullet key)}), or {}.
    Each fact is shown with its few closest bullets; handles (B1, B2, ...) are unique in the batch."""
    if ctx.llm is None or ctx._model_off or _model_trust(ctx) == "worse":
        return {}
    shown: list[prompts.BatchFact] = []
    keys: dict[str, str] = {}                 # handle -> entry key
    for number, item in enumerate(batch, start=1):
        _rule, pool = judge.judge(item.fact, ctx.memory, ctx.similarity.score, rarity, _learned(ctx))
        pairs = []
        for candidate, _entry in pool[:RELATED]:
            handle = next((h for h, k in keys.items() if k == candidate.key), f"B{len(keys) + 1}")
            keys[handle] = candidate.key
            pairs.append((handle, candidate.text))
        shown.append(prompts.BatchFact(number, item.fact.text, tuple(pairs)))
    reply = ctx.ask(prompts.consolidate_messages(ctx.memory.sections, ctx.themes, shown,
                                                 budget=prompts.Budget(ctx.settings.memory.memory_md_chars_hint,
                                                                       memory_chars(ctx))),
                    prompts.consolidate_schema(len(batch), list(keys)), max_tokens=24 * len(batch) + 16)
    if reply is None:
        return {}
    return {op.fact: (op.op, keys.get(op.target, "")) for op in prompts.read_ops(reply)
            if 1 <= op.fact <= len(batch)}


def judgment_of(settings) -> str:
    """dream.judgment: "rules", "learned" or "both". REVERIE_DREAM_JUDGMENT overrides the setting (a
    benchmark's temporary workspaces have no config)."""
    return os.environ.get("REVERIE_DREAM_JUDGMENT") or getattr(getattr(settings, "dream", None), "judgment", "")


def _judgment(ctx: DreamContext) -> str:
    return judgment_of(ctx.settings)


def _arbiter(ctx: DreamContext) -> str:
    """dream.arbiter: where the learned arbiter decides ("" = the shipped default; pools.arbiter_on)."""
    return getattr(getattr(ctx.settings, "dream", None), "arbiter", "")


def _policy(ctx: DreamContext) -> pools.HeadPolicy:
    """Where the learned head may override the word rules' relations in this dream (read once per stage)."""
    return pools.HeadPolicy.of_process(_judgment(ctx) == "both", _arbiter(ctx))


def _learned(ctx: DreamContext) -> bool:
    """The learned heads decide kinds and relations (dream.judgment = "learned"), else the word rules."""
    return _judgment(ctx) == "learned"


def _model_trust(ctx: DreamContext) -> str:
    """"better" or "worse" when `reverie models check` measured this model against the learned heads
    on relations, "" when it was never checked (it may then only pick among the head's plausible
    answers)."""
    if ctx.llm is None:
        return ""
    verdict = model_check.load_checks().get(model_check.model_key(ctx.llm))
    if not verdict:
        return ""
    return "better" if "relations" in verdict.get("use_for", []) else "worse"


def merge_near_duplicates(ctx: DreamContext) -> int:
    """Fold bullets that say the same thing into one, keeping all their sources; never two that
    say opposite things (MiniLM scores "tea over coffee" and "coffee over tea" at 0.995)."""
    live = [e for e in ctx.memory.live() if "superseded" not in e.bullet.flags]
    # Same-text duplicates are found by grouping, always; the embedding pass runs when there is
    # new material (older pairs were compared by earlier dreams), so an idle dream embeds nothing.
    pairs = ctx.similarity.duplicate_pairs([e.text for e in live], semantic=bool(ctx.material.facts))
    merged = 0
    for first, second, score in pairs:
        a, b = live[first], live[second]
        if not (a.is_new or b.is_new) and (a.persons_line or b.persons_line):
            continue          # a line the person wrote (no provenance as read): only a condense proposal merges it
        if a.dropped or b.dropped or (score < 0.9999 and contradicts(a.text, b.text, _learned(ctx))):
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
        merged += 1
    return merged


def _keeper(a: Entry, b: Entry) -> tuple[Entry, Entry]:
    """Which of two duplicates stays: a read-only one, then the person's (one already in MEMORY.md),
    then the one with more sources, then the older."""
    def rank(e: Entry):
        return (not e.editable, not e.is_new, len(e.refs), -e.base_line if e.base_line else -10**9)
    return (a, b) if rank(a) >= rank(b) else (b, a)


# ----- Prune -------------------------------------------------------------------------------------
def prune(ctx: DreamContext) -> Progress:
    """Drop what is superseded or expired; propose at most `dream.max_new_facts` new bullets (the
    rest stay in the logs and in search); when MEMORY.md ends up over its budget, suggest a separate
    condense proposal (core/dream/pipeline/condense.py) instead of cutting what the person curated;
    then suggest (never make) drops of bullets unrelated to recent work (core/dream/pipeline/relevance.py)."""
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
    yield 1, 3, "superseded and expired facts dropped"
    limit_new_facts(ctx)
    ctx.condense = condense.suggest(ctx)
    yield 2, 3, (f"MEMORY.md is {ctx.memory.tokens()} tokens, {memory_chars(ctx)} characters (budget "
                 f"{ctx.settings.memory.memory_md_tokens} tokens, {ctx.settings.memory.memory_md_chars_hint} characters)"
                 + (f"; {len(ctx.not_proposed)} more candidates, not proposed: budget" if ctx.not_proposed else "")
                 + (f"; a condense proposal suggests {len(ctx.condense)} change(s)" if ctx.condense else ""))
    ctx.irrelevant = relevance.suggest_drops(ctx)
    yield 3, 3, (f"{len(ctx.irrelevant)} bullet(s) unrelated to recent work, proposed for review" if ctx.irrelevant
                 else "no bullet is unrelated to recent work")


def memory_chars(ctx: DreamContext) -> int:
    """MEMORY.md's size in characters as the model sees it (provenance comments stripped)."""
    from core.store.memory_md import strip_comments

    return len(strip_comments(ctx.memory.render()))
