"""The learned arbiter (core/dream/judgment/arbiter.py): its features, its models read with numpy, the
labelling of its training rows, and how the dream's kind and relation judgments use it. Decisions
fixed by hand (written into a temporary weights folder, arbiter.weights_from) check the wiring;
the shipped weights check one real line each. Lines written for this test."""
from __future__ import annotations

import json

import numpy as np
import pytest

from core.dream.judgment import arbiter, arbiter_train, kinds, pools, relations
from core.dream.judgment.heads import Head
from core.dream.judgment.relations import Candidate

BULLETS = [Candidate("a", "Weekly team call on Mondays at 10:00", 0.7),
           Candidate("b", "The office printer is on the second floor", 0.3)]
FACT = "The weekly team call moved to Tuesdays at 10:00"


def _network(classes, prefer: str) -> arbiter.Network:
    """A network that answers `prefer` for every input (zero weights, one large output bias)."""
    n = len(arbiter.CANDIDATE_FEATURES)
    bias = np.zeros(len(classes), dtype=np.float32)
    bias[list(classes).index(prefer)] = 10.0
    return arbiter.Network(tuple(classes), np.zeros((n, 4), np.float32), np.zeros(4, np.float32),
                           np.zeros((4, len(classes)), np.float32), bias)


def _constant_head(features: int, yes: bool) -> Head:
    return Head(("no", "yes"), np.zeros((2, features), np.float32),
                np.asarray([0.0, 10.0 if yes else -10.0], np.float32), "")


@pytest.fixture
def fixed(tmp_path):
    """Write fixed decisions into a temporary weights folder and use them."""
    def use(relations_prefer: str | None = None, lasting: bool | None = None):
        if relations_prefer is not None:
            arbiter.Decision(_network(arbiter.RELATION_CLASSES, relations_prefer), 0.5).save(
                arbiter.decision_path("relations", tmp_path))
        if lasting is not None:
            arbiter.Decision(_constant_head(len(arbiter.KIND_FEATURES), lasting), 0.5).save(
                arbiter.decision_path("kinds", tmp_path))
        return arbiter.weights_from(tmp_path)
    return use


def test_every_candidate_gets_one_row_of_every_feature():
    views = relations._views(FACT, BULLETS)
    x = arbiter.candidate_features(FACT, [c.text for c in BULLETS], [c.cosine for c in BULLETS],
                                   [False, False], views, None, 0.9)
    assert x.shape == (2, len(arbiter.CANDIDATE_FEATURES)) and np.isfinite(x).all()
    named = dict(zip(arbiter.CANDIDATE_FEATURES, x[0]))
    assert named["new_value"] == 1.0 and named["cosine_rank"] == 0.0      # another day, the nearest bullet
    assert dict(zip(arbiter.CANDIDATE_FEATURES, x[1]))["new_value"] == 0.0


def test_a_pin_can_only_be_broken_and_a_free_bullet_only_repeated_or_updated():
    classes = arbiter.RELATION_CLASSES
    conflict_everywhere = np.asarray([[0.1, 0.0, 0.0, 0.9], [0.1, 0.0, 0.0, 0.9]])
    assert arbiter.pick(classes, conflict_everywhere, [False, True]) == (1, "conflict", pytest.approx(0.9))
    update_everywhere = np.asarray([[0.2, 0.1, 0.7, 0.0], [0.0, 0.0, 1.0, 0.0]])
    index, kind, p = arbiter.pick(classes, update_everywhere, [False, True])
    assert (index, kind) == (0, "update") and p == pytest.approx(0.8)


