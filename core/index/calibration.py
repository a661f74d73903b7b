"""The meaning floor on each model's own scale.

A cosine means different things under different models: two unrelated sentences
score about 0.0-0.1 under all-MiniLM-L6-v2 but about 0.7-0.8 under
multilingual-e5-small, so a floor of 0.25 would keep every line of the
workspace under e5. The floors (Tuning.min_similarity, min_similarity_alone)
were measured with MiniLM; for another model they are moved to the same place
above that model's chance level:

    floor_model = b_model + (floor - b_minilm) * (1 - b_model) / (1 - b_minilm)

where b is a model's *background*: the mean cosine between the unrelated
sentences of REFERENCE (every pair), computed once per model and kept in the
index. MiniLM's own floors are unchanged by construction (b_model = b_minilm).
No data set is involved: the reference sentences are about nothing in particular,
in the languages the bundled models read.
"""
from __future__ import annotations

REFERENCE = (
    "The train to the airport leaves every twenty minutes.",
    "She planted tomatoes and basil along the fence.",
    "The quarterly report is due on Friday.",
    "A cat slept on the warm windowsill all afternoon.",
    "Our router restarts itself when it overheats.",
    "He learned to play the cello at forty.",
    "The museum is closed on Mondays.",
    "Add two cups of flour and a pinch of salt.",
    "The bridge was repainted last spring.",
    "Please update the password before the audit.",
    "明天早上可能会下雨。",
    "他每天骑自行车上班。",
    "这家餐厅的饺子很好吃。",
    "会议推迟到下周三下午。",
    "图书馆新到了一批历史书。",
    "服务器的硬盘需要更换。",
    "El concierto empieza a las nueve.",
    "Der Zug hatte zehn Minuten Verspätung.",
)
MINILM_BACKGROUND = 0.1199  # b of all-MiniLM-L6-v2 on REFERENCE (the floors' own scale), measured by background()


def background(embedder) -> float:
    """Mean cosine over every pair of REFERENCE sentences under `embedder` (unit vectors)."""
    vectors = embedder.embed_batch(list(REFERENCE))
    sims = vectors @ vectors.T
    n = len(REFERENCE)
    return float((sims.sum() - sims.trace()) / (n * (n - 1)))


def model_floor(floor: float, model_background: float, reference: float = MINILM_BACKGROUND) -> float:
    """`floor` (on MiniLM's scale) moved to a model whose background is `model_background`."""
    return model_background + (floor - reference) * (1.0 - model_background) / (1.0 - reference)
