"""`reverie bench arbiter`: the learned arbiter measured where it was not fitted, case by case.

For each labelled case of corpus/cases the arbiter is fitted on the other cases' rows (its
thresholds chosen among them), the real dream runs on the case with that fold, and the case is
scored as `reverie bench consolidation` scores it. The total line is what the shipped arbiter can be
expected to do on cases like these that it has never seen. By default both of its decisions are
measured (REVERIE_DREAM_ARBITER=all; the dream's default does not ask it yet, pools.py says why);
`--kinds` measures it for kinds only, `--duplicates` for relations taking only its repeats, `--off`
the hand-set policy.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Sequence

from core.bench import _consolidation_score as scoring
from core.bench._consolidation_dream import case_clock, dream_case
from core.bench.consolidation import list_failures
from core.dream.judgment import arbiter, arbiter_train
from core.dream.judgment.dataset import CorpusError


def register(sub) -> None:
    p = sub.add_parser("arbiter", help="the learned arbiter, leave one consolidation case out")
    p.add_argument("--collect", action="store_true",
                   help="first run the dream over every case and write its rows again (a minute or two)")
    p.add_argument("--cases", type=Path, help="labelled cases with rows.jsonl.gz (default: the corpus' cases)")
    p.add_argument("--off", action="store_true", help="the hand-set policy instead of the arbiter")
    p.add_argument("--kinds", action="store_true", help="the arbiter for kinds only")
    p.add_argument("--duplicates", action="store_true", help="the arbiter for relations, taking only its duplicates")
    p.add_argument("--out", type=Path, help="also keep each case's resulting MEMORY.md here")
    p.add_argument("-v", "--verbose", action="store_true", help="list every failed item on stderr")
    p.set_defaults(func=cmd_bench_arbiter)


def collect(cases: Sequence[Path]) -> list[dict]:
    """Run the real dream ("both", no model) over each case with the arbiter's decisions off, record
    the evidence of every decision it would have made (arbiter.recording) and label it from the case."""
    rows: list[dict] = []
    wanted = os.environ.get("REVERIE_DREAM_ARBITER")
    os.environ["REVERIE_DREAM_ARBITER"] = "all"      # both decisions asked (and, while recording, not used)
    try:
        for case in cases:
            rows.extend(_collect_case(case))
    finally:
        if wanted is None:
            del os.environ["REVERIE_DREAM_ARBITER"]
        else:
            os.environ["REVERIE_DREAM_ARBITER"] = wanted
    return rows


def _collect_case(case: Path) -> list[dict]:
    labels = json.loads((case / "labels.json").read_text(encoding="utf-8"))
    records: list[tuple[str, dict]] = []
    with arbiter.recording(lambda what, evidence: records.append((what, evidence))), \
            tempfile.TemporaryDirectory() as tmp:
        run = dream_case(case, Path(tmp) / "MEMORY.md", None, case_clock(labels["now"]), judgment="both")
    if not run.ok:
        raise CorpusError(f"{case.name}: the dream failed: {run.error}")
    found = arbiter_train.label_rows(case.name, records, labels)
    print(f"{case.name}: {sum(r['task'] == 'kinds' for r in found)} kind rows, "
          f"{sum(r['task'] == 'relations' for r in found)} relation rows", file=sys.stderr)
    return found


def cmd_bench_arbiter(args) -> int:
    folder = args.cases or arbiter_train.CASES
    if args.collect:
        arbiter_train.write_rows(folder / arbiter_train.ROWS, collect(arbiter_train.case_folders(folder)))
    rows = arbiter_train.read_rows(folder / arbiter_train.ROWS)
    scores = []
    what = "off" if args.off else "kinds" if args.kinds else "duplicates" if args.duplicates else "all"
    os.environ["REVERIE_DREAM_ARBITER"] = what
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
            list_failures(score)
    print(scoring.total_line(scores).replace("consolidation", f"arbiter {what}", 1))
    return 0