def test_a_network_saved_and_loaded_answers_the_same(tmp_path):
    rng = np.random.default_rng(3)
    x = rng.normal(size=(120, 5))
    y = (x[:, 0] + x[:, 1] > 0).astype(int) + (x[:, 2] > 1.0)       # three classes, the third rare
    net = arbiter_train.fit_network(x, y, ("none", "duplicate", "update", "conflict"))
    decision = arbiter.Decision(net, 0.4)
    decision.save(tmp_path / "arbiter-relations.npz")
    again = arbiter.Decision.load(tmp_path / "arbiter-relations.npz")
    assert again.threshold == 0.4
    np.testing.assert_allclose(again.head.probabilities(x), net.probabilities(x), rtol=1e-6)
    probabilities = net.probabilities(x)
    assert probabilities[:, 3].max() < 1e-6                          # a class never seen gets nothing
    assert (probabilities.argmax(axis=1) == y).mean() > 0.8           # it learned the rows
    np.testing.assert_allclose(arbiter_train.fit_network(x, y, net.classes).hidden, net.hidden)   # deterministic


def test_the_rules_new_gives_way_to_the_arbiter_and_nothing_else_does(fixed):
    fact = "团队周会以后改到每周二上午十点"          # the English rules cannot read it: they say new
    assert relations.relate(fact, BULLETS).kind == relations.NEW
    assert relations._durable_probability(fact) >= pools.CUED_DURABLE_P
    with fixed(relations_prefer="update"):
        got = relations.relate(fact, BULLETS, policy=pools.HeadPolicy(arbiter=pools.ARBITER_TAKES["all"]))
        assert (got.kind, got.weighed) == (relations.UPDATE, True) and got.target in ("a", "b")
        # a numbered sibling is never taken, whatever the arbiter says
        siblings = [Candidate("v4", "Irrigation valve 4 is in the north field", 0.9)]
        assert relations.relate("Irrigation valve 3 is in the north field", siblings,
                                policy=pools.HeadPolicy(arbiter=pools.ARBITER_TAKES["all"])).kind == relations.NEW
        assert relations.relate(FACT, BULLETS, policy=pools.HeadPolicy(arbiter=pools.ARBITER_TAKES["all"])) == \
            relations.relate(FACT, BULLETS)                                  # the rules' update stands
    with fixed(relations_prefer="none"):
        got = relations.relate(fact, BULLETS, policy=pools.HeadPolicy(arbiter=pools.ARBITER_TAKES["all"]))
        assert got == relations.relate(fact, BULLETS)                       # the rules' own answer


def test_a_status_line_relates_to_nothing_whatever_the_arbiter_says(fixed):
    status = "_Status: all systems operational_ ✅"
    assert relations._durable_probability(status) < pools.CUED_DURABLE_P
    with fixed(relations_prefer="duplicate"):
        bullets = [Candidate("s", "Deploy target: Fly.io, region fra", 0.5)]
        assert relations.relate(status, bullets, policy=pools.HeadPolicy(arbiter=pools.ARBITER_TAKES["all"])) == \
            relations.relate(status, bullets)                                # the rules' answer stands


def test_the_kind_arbiter_decides_what_the_rules_call_durable_and_nothing_they_hold(fixed):
    lines = ["Prefers dark mode in every editor", "TODO: email the landlord", "Today I fixed a typo in the docs"]
    with fixed(lasting=False):
        held = kinds.classify_facts_both(lines, arbitrated=True)
        assert held[0].kind != kinds.DURABLE and held[0].by_head          # the arbiter held it back
        assert held[1].kind == kinds.TRANSIENT and not held[1].by_head     # the marker decided
        assert held[2].kind == kinds.ONE_OFF                               # the rules held it: they stand
        kept = kinds.classify_facts_both(lines, kept=["Prefers dark mode in every editor"], arbitrated=True)
        assert kept[0].kind == kinds.DURABLE                              # MEMORY.md already says it
    with fixed(lasting=True):
        assert [k.kind for k in kinds.classify_facts_both(lines, arbitrated=True)] == \
            [kinds.DURABLE, kinds.TRANSIENT, kinds.ONE_OFF]


def test_the_kind_arbiter_never_promotes_a_line_the_head_finds_a_secret(fixed):
    lines = ["Router admin login is admin with Kestrel_88!", "Locker combination 31-07-19"]   # no scanner shape
    classes, rows = kinds.heads.kind_probabilities(lines)
    assert all(classes[int(np.argmax(row))] == kinds.SECRET for row in rows)
    assert all(kinds.needs_head(line, kinds.word_kinds.classify_fact(line)) for line in lines)
    with fixed(lasting=True):
        assert all(k.kind != kinds.DURABLE for k in kinds.classify_facts_both(lines, arbitrated=True))


