"""Near-duplicates with the real embedder (all-MiniLM-L6-v2), and the dream's vector cache."""
from __future__ import annotations

from core.dream.judgment.similarity import Similarity, grounded, lexical, load_similarity, numbers


def test_real_embeddings_find_paraphrases_but_not_different_numbers(workspace):
    sim = load_similarity(workspace.paths, workspace.settings)
    assert sim.semantic, "the bundled embedding model loads offline"
    same, score = sim.near_duplicate("Maya drinks tea, not coffee", "Maya drinks tea and not coffee")
    assert same and score >= 0.95
    different, score = sim.near_duplicate("Battery alert warns at 3.4 V", "Battery alert warns at 3.2 V")
    assert not different and score >= 0.9, "embeddings barely see the number; the guard does"
    assert not sim.near_duplicate("Maya drinks tea", "Deploys happen on Mondays")[0]
    related = sim.related("Maya switched to green tea", [("a", "Drinks tea, not coffee"),
                                                          ("b", "Readings live in a Timescale hypertable")])
    assert [key for key, _ in related] == ["a"]


def test_the_vector_cache_embeds_each_text_once_across_dreams(workspace):
    first = load_similarity(workspace.paths, workspace.settings)
    first.prepare(["fact one about sensors", "fact two about farms"])
    assert first.embedded == 2
    first.save_cache()
    second = load_similarity(workspace.paths, workspace.settings)
    second.prepare(["fact one about sensors", "fact two about farms", "a brand new fact"])
    assert second.embedded == 1
    assert abs(second.score("fact one about sensors", "fact one about sensors") - 1.0) < 1e-5
    (workspace.paths.private_dir / "dream-vectors.npz").write_bytes(b"damaged")
    third = load_similarity(workspace.paths, workspace.settings)
    third.prepare(["fact one about sensors"])
    assert third.embedded == 1, "a damaged cache is only a cache"


def test_word_similarity_without_an_embedder():
    sim = Similarity(None)
    assert sim.near_duplicate("Prefers tea over coffee.", "prefers TEA over coffee")[0]
    assert not sim.near_duplicate("Prefers tea over coffee", "Prefers coffee")[0]
    assert lexical("陈伟负责传感器固件", "传感器固件由陈伟负责") > 0.5
    assert grounded("Maya drinks green tea", "Maya now drinks green tea instead of black tea")
    assert not grounded("The moon is made of cheese", "Maya drinks green tea")
    assert numbers("warn at 3.4 V, critical at 3,2 V") == {"3.4", "3.2"}
    pairs = sim.duplicate_pairs(["A fact", "Another", "a fact."])
    assert pairs == [(0, 2, 1.0)]
