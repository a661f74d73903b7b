"""`reverie bench consolidation CASES_DIR --out RESULTS_DIR`: does a dream turn daily logs into the right MEMORY.md?

A case is a folder that is itself a workspace (MEMORY.md, memory/YYYY-MM-DD.md) plus
`labels.json`, which says what every log line is and the clock ("now") the dream runs
at, and usually `expected/MEMORY.md`, one ideal result. For every sub-folder of
CASES_DIR holding a labels.json, one real dream runs in a fresh temporary workspace
that holds only MEMORY.md and memory/ (the labels and the ideal result never go in),
everything it proposes is accepted, held proposals included, and the MEMORY.md it
leaves is written to RESULTS_DIR/<case>/MEMORY.md (_consolidation_dream.py). Then each
result is scored against its labels (_consolidation_score.py says how).

stdout is only the summary lines, one per case and one for all cases (micro-averages):
  consolidation case=NAME durable=R dup_added=R updates=R pinned_conflict=R transient_leak=R
      one_off_leak=R secret_leak=N kept=R pinned=R growth=R
  consolidation cases=N ... (the same keys)
Progress, dream failures and (with -v) every failed item go to stderr. RESULTS_DIR/summary.json
holds the figures, each item's outcome (what it matched, why it failed) and the dream's stats.
`--score-only` scores the results already in RESULTS_DIR without dreaming.
Exit status 1 when a dream failed or a result was missing (both are still scored).
"""
from __future__ import annotations

import datetime as dt
import hashlib
import json
import sys
from pathlib import Path

from core.bench import _consolidation_score as scoring
from core.errors import CoreError


def register(sub) -> None:
    from core.llm.cli_args import add_model_arguments

    p = sub.add_parser("consolidation", help="dream over labelled cases, accept all, score the MEMORY.md each leaves")
    p.add_argument("cases", help="a folder of cases (its sub-folders holding labels.json), or one case")
    p.add_argument("--out", required=True, metavar="RESULTS_DIR",
                   help="write <case>/MEMORY.md and summary.json here (with --score-only: read the results here)")
    p.add_argument("--score-only", action="store_true", help="score the results already in --out; do not dream")
    p.add_argument("--no-model", action="store_true", help="decide every operation without a model")
    p.add_argument("-v", "--verbose", action="store_true", help="list every failed item on stderr")
    p.add_argument("--judgment", choices=("rules", "learned", "both"),
                   help="the dream's judgment for every case (default: the setting dream.judgment)")
    add_model_arguments(p)   # --model, or --backend openai --base-url ... for a server the person runs
    p.set_defaults(func=cmd_bench_consolidation)


def say(message: str) -> None:
    print(f"consolidation: {message}", file=sys.stderr, flush=True)


def load_cases(cases_dir: Path) -> dict[Path, dict]:
    """Every case and its labels, read before any dream so a broken case stops the run at once."""
    dirs = scoring.case_dirs(cases_dir)
    if not dirs:
        raise CoreError(f"no cases under {cases_dir}: no folder there holds a labels.json")
    for case_dir in dirs:
        if not (case_dir / "MEMORY.md").is_file():
            raise CoreError(f"{case_dir}: a case needs its starting MEMORY.md")
    return {case_dir: scoring.load_labels(case_dir) for case_dir in dirs}


def open_model(args):
    """(client or None, model id) for the dreams; one client serves every case."""
    if args.no_model:
        return None, "none"
    from core.config import Settings
    from core.llm.cli_args import model_settings

    settings = model_settings(args, Settings().model)
    try:
        from core.llm import open_client
    except ImportError as exc:
        raise CoreError(f"the local model engine is not available ({exc}); run with --no-model") from exc
    llm = open_client(settings)
    return llm, getattr(llm, "model_id", "") or settings.server_model or settings.model


def check_embeddings() -> str:
    """Load the dream's embedder once up front (so the first case's time is not the load) and say
    when it is missing: the dream then silently falls back to word similarity."""
    from core.config import Settings

    try:
        from core.index.embedding import default_embedder

        embedder = default_embedder(Settings().search.embedding_model)
        embedder.embed_batch(["warm up"])
        return embedder.model_id
    except Exception as exc:   # noqa: BLE001 - the same fallback the dream takes (load_similarity)
        say(f"the embedding model did not load ({type(exc).__name__}: {exc}); dreams use word similarity")
        return "none (word similarity)"


