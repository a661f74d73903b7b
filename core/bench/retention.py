"""`reverie bench retention`: how many planted facts survive compaction + flush.

Plants N distinct facts across a long tool-using conversation (in user turns,
assistant answers and tool results, some of them 100 kB), runs it through the
real harness (tier-1 eviction, compaction with flush and offload at the
triggers, the session's end) with a given model, then asks memory_search for
each fact and reports the fraction found in the daily logs, in the offloaded
session log, and in the final summary, plus the compression ratio (tokens of
the conversation / tokens of the context left at its end). The offloaded log
must hold every fact: anything less is a bug, and the command fails.

Then one dream runs with the same model (none with --no-model), reading the daily
logs and the session logs, and its proposal is accepted as a person's "Accept all"
would (held or not); `memory=` is the share of planted facts MEMORY.md then holds.

Last line: `retention model=ID daily=... offload=... summary=... memory=... ratio=...`
"""
from __future__ import annotations

import json
import random
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

PROJECTS = ("Orion", "Basalt", "Quokka", "Juniper", "Marlin", "Tundra", "Saffron", "Gossamer", "Halcyon", "Ember",
            "Lattice", "Nimbus", "Obsidian", "Pelican", "Quartz", "Rosewood", "Sequoia", "Tamarind", "Umbra", "Vesper",
            "Wombat", "Xylem", "Yarrow", "Zephyr", "Alder", "Bramble", "Cobalt", "Dunlin", "Egret", "Fennel",
            "Garnet", "Heron", "Indigo", "Jasper", "Kestrel", "Lichen", "Mistral", "Nutmeg", "Osprey", "Puffin",
            "Quince", "Raven", "Sorrel", "Thistle", "Upland", "Verbena", "Willow", "Yucca", "Zinnia", "Acacia")
ATTRIBUTES = ("staging port", "release codename", "on-call owner", "database name", "deploy region",
              "budget code", "API key alias", "backup bucket")
CODEWORDS = ("amber", "cinder", "falcon", "glacier", "harbor", "ivory", "lantern", "meadow", "nectar", "onyx")


@dataclass(frozen=True)
class Fact:
    project: str
    attribute: str
    value: str
    where: str            # "user" | "assistant" | "tool" | "big_tool"

    @property
    def sentence(self) -> str:
        return f"The {self.attribute} for project {self.project} is {self.value}."

    @property
    def query(self) -> str:
        return f"{self.attribute} project {self.project}"


