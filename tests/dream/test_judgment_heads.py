"""The learned judgment (dream.judgment = "learned"): the shipped heads on sentences written for this
test (not in the corpus), the pin rules, the leave-one-domain-out bench on a small corpus, the model
check's verdict, and the switch between the heads and the word rules."""
from __future__ import annotations

import json

import numpy as np
import pytest

from core.dream.judgment import dataset, scores
from core.dream.judgment.kinds import DURABLE, ONE_OFF, SECRET, TRANSIENT, classify_fact, classify_facts
from core.dream.judgment.relations import CONFLICT, DUPLICATE, NEW, UPDATE, Candidate, relate, restates_pin


def _not_in_corpus(*texts):
    known = {l.text for l in dataset.load_lines()} | {p.line for p in dataset.load_pairs()}
    assert not set(texts) & known


KIND_CASES = [
    ("TODO: renew the parking permit before it lapses", TRANSIENT),
    ("待办：周五前把季度报告整理出来", TRANSIENT),
    ("The db password is Hx7#kq(2026)!vault", SECRET),
    ("Our accountant is Ruth Ambler at Ambler & Co; she files the VAT return each quarter.", DURABLE),
    ("Lena prefers green tea, never coffee after lunch", DURABLE),
    ("老周负责机房的 UPS 维护", DURABLE),
]


@pytest.mark.parametrize("text,kind", KIND_CASES)
def test_kinds_of_new_sentences(text, kind):
    _not_in_corpus(text)
    assert classify_fact(text, learned=True).kind == kind, classify_fact(text, learned=True)


def test_the_head_runs_once_for_many_and_gives_each_its_own_kind():
    texts = [t for t, _k in KIND_CASES]
    assert [k.kind for k in classify_facts(texts, learned=True)] == [k for _t, k in KIND_CASES]
    assert classify_facts([], learned=True) == []


def test_a_secret_is_never_promoted_whatever_the_head_says():
    kind = classify_fact("api key for the weather service: sk-live-9fJ2kQ7xLm3Pz8Rt", learned=True)
    assert kind.kind == SECRET and not kind.promoted


PIN = "Never commit to main, even for typo fixes"


def test_agreement_with_a_pin_is_not_a_conflict():
    # The issue's own example: negation on both sides, the pin's own words.
    assert restates_pin("Never commit to main directly, even typo fixes", PIN)
    relation = relate("Never commit to main directly, even typo fixes", [Candidate("p1", PIN, 0.9, pinned=True)], learned=True)
    assert relation.kind == DUPLICATE and relation.label == "agreement"


def test_breaking_a_pin_is_a_conflict():
    relation = relate("Pushed the README typo fix straight to main to save time",
                      [Candidate("p1", PIN, 0.6, pinned=True)], learned=True)
    assert relation.kind == CONFLICT and relation.target == "p1"


def test_a_new_value_replaces_the_bullet_and_an_unrelated_bullet_is_left_alone():
    bullets = [Candidate("b1", "部署用 Jenkins，每晚构建一次", 0.6), Candidate("b2", "Likes hiking in the Peak District", 0.1)]
    relation = relate("部署已经改为 GitHub Actions，不再用 Jenkins 了", bullets, learned=True)
    assert relation.kind == UPDATE and relation.target == "b1"
    assert relate("Bought a new kettle for the studio kitchen", [bullets[1]], learned=True).kind == NEW
    assert relate("anything", [], learned=True).kind == NEW


def test_scores_count_what_they_should():
    truth = ["a", "a", "b", "b"]
    predicted = ["a", "b", "b", "b"]
    per = scores.per_class(truth, predicted, ("a", "b"))
    assert per["a"] == {"precision": 1.0, "recall": 0.5, "f1": pytest.approx(2 / 3), "support": 2}
    assert per["b"]["precision"] == pytest.approx(2 / 3) and per["b"]["recall"] == 1.0
    assert scores.confusion(truth, predicted, ("a", "b")) == [[1, 1], [0, 2]]
    assert scores.macro_f1(truth, predicted, ("a", "b", "c")) == pytest.approx((2 / 3 + 0.8) / 2)