def dream_all(cases: dict[Path, dict], results: Path, llm, judgment: str | None = None) -> dict[str, dict]:
    """Run the protocol on every case; the dream report of each, by case name."""
    from core.bench._consolidation_dream import CaseRun, case_clock, dream_case
    from core.stage_bar import StageBar

    bar = StageBar()
    runs: dict[str, dict] = {}
    for number, (case_dir, labels) in enumerate(cases.items(), 1):
        name, target = case_dir.name, results / case_dir.name / "MEMORY.md"
        now, why = None, "labels.json has no 'now', the clock the dream runs at"
        if "now" in labels:
            try:
                now = case_clock(labels["now"])
            except CoreError as exc:
                why = str(exc)
        if now is None:
            run = CaseRun(name, status="failed", error=why)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes((case_dir / "MEMORY.md").read_bytes())
        else:
            say(f"case {name} ({number}/{len(cases)}): dreaming at {now.isoformat()}")
            run = dream_case(case_dir, target, llm, now, progress=lambda _ws, event: bar(event), judgment=judgment)
        say(f"case {name}: {run.describe()}")
        runs[name] = run.to_dict()
    return runs


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else ""


def earlier_dreams(results: Path) -> dict[str, dict]:
    """The dream reports of a previous summary.json, by case, with the result each one wrote."""
    try:
        old = json.loads((results / "summary.json").read_text(encoding="utf-8"))
        return {case["name"]: case for case in old.get("cases", []) if case.get("dream")}
    except (OSError, ValueError, AttributeError, TypeError):
        return {}


def score_all(cases: dict[Path, dict], results: Path, verbose: bool) -> tuple[list, list[str]]:
    """(scores, names of cases without a result); prints one summary line per case, then the total."""
    scores, missing = [], []
    for case_dir in cases:
        path = results / case_dir.name / "MEMORY.md"
        if path.is_file():
            text = scoring.read_text(path)
        else:
            say(f"missing result {path}: scored as an empty MEMORY.md")
            text = ""
            missing.append(case_dir.name)
        score = scoring.score_case(case_dir, text, case_dir.name)
        scores.append(score)
        print(scoring.case_line(score), flush=True)
        if verbose:
            list_failures(score)
    print(scoring.total_line(scores), flush=True)
    return scores, missing


def list_failures(score) -> None:
    """Every failed item of a case, one line each, on stderr."""
    for item in score.failures():
        print(f"  [{score.name}] {item['metric']}: {item['log']} {item['text'][:90]} -- {item['why']}",
              file=sys.stderr)


def figures(score) -> dict:
    """The summary line's figures as JSON numbers (None for na), with the counts behind them."""
    values = {}
    for key in scoring.SUMMARY_KEYS:
        shown = score.figure(key)
        values[key] = None if shown == "na" else (int(shown) if key == "secret_leak" else float(shown))
    return {"figures": values, "counts": {k: list(v) if isinstance(v, tuple) else v for k, v in score.counts.items()}}


def _judgment(args) -> str:
    """The judgment the dreams ran with, read as the dream reads it (--judgment is set on its settings)."""
    from core.config import Settings
    from core.dream.pipeline.stages import judgment_of

    settings = Settings()
    if getattr(args, "judgment", None):
        settings = settings.replace("dream", judgment=args.judgment)
    return judgment_of(settings)


def write_summary(results: Path, args, scores: list, runs: dict[str, dict], model: str, embeddings: str) -> Path:
    earlier = earlier_dreams(results) if args.score_only else {}
    cases = []
    for score in scores:
        sha = digest(results / score.name / "MEMORY.md")
        dream = runs.get(score.name)
        if dream is None and earlier.get(score.name, {}).get("result_sha256") == sha:
            dream = earlier[score.name]["dream"]   # the dream that wrote this very result
        cases.append({"name": score.name, "line": scoring.case_line(score), **figures(score),
                      "failed_items": len(score.failures()), "result_sha256": sha, "dream": dream,
                      "items": score.items})
    total = scoring.pooled(scores)
    summary = {"benchmark": "consolidation", "cases_dir": str(Path(args.cases).resolve()),
               "results_dir": str(results.resolve()), "mode": "score-only" if args.score_only else "dream",
               "model": model, "embeddings": embeddings, "judgment": _judgment(args),
               "written": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
               "line": scoring.total_line(scores), **figures(total), "cases": cases}
    path = results / "summary.json"
    path.write_text(json.dumps(summary, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return path


def cmd_bench_consolidation(args) -> int:
    cases = load_cases(Path(args.cases))
    results = Path(args.out)
    results.mkdir(parents=True, exist_ok=True)
    runs: dict[str, dict] = {}
    model, embeddings = "", ""
    if not args.score_only:
        llm, model = open_model(args)
        try:
            embeddings = check_embeddings()
            say(f"{len(cases)} case(s), model={model}, embeddings={embeddings}, results in {results}")
            runs = dream_all(cases, results, llm, args.judgment)
        finally:
            if llm is not None:
                llm.close()
    scores, missing = score_all(cases, results, args.verbose)
    say(f"summary written to {write_summary(results, args, scores, runs, model, embeddings)}")
    failed = [name for name, run in runs.items() if run["error"]]
    return 1 if failed or missing else 0