def test_the_dream_arbiter_setting_turns_each_half_on_and_the_environment_overrides_it(monkeypatch):
    monkeypatch.delenv("REVERIE_DREAM_ARBITER", raising=False)
    monkeypatch.delenv("REVERIE_DREAM_RELATIONS", raising=False)
    assert (pools.arbiter_on("kinds"), pools.arbiter_relations("kinds")) == (True, frozenset())
    assert (pools.arbiter_on("duplicates"), pools.arbiter_relations("duplicates")) == (False, {"duplicate"})
    assert (pools.arbiter_on("all"), pools.arbiter_relations("all")) == (True, {"duplicate", "update", "conflict"})
    assert (pools.arbiter_on("off"), pools.arbiter_relations("off")) == (False, frozenset())
    assert pools.HeadPolicy.of_process(True, "all").arbiter and not pools.HeadPolicy.of_process(False, "all").arbiter
    assert pools.arbiter_relations("") == pools.ARBITER_TAKES[pools.ARBITER_RELATIONS]
    monkeypatch.setenv("REVERIE_DREAM_ARBITER", "off")
    assert not pools.arbiter_on("all") and not pools.arbiter_relations("all")


def test_with_duplicates_only_an_update_the_arbiter_finds_is_left_to_the_hand_set_paths(fixed):
    fact = "团队周会以后改到每周二上午十点"
    with fixed(relations_prefer="update"):
        only = relations.relate(fact, BULLETS, policy=pools.HeadPolicy(arbiter=pools.ARBITER_TAKES["duplicates"]))
        assert only == relations.relate(fact, BULLETS)                      # not the arbiter's update
    with fixed(relations_prefer="duplicate"):
        got = relations.relate(fact, BULLETS, policy=pools.HeadPolicy(arbiter=pools.ARBITER_TAKES["duplicates"]))
        assert (got.kind, got.weighed) == (relations.DUPLICATE, True)


def test_a_dream_arbiter_setting_is_read_from_the_config_and_a_wrong_word_refused(tmp_path):
    from core.config import ConfigError, load_settings
    path = tmp_path / "config.toml"
    path.write_text('[dream]\narbiter = "kinds"\n', encoding="utf-8")
    assert load_settings(path).dream.arbiter == "kinds"
    path.write_text('[dream]\narbiter = "sometimes"\n', encoding="utf-8")
    with pytest.raises(ConfigError):
        load_settings(path)


def test_rows_are_labelled_from_the_case_labels():
    labels = {"items": [
        {"kind": "update", "text": "Team call moved to Tuesdays", "old": ["mondays"], "new": ["tuesdays"]},
        {"kind": "duplicate", "text": "Printer: second floor", "expect": ["printer"]},
        {"kind": "durable", "text": "Prefers dark mode", "expect": ["dark mode"]},
        {"kind": "transient", "text": "Waiting for the CI run", "expect": ["ci run"]},
        {"kind": "secret", "text": "The password is hunter2!", "expect": ["hunter2"]},
        {"kind": "update", "text": "Parking is now in lot C", "old": ["lot b"], "new": ["lot c"]}]}
    bullets = ["Weekly team call on Mondays", "The office printer is on the second floor"]
    x = [[0.0] * len(arbiter.CANDIDATE_FEATURES)] * 2
    records = [("relation", {"text": t, "bullets": bullets, "pinned": [False, False], "x": x})
               for t in ("- [09:00] Team call moved to Tuesdays", "Printer: second floor", "Prefers dark mode",
                         "Waiting for the CI run", "The password is hunter2!", "Parking is now in lot C",
                         "A line nobody labelled")]
    records.append(("kind", {"text": "Waiting for the CI run", "rule": "durable", "x": [0.0] * 10}))
    rows = arbiter_train.label_rows("case", records, labels)
    by_item = {(r["task"], r["item"]): r for r in rows}
    assert by_item[("relations", "update")]["gold"] == ["update", "none"]
    assert by_item[("relations", "duplicate")]["gold"] == ["none", "duplicate"]
    assert by_item[("relations", "durable")]["gold"] == ["none", "none"]
    assert by_item[("relations", "transient")]["gold"] == ["none", "none"]
    assert by_item[("kinds", "transient")]["y"] == 0
    assert len(rows) == 5       # no secret, no unlabelled line, no update whose bullet is not a candidate
    assert arbiter_train.right((0, "update"), ["update", "none"])
    assert not arbiter_train.right((1, "update"), ["none", "duplicate"])   # a repeat rewritten loses words
    assert arbiter_train.right(None, ["none", "none"]) and not arbiter_train.right(None, ["update", "none"])