def _small_corpus(folder):
    """Three domains, written for this test: enough for a text-only leave-one-domain-out run."""
    lines = {
        "garden": [("- The hose lives in the shed behind the compost", "durable"),
                   ("- TODO: buy slug pellets", "transient"), ("- Hail flattened the lettuces this afternoon", "one-off"),
                   ("- shed lock code is 4417#", "secret"), ("- 番茄每年三月在室内育苗", "durable"),
                   ("- 明天记得浇水", "transient")],
        "car": [("- The car is serviced at Dalton Motors every March", "durable"),
                ("- TODO: top up the screenwash", "transient"), ("- Got a flat tyre on the A6 this morning", "one-off"),
                ("- garage door pin 9031#", "secret"), ("- 车险每年十月续保", "durable"), ("- 明天去洗车", "transient")],
        "books": [("- Book club meets on the first Tuesday of the month", "durable"),
                  ("- TODO: return the library books", "transient"), ("- Met the author at the signing today", "one-off"),
                  ("- library login pin 5520#", "secret"), ("- 读书会每月第一个周二", "durable"), ("- 明天还书", "transient")],
    }
    pairs = {
        "garden": [("Waters the beds at 07:00", "Waters the beds at 06:30 now", "update", False),
                   ("Waters the beds at 07:00", "Beds get watered at 07:00", "duplicate", False),
                   ("Never use slug pellets near the pond", "Put slug pellets by the pond", "conflict", True),
                   ("Never use slug pellets near the pond", "Kept the pellets well away from the pond", "agreement", True)],
        "car": [("Car is serviced at Dalton Motors", "Car is serviced at Kirby Garage now", "update", False),
                ("Car is serviced at Dalton Motors", "Dalton Motors services the car", "duplicate", False),
                ("Never drive with the warning light on", "Drove home with the warning light on", "conflict", True),
                ("Never drive with the warning light on", "Left the car parked until the light was fixed", "agreement", True)],
        "books": [("Book club meets on Tuesdays", "Book club meets on Thursdays now", "update", False),
                  ("Book club meets on Tuesdays", "Tuesdays are book club", "duplicate", False),
                  ("Never lend signed copies", "Lent my signed copy to Sam", "conflict", True),
                  ("Never lend signed copies", "Kept the signed copies on my shelf", "agreement", True)],
    }
    for part in ("lines", "pairs"):
        (folder / part).mkdir(parents=True)
    for domain, rows in lines.items():
        (folder / "lines" / f"{domain}.jsonl").write_text("\n".join(json.dumps(
            {"id": f"{domain}-L{i}", "text": t, "kind": k, "lang": "zh" if "明" in t or "每" in t else "en",
             "shape": "bullet"}, ensure_ascii=False) for i, (t, k) in enumerate(rows)) + "\n", encoding="utf-8")
    for domain, rows in pairs.items():
        (folder / "pairs" / f"{domain}.jsonl").write_text("\n".join(json.dumps(
            {"id": f"{domain}-P{i}", "bullet": b, "line": l, "relation": r, "pinned": p, "lang": "en"})
            for i, (b, l, r, p) in enumerate(rows)) + "\n", encoding="utf-8")


def test_leave_one_domain_out_scores_every_line_once_and_prints_the_summary_line(tmp_path):
    from core.bench import judgment_bench

    _small_corpus(tmp_path)
    result = judgment_bench.leave_one_domain_out(None, tmp_path)
    assert len(result["kinds"]) == 18 and None not in result["kinds"]
    assert len(result["relations"]) == 12 and None not in result["relations"]
    fig = judgment_bench.figures(result)
    line = judgment_bench.summary_line(fig)
    assert line.startswith("judgment kinds_f1=") and line.endswith("languages=2 domains=3")
    assert set(fig["languages"]) >= {"en", "zh"}
    report = judgment_bench.report(fig)
    assert "| label \\ predicted | durable | transient | one-off | secret |" in report


