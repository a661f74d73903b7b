"""`reverie bench arbiter`: the learned arbiter measured where it was not fitted, case by case.

For each labelled case of corpus/cases the arbiter is fitted on the other cases' rows (its
thresholds chosen among them), the real dream runs on the case with that fold, and the case is
scored as `reverie bench consolidation` scores it. The total line is what the shipped arbiter can be
expected to do on cases like these that it has never seen. By default both of its decisions are
measured (REVERIE_DREAM_ARBITER=all; the dream's default asks it about kinds only, pools.py says why);
`--kinds` measures the default, `--off` the hand-set policy (REVERIE_DREAM_ARBITER=off).
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

from core.bench import _consolidation_score as scoring


def register(sub) -> None:
    p = sub.add_parser("arbiter", help="the learned arbiter, leave one consolidation case out")
    p.add_argument("--cases", type=Path, help="labelled cases with rows.jsonl (default: the corpus' cases)")
    p.add_argument("--off", action="store_true", help="the hand-set policy instead of the arbiter")
    p.add_argument("--kinds", action="store_true", help="the dream's default: the arbiter for kinds only")
    p.add_argument("--out", type=Path, help="also keep each case's resulting MEMORY.md here")
    p.add_argument("-v", "--verbose", action="store_true", help="list every failed item on stderr")
    p.set_defaults(func=cmd_bench_arbiter)


def cmd_bench_arbiter(args) -> int:
    from core.bench._consolidation_dream import case_clock, dream_case
    from core.dream.judgment import arbiter, arbiter_train

    folder = args.cases or arbiter_train.CASES
    rows = arbiter_train.read_rows(folder / arbiter_train.ROWS)
    scores = []
    os.environ["REVERIE_DREAM_ARBITER"] = "off" if args.off else ("" if args.kinds else "all")
    fitted = dict(arbiter_train.folds(rows))
    for case in arbiter_train.case_folders(folder):
        labels = json.loads((case / "labels.json").read_text(encoding="utf-8"))
        with tempfile.TemporaryDirectory() as tmp:
            decisions = fitted[case.name]
            for task, decision in decisions.items():
                decision.save(arbiter.decision_path(task, Path(tmp)))
            with arbiter.weights_from(Path(tmp)):
                run = dream_case(case, Path(tmp) / "result" / "MEMORY.md", None, case_clock(labels["now"]),
                                 judgment="both")
            result = Path(tmp) / "result" / "MEMORY.md"
            score = scoring.score_case(case, scoring.read_text(result), case.name)
            if args.out:
                (args.out / case.name).mkdir(parents=True, exist_ok=True)
                shutil.copyfile(result, args.out / case.name / "MEMORY.md")
        if not run.ok:
            print(f"arbiter: case {case.name}: the dream failed: {run.error}")
        scores.append(score)
        print(scoring.case_line(score), flush=True)
        if args.verbose:
            for item in score.failures():
                print(f"  [{score.name}] {item['metric']}: {item['log']} {item['text'][:90]} -- {item['why']}",
                      file=__import__("sys").stderr)
    what = "off" if args.off else ("kinds" if args.kinds else "all")
    print(scoring.total_line(scores).replace("consolidation", f"arbiter {what}", 1))
    return 0
