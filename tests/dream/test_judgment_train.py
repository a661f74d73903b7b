"""train.py is deterministic: retraining from the corpus gives the committed weights and the same
scores (one BLAS thread, a fixed seed for the unrelated pairs)."""
from __future__ import annotations

import numpy as np
import pytest

from core.dream.judgment import dataset, heads, scores, train


def _scores(folder, model):
    data = train.build(model)
    kind = heads.Head.load(heads.head_path(heads.KIND_HEAD, not model, folder))
    relation = heads.Head.load(heads.head_path(heads.RELATION_HEAD, not model, folder))
    gate = heads.Head.load(heads.head_path(heads.RELATED_HEAD, not model, folder))
    kinds = train.predict_kinds(kind, data.kind_x)
    relations = train.predict_relations(relation, data.pair_x, data.pinned, gate)
    return (scores.macro_f1(list(data.kind_y), kinds, dataset.KINDS),
            scores.macro_f1(list(data.pair_y), relations, dataset.RELATIONS))


@pytest.mark.slow
@pytest.mark.parametrize("model", [None, train.DEFAULT_MODEL])
def test_retraining_gives_the_committed_weights_and_scores(tmp_path, model):
    train.train_all(model, tmp_path)
    for name in (heads.KIND_HEAD, heads.RELATION_HEAD, heads.RELATED_HEAD):
        mine = heads.Head.load(heads.head_path(name, not model, tmp_path))
        shipped = heads.Head.load(heads.head_path(name, not model))
        assert mine.classes == shipped.classes and mine.model == shipped.model
        assert np.allclose(mine.coef, shipped.coef, atol=1e-3) and np.allclose(mine.intercept, shipped.intercept, atol=1e-3)
    assert _scores(tmp_path, model) == pytest.approx(_scores(heads.WEIGHTS, model), abs=1e-3)
