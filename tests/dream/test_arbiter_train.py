"""The arbiter's training is reproducible: its rows come again from the real dream over a case, and the
shipped weights come again from the shipped rows (python -m core.dream.judgment.arbiter_train; the rows
come from `reverie bench arbiter --collect`)."""
from __future__ import annotations

import numpy as np
import pytest

from core.dream.judgment import arbiter, arbiter_train

pytestmark = pytest.mark.slow


def test_the_shipped_weights_come_again_from_the_shipped_rows(tmp_path):
    rows = arbiter_train.read_rows(arbiter_train.CASES / arbiter_train.ROWS)
    report = arbiter_train.train(rows, tmp_path)
    assert any(line.startswith("arbiter relations:") for line in report)
    for task in arbiter_train.TASKS:
        mine, shipped = (arbiter.Decision.load(arbiter.decision_path(task, folder)) for folder in
                         (tmp_path, arbiter.WEIGHTS))
        assert mine.threshold == shipped.threshold
        x = np.asarray([c for r in rows if r["task"] == task for c in (r["x"] if task == "relations" else [r["x"]])])
        np.testing.assert_allclose(mine.head.probabilities(x), shipped.head.probabilities(x), atol=1e-4)


def test_the_rows_of_a_case_come_again_from_its_dream():
    case = arbiter_train.case_folders()[0]
    from core.bench.arbiter_bench import collect

    again = collect([case])
    shipped = [r for r in arbiter_train.read_rows(arbiter_train.CASES / arbiter_train.ROWS) if r["case"] == case.name]
    assert [(r["task"], r["item"], r.get("gold"), r.get("y")) for r in again] == \
        [(r["task"], r["item"], r.get("gold"), r.get("y")) for r in shipped]
    for a, b in zip(again, shipped):
        np.testing.assert_allclose(np.asarray(a["x"], float), np.asarray(b["x"], float), atol=2e-3)
