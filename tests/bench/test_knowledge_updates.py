"""LongMemEval's knowledge-update questions as (older, newer) turn pairs, scored by the rules, the head
and "both" (core/bench/_knowledge_updates.py). Synthetic questions in LongMemEval's schema."""
from __future__ import annotations

import json

from core.bench._knowledge_updates import WAYS, update_pairs, update_recall
from core.dream.judgment.relations import UPDATE, Candidate, relate


def _question(qid, kind, old, new):
    return {"question_id": qid, "question_type": kind, "haystack_dates": ["2023/05/01", "2023/06/01"],
            "haystack_sessions": [[{"role": "user", "content": old, "has_answer": True},
                                   {"role": "assistant", "content": "Noted."}],
                                  [{"role": "user", "content": new, "has_answer": True}]]}


def test_each_way_scores_every_pair(tmp_path):
    path = tmp_path / "lme.jsonl"
    questions = [
        _question("q1", "knowledge-update", "My gym membership costs $40 a month.",
                  "Heads up, my gym raised the membership to $55 a month."),
        _question("q2", "knowledge-update", "I walk my dog Biscuit at 7am every day.",
                  "I've moved Biscuit's walk to 6:30am now that it gets hot earlier."),
        _question("q3", "single-session-user", "I like tea.", "I like coffee."),      # not an update question
    ]
    path.write_text("\n".join(json.dumps(q) for q in questions) + "\n", encoding="utf-8")
    pairs = update_pairs(path)
    assert [qid for qid, _old, _new in pairs] == ["q1", "q2"]
    for way in WAYS:
        replaced, total, missed = update_recall(path, way)
        assert total == 2 and replaced + len(missed) == 2 and set(missed) <= {"q1", "q2"}
    # "rules" is relate() with its defaults, pair by pair
    from core.dream.judgment.similarity import Similarity
    from core.index.embedding import default_embedder

    cosine = Similarity(default_embedder().embed_batch).score
    replaced, _total, missed = update_recall(path, "rules")
    expected = [qid for qid, old, new in pairs
                if relate(new, [Candidate("old", old, cosine(new, old))]).kind != UPDATE]
    assert missed == expected