def test_bad_rows_get_a_clear_error(tmp_path):
    from core.dream.judgment.dataset import CorpusError

    with pytest.raises(CorpusError, match="no rows"):
        arbiter_train.read_rows(tmp_path / "missing.jsonl.gz")
    (tmp_path / "plain.jsonl.gz").write_text("not gzip", encoding="utf-8")
    with pytest.raises(CorpusError, match="not gzipped"):
        arbiter_train.read_rows(tmp_path / "plain.jsonl.gz")
    rows = [{"case": "c", "task": "kinds", "x": [0.5], "y": 1, "item": "durable"}]
    arbiter_train.write_rows(tmp_path / "ok.jsonl.gz", rows)
    assert arbiter_train.read_rows(tmp_path / "ok.jsonl.gz") == rows
    first = (tmp_path / "ok.jsonl.gz").read_bytes()
    arbiter_train.write_rows(tmp_path / "ok.jsonl.gz", rows)
    assert (tmp_path / "ok.jsonl.gz").read_bytes() == first               # byte for byte


def test_the_shipped_rows_cover_every_case_and_both_tasks():
    rows = arbiter_train.read_rows(arbiter_train.CASES / arbiter_train.ROWS)
    cases = {p.name for p in arbiter_train.case_folders()}
    assert {r["case"] for r in rows} == cases and len(cases) >= 20
    assert {r["task"] for r in rows} == {"kinds", "relations"}
    for r in rows:
        if r["task"] == "relations":
            assert len(r["x"]) == len(r["gold"]) == len(r["pinned"])
            assert all(len(c) == len(arbiter.CANDIDATE_FEATURES) for c in r["x"])
        else:
            assert len(r["x"]) == len(arbiter.KIND_FEATURES)
    for case in arbiter_train.case_folders():
        labels = json.loads((case / "labels.json").read_text(encoding="utf-8"))
        assert labels["items"] and (case / "MEMORY.md").exists()


def test_a_workspaces_dream_arbiter_setting_reaches_its_dream(tmp_path, fixed, monkeypatch):
    """dream.arbiter = "duplicates" in the workspace's settings: a restatement the rules cannot read is
    the repeat the arbiter finds (the bullet gets a source, nothing is added); "off": it is added."""
    import datetime as dt

    from core.dream.pipeline.consolidator import run_dream
    from core.workspace import Workspace
    from tests.support.dreamkit import write_log

    monkeypatch.delenv("REVERIE_DREAM_ARBITER", raising=False)
    added = {}
    for setting in ("off", "duplicates"):
        workspace = Workspace.create(tmp_path / setting)
        try:
            snap = workspace.read_memory()
            workspace.write_memory("# MEMORY\n\n## Team\n- Weekly team call on Mondays at 10:00\n", snap.hash)
            write_log(workspace, "2026-12-05", ["团队周会固定在每周一上午十点开"])
            workspace.settings = workspace.settings.replace("dream", arbiter=setting)
            with fixed(relations_prefer="duplicate"):
                result = run_dream(workspace, None, now=dt.datetime(2026, 12, 6, 9, 0, tzinfo=dt.timezone.utc),
                                   apply=False)
            added[setting] = [c.after for c in result.proposal.changes if c.kind == "add"] if result.proposal else []
        finally:
            workspace.close()
    assert added["off"] and not added["duplicates"]