def test_pools_train_the_heads_and_the_bench_decides_them_as_the_dream_would(tmp_path):
    from core.bench import judgment_bench, judgment_pools

    _small_corpus(tmp_path)
    pools = {"garden": ("Bed 1 grows kale", ["Bed 1 grows kale", "Bed 2 grows leeks", "Bed 2 gets the shade"], 0,
                        "duplicate"),
             "car": ("Tyre pressure is 2.4 bar now", ["Car is blue", "Tyre pressure is 2.2 bar", "Car is a Fiat"], 1,
                     "update"),
             "books": ("Book club reads poetry in May", ["Book club has six members", "Book club reads novels"], None,
                       "distinct")}
    (tmp_path / "pools").mkdir()
    for domain, (line, bullets, match, relation) in pools.items():
        (tmp_path / "pools" / f"{domain}.jsonl").write_text(json.dumps(
            {"id": f"{domain}-Q1", "lang": "en", "bullets": bullets, "pinned": [], "match": match,
             "relation": relation, "line": line}) + "\n", encoding="utf-8")
    result = judgment_bench.leave_one_domain_out(None, tmp_path)
    assert len(result["relations"]) == 12              # the corpus' pairs only: pools are scored apart
    decisions = result["decisions"]
    assert decisions["sizes"]["pools"] == 3 and decisions["sizes"]["pairs"] == 12
    assert set(decisions["table"]) >= {"rules", "head", "both@0.7"}
    assert all(0.0 <= v <= 1.0 for row in decisions["table"].values() for v in row.values())
    report = judgment_pools.report(decisions)
    assert "| rules |" in report and "overrides are right" in report
    assert judgment_pools.summary_line(decisions).startswith("relations rules=")


def test_the_model_check_verdict_is_stored_and_said_in_plain_words(tmp_path):
    from core.dream.judgment import model_check

    path = tmp_path / "checks.json"
    assert model_check.trusted_for("tiny", path) == frozenset()
    assert "not checked yet" in model_check.describe(None)
    fold = model_check.Fold([dataset.Line("a", "d", "x", "durable", "en", ""),
                             dataset.Line("b", "d", "y", "transient", "en", "")],
                            [dataset.Pair("p", "d", "b", "l", "update", False, "en"),
                             dataset.Pair("q", "d", "b", "m", "distinct", False, "en")])
    verdict = model_check.verdict(fold, ["durable", "durable"], ["update", "distinct"],
                                  ["durable", "transient"], ["distinct", "distinct"])
    assert verdict["use_for"] == ["relations"]
    model_check.store_check("tiny", verdict, path)
    assert model_check.trusted_for("tiny", path) == frozenset({"relations"})
    assert model_check.describe(verdict).startswith("good enough for relations, not for kinds")


def test_the_model_is_asked_in_batches_with_a_schema(tmp_path):
    from tests.support.fakes import ScriptedLLM

    from core.dream.judgment import model_check

    def reply(messages):
        count = messages[-1]["content"].count("\n") if "pair" not in messages[-1]["content"] else \
            messages[-1]["content"].count("new line:")
        return json.dumps({"answers": ["durable"] * count})

    llm = ScriptedLLM(reply)
    lines = [dataset.Line(str(i), "d", f"line {i}", "durable", "en", "") for i in range(8)]
    assert model_check.model_kinds(llm, lines) == ["durable"] * 8
    assert len(llm.calls) == 2          # batches of six


def test_a_dream_asks_a_model_only_where_its_check_did_not_find_it_worse(tmp_path, monkeypatch):
    from types import SimpleNamespace

    from tests.support.fakes import ScriptedLLM

    from core.dream.judgment import model_check
    from core.dream.pipeline import stages

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    ctx = SimpleNamespace(llm=ScriptedLLM([]))
    assert stages._model_trust(ctx) == ""                    # never checked: it may only pick among the head's answers
    model_check.store_check("scripted", {"use_for": []})
    assert stages._model_trust(ctx) == "worse"               # measured worse: not asked
    model_check.store_check("scripted", {"use_for": ["relations"]})
    assert stages._model_trust(ctx) == "better"
    assert model_check.checks_file() == tmp_path / "reverie" / "model-checks.json"


def test_a_trusted_model_may_pick_any_answer_that_fits_the_bullets_shown():
    from core.dream.pipeline import judge
    from core.dream.pipeline.material import Fact

    fact = Fact("Standup moved to 10:00", ("memory/2026-11-09.md#L1",), "2026-11-09")
    pool = [(Candidate("b1", "Standup is at 09:30", 0.8), None), (Candidate("p1", "Never skip standup", 0.5, True), None)]
    rule = relate(fact.text, [c for c, _ in pool], learned=True)
    loose = judge.allowed(fact, rule, pool, None, trusted=True, learned=True)
    assert {("new", ""), ("update", "b1"), ("duplicate", "b1"), ("conflict", "p1")} <= loose
    assert ("update", "p1") not in loose
    assert judge.allowed(fact, rule, pool, None, learned=True) <= loose