def make_facts(n: int, rng: random.Random) -> list[Fact]:
    facts = []
    for i in range(n):
        project = PROJECTS[i % len(PROJECTS)] + ("" if i < len(PROJECTS) else str(i // len(PROJECTS) + 1))
        attribute = ATTRIBUTES[i % len(ATTRIBUTES)]
        value = f"{CODEWORDS[rng.randrange(len(CODEWORDS))]}-{4000 + 37 * i + rng.randrange(30)}"
        facts.append(Fact(project, attribute, value, "user"))
    return facts


def _filler(rng: random.Random, chars: int) -> str:
    words = ("log", "entry", "request", "served", "cache", "miss", "worker", "queue", "retry", "ok", "latency",
             "ms", "status", "200", "batch", "flush", "shard", "replica", "sync", "done")
    out, size = [], 0
    while size < chars:
        line = f"{size:08d} " + " ".join(rng.choice(words) for _ in range(12))
        out.append(line)
        size += len(line) + 1
    return "\n".join(out)[:chars]


def build_conversation(n_messages: int = 300, n_facts: int = 50, *, big_results: int = 3, big_chars: int = 100_000,
                       seed: int = 7):
    """(messages, facts): blocks of user -> assistant tool call -> tool result -> assistant answer.

    Facts are spread evenly over the blocks; most sit in user turns, some in answers, some in tool
    results, and a few in the middle of 100 kB results.
    """
    from core.harness import messages as m

    rng = random.Random(seed)
    blocks = max(1, n_messages // 4)
    facts = make_facts(n_facts, rng)
    slots = sorted(rng.sample(range(blocks), min(n_facts, blocks))) if n_facts <= blocks else \
        [i * blocks // n_facts for i in range(n_facts)]
    where_cycle = ["user", "user", "assistant", "user", "tool", "user", "assistant", "user"]
    placed: dict[int, list[Fact]] = {}
    big_left = big_results
    for k, (slot, fact) in enumerate(zip(slots, facts)):
        where = where_cycle[k % len(where_cycle)]
        if where == "tool" and big_left > 0:
            where, big_left = "big_tool", big_left - 1
        facts[k] = Fact(fact.project, fact.attribute, fact.value, where)
        placed.setdefault(slot, []).append(facts[k])
    big_slots = set(rng.sample(range(blocks), min(blocks, big_left))) if big_left > 0 else set()

    messages = []
    for b in range(blocks):
        here = placed.get(b, [])
        topic = PROJECTS[b % len(PROJECTS)]
        said = " ".join(f.sentence for f in here if f.where == "user")
        messages.append(m.user(f"Please check the service logs for {topic} (step {b}). {said}".strip()))
        path = f"logs/{topic.lower()}-{b}.log"
        call = m.tool_call("shell" if b % 3 else "grep_logs", {"path": path, "lines": 200}, call_id=f"call_{b:04d}")
        messages.append(m.assistant(f"Looking at {path}.", [call]))
        in_tool = " ".join(f.sentence for f in here if f.where == "tool")
        big = [f for f in here if f.where == "big_tool"]
        if big or b in big_slots:
            # Deep in the result: past the placeholder's 2,000-character preview, so only the
            # evicted file and the offloaded log hold it, never the live context.
            depth = min(10_000, big_chars // 4)
            body = _filler(rng, depth) + "\n" + " ".join(f.sentence for f in big) + "\n" + \
                _filler(rng, big_chars - depth)
        else:
            body = _filler(rng, 300)
        messages.append(m.tool_result(call["id"], f"{body}\n{in_tool}".strip(), name=call["function"]["name"]))
        answered = " ".join(f.sentence for f in here if f.where == "assistant")
        messages.append(m.assistant(f"The {topic} logs look healthy at step {b}. {answered}".strip()))
    return messages[:n_messages], facts


# ----- the run -------------------------------------------------------------------------------------
def run_retention(workspace, llm, messages, facts, *, search_k: int = 20, mode: str | None = None,
                  progress=None, dream: bool = True):
    """Feed `messages` through the harness as an agent session would; measure what is findable."""
    from core.harness.compactor import ConversationCompactor
    from core.harness.eviction import ToolResultEvictor
    from core.harness.flush import MemoryFlushManager
    from core.harness.messages import tool_names, total_tokens
    from core.harness.modelcall import counter_for
    from core.harness.session import end_session

    settings = workspace.settings
    session_id = "bench-retention"
    flusher = MemoryFlushManager(workspace, llm, settings=settings) if llm is not None else None
    compactor = ConversationCompactor(workspace.paths, llm, session_id, settings=settings.compaction, flusher=flusher)
    count = counter_for(llm)
    evictor = ToolResultEvictor(workspace.paths, session_id, settings.eviction, count=count)
    names = tool_names(messages)
    history, compactions, evicted, started = [], 0, 0, time.monotonic()
    for msg in messages:
        if msg.get("role") == "tool":
            new = evictor.evict(msg, names.get(msg["tool_call_id"], ""))
            evicted += new is not msg
            msg = new
        history.append(msg)
        # Compact only at a clean point: never while an assistant's tool calls wait for results.
        if msg.get("role") != "assistant" or not msg.get("tool_calls"):
            if compactor.should_compact(history):
                result = compactor.compact(history)
                if result.compacted:
                    history = result.messages
                    compactions += 1
                    if progress:
                        progress(f"compaction {compactions}: {result.compacted_count} messages, flush "
                                 f"{result.flush.outcome if result.flush else '-'}, summary "
                                 f"{'model' if not result.summary_error else 'fallback: ' + result.summary_error}")
    original_tokens = total_tokens(messages, count)
    final_tokens = total_tokens(history, count)
    ended = end_session(workspace, history, compactor, flusher=flusher)
    workspace.sync_index()
    workspace.index.wait_embeddings(timeout=900)

    log_rel = compactor.offloader.rel_path
    lines: dict[str, list[str]] = {}

    def holds(hit, value: str) -> bool:
        # A hit names a path:line; the fact is findable when that line holds it (a hit's own text
        # is cut at a few kB, and an offloaded tool result can be 100 kB long).
        if hit.path not in lines:
            lines[hit.path] = workspace.read(hit.path).text.split("\n")
        body = lines[hit.path]
        return 0 < hit.line <= len(body) and value in body[hit.line - 1].lower()

    found = {"daily": 0, "offload": 0, "summary": 0}
    for fact in facts:
        hits = getattr(workspace.search(fact.query, k=search_k, mode=mode), "hits", [])
        value = fact.value.lower()
        if any(h.path.startswith("memory/") and holds(h, value) for h in hits):
            found["daily"] += 1
        if any(h.path == log_rel and holds(h, value) for h in hits):
            found["offload"] += 1
        if value in ended.summary.lower():
            found["summary"] += 1
    log_text = (workspace.root / log_rel).read_text(encoding="utf-8")
    flushes = [r.get("outcome") for r in flusher.records()] if flusher is not None else []
    dreamed = dream_into_memory(workspace, llm, facts, progress) if dream else {}
    return {**dreamed,
        "facts": len(facts), "found": found, "compactions": compactions, "evicted": evicted,
        "flushes": {o: flushes.count(o) for o in sorted(set(flushes))},
        "log_has_all": all(f.value in log_text for f in facts),
        "original_tokens": original_tokens, "final_tokens": final_tokens,
        "ratio": original_tokens / max(1, final_tokens), "seconds": time.monotonic() - started,
        "summary": ended.summary,
    }


def dream_into_memory(workspace, llm, facts, progress=None) -> dict:
    """One dream over what the session left (daily logs, session logs, summary), its proposal
    accepted as a whole; which planted values MEMORY.md then holds."""
    from core.dream.review.apply import apply_proposal
    from core.dream.pipeline.consolidator import run_dream

    from core.bench._consolidation_dream import UNLIMITED

    started = time.monotonic()
    # One dream reads the whole long session: the benchmark measures whether the planted facts
    # survive it, so the per-dream limit on new facts (a volume policy, `reverie bench workspaces`)
    # does not apply, as in `reverie bench consolidation`.
    workspace.settings = workspace.settings.replace("dream", max_new_facts=UNLIMITED)
    result = run_dream(workspace, llm, apply=False)
    proposal = result.proposal
    if proposal is not None and proposal.is_open:
        apply_proposal(workspace, proposal.id, reviewed=True)
    text = workspace.read_memory().text.lower()
    held = sum(f.value.lower() in text for f in facts)
    stats = result.stats or {}
    if progress:
        progress(f"dream: {result.status}; {result.reason}; model calls {stats.get('model_calls', 0)}, "
                 f"fallbacks {stats.get('fallbacks', 0)}")
    return {"memory": held, "dream_status": result.status, "dream_seconds": time.monotonic() - started,
            "dream_changes": len(proposal.changes) if proposal is not None else 0}


def register(sub) -> None:
    p = sub.add_parser("retention", help="plant facts in a long conversation; measure what compaction + flush keep")
    p.add_argument("--model", default="smollm2-135m-instruct-q4_1", help="catalog id or GGUF path")
    p.add_argument("--no-model", action="store_true",
                   help="no model at all: fallback summaries, no flush, a rules-only dream")
    p.add_argument("--messages", type=int, default=300)
    p.add_argument("--facts", type=int, default=50)
    p.add_argument("--big", type=int, default=3, help="tool results of 100 kB")
    p.add_argument("--input-tokens", type=int, default=400,
                   help="cap on the span shown to the model per summary/flush call (0: the model's window); "
                        "a 135M model reads a short span better, and faster")
    p.add_argument("--k", type=int, default=20, help="memory_search results per query")
    p.add_argument("--mode", default=None, help="search mode (default: the workspace setting)")
    p.add_argument("--workspace", default="", help="keep the benchmark workspace here (default: a temp folder)")
    p.add_argument("--seed", type=int, default=7)
    p.set_defaults(func=cmd_retention)


def cmd_retention(args) -> int:
    from core.config import Settings
    from core.errors import CoreError
    from core.llm import open_client
    from core.workspace import Workspace

    with tempfile.TemporaryDirectory(prefix="reverie-retention-") as tmp:
        root = Path(args.workspace) if args.workspace else Path(tmp) / "ws"
        ws = Workspace.create(root)
        settings = Settings().replace("model", model=args.model)
        if args.input_tokens:
            settings = settings.replace("compaction", input_tokens=args.input_tokens)
        ws.settings = settings
        messages, facts = build_conversation(args.messages, args.facts, big_results=args.big, seed=args.seed)
        llm = None if args.no_model else open_client(settings.model)
        try:
            report = run_retention(ws, llm, messages, facts, search_k=args.k, mode=args.mode,
                                   progress=lambda line: print("  " + line, flush=True))
        finally:
            if llm is not None:
                llm.close()
            ws.close()
    model = "none" if args.no_model else args.model
    n = report["facts"]
    frac = {k: v / n for k, v in report["found"].items()}
    print(f"messages={len(messages)} facts={n} compactions={report['compactions']} evicted={report['evicted']} "
          f"flushes={json.dumps(report['flushes'])} seconds={report['seconds']:.1f}")
    print(f"tokens original={report['original_tokens']} final={report['final_tokens']}")
    print(f"found daily={report['found']['daily']}/{n} offload={report['found']['offload']}/{n} "
          f"summary={report['found']['summary']}/{n} memory={report['memory']}/{n} "
          f"raw-log-has-all={report['log_has_all']}")
    print(f"dream {report['dream_status']}: {report['dream_changes']} change(s) in {report['dream_seconds']:.1f} s")
    print(f"retention model={model} daily={frac['daily']:.2f} offload={frac['offload']:.2f} "
          f"summary={frac['summary']:.2f} memory={report['memory'] / n:.2f} ratio={report['ratio']:.1f}")
    if not report["log_has_all"]:
        # The hard invariant: every planted fact is in the raw log. `offload=` is what search finds
        # there, which can be less for a fact deep inside a 100 kB tool-result line.
        raise CoreError("the offloaded session log does not hold every planted fact (it must hold 100%)")
    return 0
