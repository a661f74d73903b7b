"""LongMemEval's knowledge-update questions as (older turn, newer turn) pairs for relate().

In a knowledge-update question two user turns in different sessions hold the evidence
(`has_answer`): the older one states the old value, the newer one the new value. A memory that
holds the older turn as a bullet should read the newer turn as its update. Measured only; never
training data.
"""
from __future__ import annotations

import json
from pathlib import Path


def update_pairs(path: Path) -> list[tuple[str, str, str]]:
    """(question id, older turn, newer turn) for every knowledge-update question with two evidence turns."""
    out = []
    with path.open(encoding="utf-8") as handle:
        for raw in handle:
            q = json.loads(raw)
            if q.get("question_type") != "knowledge-update":
                continue
            turns = []
            for date, session in zip(q["haystack_dates"], q["haystack_sessions"]):
                turns += [(date, t["content"]) for t in session if t.get("role") == "user" and t.get("has_answer")]
            turns.sort(key=lambda item: item[0])
            if len(turns) >= 2 and turns[0][1] != turns[-1][1]:
                out.append((q["question_id"], turns[0][1], turns[-1][1]))
    return out


def _ways() -> dict:
    from core.dream.judgment.pools import HeadPolicy

    return {"rules": {}, "head": {"learned": True}, "both": {"policy": HeadPolicy(everywhere=True)},
            "dream": {"policy": HeadPolicy.of_process(True)}}


# "both": the head overrides the rules wherever the corpus trusts it; "dream": what a dream with the
# default dream.judgment = "both" lets the head change in this process (pools.HeadPolicy.of_process).
WAYS = ("rules", "head", "both", "dream")


def update_recall(path: Path, way: str = "rules") -> tuple[int, int, list[str]]:
    """(replaced, pairs, ids missed): how often relate() reads the newer turn as an update of the older,
    decided `way`: by the word rules, the learned head, both (the rules unless the head is sure), or as
    a default dream decides."""
    from core.dream.judgment.relations import UPDATE, Candidate, relate
    from core.dream.judgment.similarity import Similarity
    from core.index.embedding import default_embedder

    cosine = Similarity(default_embedder().embed_batch).score
    pairs = update_pairs(path)
    decided = _ways()[way]
    missed = [qid for qid, old, new in pairs
              if relate(new, [Candidate("old", old, cosine(new, old))], **decided).kind != UPDATE]
    return len(pairs) - len(missed), len(pairs), missed