def test_a_long_line_is_judged_whole():
    """Nothing cuts a fact: two 700-character lines that differ only in their last words get
    different sentence vectors, n-grams and relation probabilities."""
    from core.dream.judgment import features, heads

    head = "Notes from the long planning call with the venue, the caterer and the band about the summer party. " * 7
    a, b = head + "The deposit is now 900 euros.", head + "The deposit is now 400 euros."
    assert len(a) > 700
    vectors = heads.VECTORS.of([a, b], heads.load_head(heads.KIND_HEAD, False).model)
    assert vectors is not None and not np.allclose(vectors[0], vectors[1])
    assert not np.allclose(features.line_features([a], None), features.line_features([b], None))
    _classes, probs, _related = heads.relation_probabilities(["The deposit is 400 euros"] * 2, [a, b], [False, False])
    assert not np.allclose(probs[0], probs[1])


def test_a_new_fact_about_a_pinned_facts_subject_is_news_not_the_pin():
    relation = relate("Maya prefers dark mode screenshots",
                      [Candidate("p1", "Maya is a backend engineer in Lisbon", 0.5, pinned=True)], learned=True)
    assert relation.kind == NEW, relation


def test_the_word_rules_decide_unless_the_learned_heads_are_asked_for(monkeypatch):
    from types import SimpleNamespace

    from core.config import Settings
    from core.dream.pipeline import stages

    settings = Settings()
    assert settings.dream.judgment == "both" and not stages._learned(SimpleNamespace(settings=settings))
    assert stages._learned(SimpleNamespace(settings=settings.replace("dream", judgment="learned")))
    monkeypatch.setenv("REVERIE_DREAM_JUDGMENT", "learned")
    assert stages._learned(SimpleNamespace(settings=settings))
    # The two judge differently: the word rules read a reversed order, the head does not (yet).
    fact, bullet = "Prefers coffee over tea in the afternoon", "Prefers tea over coffee in the afternoon"
    assert relate(fact, [Candidate("b1", bullet, 0.99)]).kind == UPDATE


def test_by_default_the_head_holds_back_what_the_rules_miss_and_only_when_sure():
    from core.dream.judgment.kinds import classify_facts_both
    from core.dream.judgment import word_kinds

    # Written for this test (not in the corpus): a to-do in a phrasing the word rules do not know,
    # and plain settings the head must leave durable (it reads the port line as status, unsure).
    lines = ["Still need to chase the landlord about the boiler", "The export service listens on port 8443",
             "Maya's dentist is Dr. Okafor on Rua Augusta"]
    rules = [word_kinds.classify_fact(t).kind for t in lines]
    both = [k.kind for k in classify_facts_both(lines)]
    assert rules == ["durable"] * 3
    assert both == ["transient", "durable", "durable"], both
    assert [k.kind for k in classify_facts_both(lines, veto_p=1.01)] == rules    # never sure enough: rules alone


def test_the_head_holds_a_rules_durable_fact_back_only_when_sure_and_never_a_restated_bullet():
    import numpy as np
    from core.dream.judgment.kinds import VETO_P, classify_facts_both, vetoed

    classes = ("durable", "one-off", "secret", "transient")
    assert vetoed(np.asarray([0.02, 0.0, 0.0, 0.98]), classes) == 3
    assert vetoed(np.asarray([0.3, 0.05, 0.0, 0.65]), classes) is None          # unsure: kept
    assert vetoed(np.asarray([0.6, 0.0, 0.0, 0.4]), classes, veto_p=0.5) is None  # head says durable
    # what counts is p(not durable): split between event and status, still sure it is no lasting fact
    assert vetoed(np.asarray([0.1, 0.42, 0.0, 0.48]), classes, veto_p=0.85) == 3
    assert vetoed(np.asarray([0.1, 0.42, 0.0, 0.48]), classes, veto_p=0.95) is None
    # Written for this test: a to-do in words the rules do not know. Said word for word by a bullet
    # already in MEMORY.md, it is what the person keeps, and the head does not hold it back.
    todo = "Still need to chase the landlord about the boiler"
    assert classify_facts_both([todo])[0].kind == "transient"
    assert classify_facts_both([todo], kept=["still need to chase the landlord about the boiler."])[0].kind == "durable"
    assert classify_facts_both([todo], veto_p=1.01)[0].kind == "durable"
    assert 0.5 < VETO_P < 1


def test_the_rules_evidence_is_a_feature_of_the_kind_head():
    from core.dream.judgment import features, word_kinds

    # Written for this test: a to-do by the rules' words, a lasting rule, and a plain setting.
    todo, rule, plain = (word_kinds.rule_signals(t) for t in (
        "Waiting on the glazier's quote", "From now on the glazier quotes in writing", "The sauna heater is set to 80 °C"))
    assert todo[0] > 0 and todo[3] == 1.0 and rule[2] > 0 and rule[3] == 0.0 and plain == [0.0, 0.0, 0.0, 0.0]
    row = features.line_features(["Waiting on the glazier's quote"], None)[0]
    assert list(row[-4:]) == todo


def test_the_promotion_table_counts_what_each_judgment_promotes():
    import numpy as np
    from core.bench import judgment_kinds

    texts = ["The sauna heater is set to 80 °C", "TODO: descale the kettle", "Lunch with Ilse today",
             "Waiting on the glazier's quote"]
    truth = ["durable", "transient", "one-off", "transient"]
    classes = ("durable", "transient", "one-off", "secret")
    probs = np.asarray([[0.9, 0.1, 0, 0], [0.2, 0.8, 0, 0], [0.1, 0.1, 0.8, 0], [0.95, 0.05, 0, 0]])
    fig = judgment_kinds.table(truth, texts, probs, classes)
    from core.dream.judgment.kinds import VETO_P
    name = "both, veto p>=0.9" + (" (shipped)" if VETO_P == 0.9 else "")
    assert fig[name]["transient_leak"] == 0.0        # the rules catch the waiting line
    head = fig["head"]
    assert head["durable_recall"] == 1.0 and head["durable_precision"] == 0.5
    assert head["transient_leak"] == 0.5 and head["one_off_leak"] == 0.0
    rules = fig["rules"]
    assert rules["transient_leak"] == 0.0 and rules["one_off_leak"] == 0.0 and rules["durable_recall"] == 1.0
    assert "| rules | 1.000 |" in judgment_kinds.report(fig)


def test_the_veto_rule_is_read_off_the_lines_where_the_veto_decides():
    import numpy as np
    from core.bench import judgment_kinds

    # Written for this test: two settings the head is unsure of, an English status line, a Chinese
    # status line (the head's alone, whatever the veto) and a French to-do (its marker decides).
    texts = ["The sauna heater is set to 80 °C", "Choir meets on Thursdays at 19:30", "Printer toner swapped, all good",
             "冰柜这两天有点响，在观察", "À faire : rendre la perceuse à Paul"]
    truth = ["durable", "durable", "transient", "transient", "transient"]
    classes = ("durable", "transient", "one-off", "secret")
    probs = np.asarray([[0.45, 0.55, 0, 0], [0.2, 0.4, 0.4, 0], [0.08, 0.9, 0.02, 0], [0.3, 0.7, 0, 0],
                        [0.9, 0.1, 0, 0]])
    read = judgment_kinds.veto_table(truth, texts, probs, classes)
    assert read["rules"]["durable_recall"] == 1.0 and read["rules"]["transient_leak"] == 1.0   # 3 lines only
    # p(not durable) of the two settings is 0.55 and 0.8: only a veto above 0.8 keeps both
    at = {name.split(">=")[1].split()[0]: v for name, v in read.items() if name.startswith("both")}
    assert at["0.85"]["durable_recall"] == 1.0 and at["0.8"]["durable_recall"] == 0.5
    assert judgment_kinds.chosen_veto(read) == 0.85
    assert at["0.85"]["transient_leak"] == 0.0       # the status line, p 0.92
    assert "veto rule" in judgment_kinds.report(judgment_kinds.table(truth, texts, probs, classes), read)


def test_the_gate_weighs_pinned_pairs_so_a_reported_act_is_not_turned_away_from_its_pin(tmp_path, monkeypatch):
    """A line that breaks or keeps a pin shares few of its words; the gate learns the corpus' pinned
    pairs at PINNED_GATE_WEIGHT, so it finds them more related than at weight 1."""
    from core.dream.judgment import train

    _small_corpus(tmp_path)
    data = train.build(None, tmp_path)
    rows = np.ones(len(data.pairs), dtype=bool)
    pinned = data.pair_real & data.pinned

    def related_of_pins(weight):
        monkeypatch.setattr(train, "PINNED_GATE_WEIGHT", weight)
        _head, gate = train.fit_relations(data, rows, None)
        return gate.probabilities(data.pair_x[pinned])[:, gate.classes.index("related")].mean()

    assert train.PINNED_GATE_WEIGHT > 1
    assert related_of_pins(train.PINNED_GATE_WEIGHT) > related_of_pins(1.0) + 0.01
