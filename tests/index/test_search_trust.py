"""Search a person can trust, on the bundled demo workspace: keyword hits hold the words, gibberish finds
nothing, compounds and hyphens match, every hit says why, and hand-offs/checkpoints are searched and filtered."""
from __future__ import annotations

import datetime as dt
import re

import pytest
from tests.support.files import write

from core.errors import CoreError
from core.index import fts
from core.index.filters import SearchFilter
from core.index.records import record_lines


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """One demo workspace for the module: these tests only read it (embedding it once is what costs)."""
    from core.demo import write_demo
    from core.workspace import Workspace

    root = tmp_path_factory.mktemp("trust") / "demo"
    write_demo(root)
    ws = Workspace.open(root)
    ws.sync_index()
    yield ws
    ws.close()


@pytest.fixture(scope="module")
def embedded_demo(demo, minilm):
    assert demo.index.wait_embeddings(300)
    return demo


def _holds(text: str, word: str) -> bool:
    return re.search(rf"\b{word}\b", text, re.IGNORECASE) is not None


def test_keyword_tea_hits_hold_the_word_and_nearby_ones_are_marked_and_last(demo):
    results = demo.search("tea", k=10, mode="keyword")
    hits = results.ranked
    assert results.hits and results.nearby and len(results) == len(results.hits)
    assert all(h.match == "words" for h in results.hits) and all(h.match == "nearby" for h in results.nearby)
    assert hits == results.hits + results.nearby                      # counted hits first, context after
    for hit in hits:
        assert hit.match in ("words", "nearby")
        if hit.match == "words":
            assert _holds(hit.text, "tea") and hit.words == ("tea",) and "«tea»" in hit.snippet
        else:
            assert not _holds(hit.text, "tea") and hit.words == ()
    kinds = [hit.match for hit in hits]
    assert kinds[0] == "words" and kinds == sorted(kinds, key=lambda m: m == "nearby")   # nearby never first
    # "tea" is short: it never stands for "team" or "teammates" through a prefix.
    assert not any(re.search(r"\bteam", h.text, re.IGNORECASE) and h.match == "words" for h in hits)


def test_a_line_found_only_nearby_never_outranks_one_holding_every_word(ws, keyword_index):
    # Ten lines that mention "backup" and "staging" around one line that says neither: the neighbours'
    # words make that line a strong BM25 match through its context.
    lines = ["- the backup to staging ran twice and staging kept the backup"] * 2 + ["- lunch was at noon"] + \
            ["- the backup to staging ran twice and staging kept the backup"] * 2 + \
            [f"- note {i}" for i in range(30)] + ["- backup staging"]
    write(ws, "memory/2026-11-01.md", "# 2026-11-01\n\n" + "\n".join(lines) + "\n")
    keyword_index.sync()
    hits = keyword_index.search("backup staging", k=10, mode="keyword").ranked
    lunch = next(i for i, h in enumerate(hits) if "lunch" in h.text)
    assert hits[lunch].match == "nearby"
    holding_all = [i for i, h in enumerate(hits) if set(h.words) == {"backup", "staging"}]
    assert holding_all and max(holding_all) < lunch


def test_keyword_timescale_finds_timescaledb(demo):
    hits = demo.search("timescale", k=10, mode="keyword").hits
    found = [h for h in hits if "TimescaleDB" in h.text]
    assert len(found) >= 2
    assert all(h.match == "words" and h.words == ("timescale",) and "«TimescaleDB»" in h.snippet for h in found)


def test_hyphenated_and_inflected_words(demo):
    on_call = [h for h in demo.search("on-call", k=10, mode="keyword").hits if h.match == "words"]
    assert on_call and all(re.search(r"on[- ]call", h.text, re.IGNORECASE) for h in on_call)
    assert any("«on-call»" in h.snippet for h in on_call)
    assert not any("«call»" in h.snippet for h in on_call)          # one term, not "call" alone
    deploy = [h.text for h in demo.search("deploy", k=10, mode="keyword").hits if h.match == "words"]
    assert any("deploys" in t for t in deploy) and any("Deployed" in t for t in deploy) and \
        any(re.search(r"\bdeploy\b", t) for t in deploy)


def test_query_words_stay_safe_literals():
    query = fts.parse_query('on-call -- a- -b "x-y" NEAR(a-b) e-mail 陈伟-固件')
    assert "on-call" in query.words and "e-mail" in query.words
    assert ('"on call"', '"oncall"') == next(g.alternatives for g in query.groups if g.word == "on-call")
    assert all(t.startswith('"') for t in query.terms)               # every piece quoted: no FTS5 syntax
    assert "陈伟" in query.words and "固件" in query.words             # the CJK path is unchanged
    assert fts.parse_query("the on").words == ("the", "on")           # stopwords only: still searched


def test_compounds_come_from_the_index_vocabulary_not_a_stemmed_prefix(ws, keyword_index):
    write(ws, "MEMORY.md", "## Notes\n- the runway was closed\n- running late again\n- PostgreSQL with TimescaleDB\n")
    keyword_index.sync()
    running = keyword_index.search("running", mode="keyword").hits
    assert [h.line for h in running if h.match == "words"] == [3]      # not "runway" (porter would cut to "run*")
    postgres = keyword_index.search("postgres", mode="keyword").hits
    assert postgres[0].line == 4 and postgres[0].match == "words"


@pytest.mark.parametrize("nonsense", ["zxqvbnm", "qqqq", "xkcd", "asdf qwerty", "blorptangle"])
def test_gibberish_finds_nothing_in_hybrid_or_meaning(embedded_demo, nonsense):
    # Each is near every line a little (cosine 0.2-0.42 on the demo); none of its words is in the index.
    for mode in ("hybrid", "meaning"):
        results = embedded_demo.search(nonsense, k=50, mode=mode)
        assert results.mode == mode and results.hits == [], mode


def test_gibberish_is_told_from_a_paraphrase_in_other_words(embedded_demo):
    from core.index.embedder import model_vocabulary

    vocabulary = model_vocabulary("")
    assert "beverages" in vocabulary and "zxqvbnm" not in vocabulary and not any(w.startswith("##") for w in vocabulary)
    assert embedded_demo.search("beverages", k=3, mode="meaning").hits     # no demo line says it; meaning finds some


def test_headings_are_not_meaning_hits(embedded_demo):
    for query in ("preferences", "progress", "what are the user's preferences"):
        hits = embedded_demo.search(query, k=20, mode="meaning").hits
        assert not any(h.text.lstrip().startswith("#") for h in hits), query


def test_each_hit_says_why_it_matched(embedded_demo):
    from core.index.hybrid import Tuning

    hybrid = embedded_demo.search("what does Maya drink", k=10, mode="hybrid").hits
    tea = next(h for h in hybrid if "tea" in h.text)
    assert tea.match == "both" and "maya" in tea.words and tea.similarity is not None and tea.similarity > 0.25
    meaning = embedded_demo.search("hot beverage preference", k=5, mode="meaning").hits
    assert meaning and all(h.match in ("meaning", "both") and h.similarity >= Tuning().min_similarity for h in meaning)
    as_json = tea.as_dict()
    assert as_json["match"] == "both" and as_json["words"] and 0 < as_json["similarity"] <= 1
    keyword = embedded_demo.search("tea", k=3, mode="keyword").hits
    assert all(h.similarity is None for h in keyword)                 # keyword search never embeds


def test_handoffs_checkpoints_and_progress_are_searched(demo):
    handoff = demo.search("websockets", k=5, mode="keyword", kinds=["handoff"]).hits
    assert handoff and handoff[0].path == "handoffs/ho-orchard-oncall.json" and handoff[0].kind == "handoff"
    assert handoff[0].text.startswith("failed attempts: Websockets")
    checkpoint = demo.search("tenant isolation", k=5, mode="keyword", kinds=["checkpoint"]).hits
    assert checkpoint and all(h.path.startswith("checkpoints/") for h in checkpoint)
    tasks = demo.search("SET LOCAL", k=10, mode="keyword", kinds=["tasks"]).hits
    assert {h.kind for h in tasks} == {"checkpoint", "progress"}
    assert not any(h.kind == "daily" for h in tasks)


def test_filters_by_kind_and_date(demo):
    everything = demo.search("Maya", k=50, mode="keyword").hits
    assert {h.kind for h in everything} >= {"memory", "daily"}
    memory = demo.search("Maya", k=50, mode="keyword", kinds="memory").hits
    assert memory and all(h.path == "MEMORY.md" for h in memory)
    days = sorted({h.path for h in everything if h.kind == "daily"})
    since = dt.date.fromisoformat(days[len(days) // 2][len("memory/"):-len(".md")])
    dated = demo.search("Maya", k=50, mode="keyword", since=since).hits
    assert dated and all(h.kind != "memory" for h in dated)           # undated lines leave a dated search
    assert all(h.path >= f"memory/{since.isoformat()}" for h in dated if h.kind == "daily")
    both = demo.search("Maya", k=50, mode="keyword", kinds=["daily"], since=since, until=since).hits
    assert both and {h.path for h in both} == {f"memory/{since.isoformat()}.md"}


def test_bad_filters_are_clear_errors():
    with pytest.raises(CoreError, match="unknown kind 'diary'"):
        SearchFilter.of(["diary"])
    with pytest.raises(CoreError, match="unknown kind 'bogus'"):
        SearchFilter.of("tasks, bogus")
    with pytest.raises(CoreError, match="YYYY-MM-DD"):
        SearchFilter.of(since="last tuesday")
    with pytest.raises(CoreError, match="empty"):
        SearchFilter.of(since="2026-12-01", until="2026-11-01")
    assert SearchFilter.of("daily,tasks").kinds == ("daily", "handoff", "checkpoint", "progress")


def test_meaning_search_applies_the_filter(embedded_demo):
    hits = embedded_demo.search("who covers on call while Maya is away", k=5, mode="meaning", kinds=["handoff"]).hits
    assert hits and all(h.path.startswith("handoffs/") for h in hits)


def test_record_lines_skip_ids_times_and_hashes():
    text = ('{\n  "id": "ho-1",\n  "created": "2026-11-20T10:00:00+00:00",\n  "from_agent": "a",\n'
            '  "completed_work": [\n    "Ingest \\"worker\\"",\n    "Alerts"\n  ],\n'
            '  "artifacts": {\n    "src/x.py": "' + "ab" * 32 + '"\n  },\n  "current_state": "healthy"\n}\n')
    lines, problems = record_lines("handoffs/ho-1.json", text)
    assert problems == []
    assert [(r.line, r.text) for r in lines] == [(4, "from agent: a"), (6, 'completed work: Ingest "worker"'),
                                                 (7, "completed work: Alerts"), (10, "artifacts: src/x.py"),
                                                 (12, "current state: healthy")]
    assert all(r.day == dt.date(2026, 11, 20) for r in lines)
    assert record_lines("handoffs/bad.json", "{ not json")[1]           # reported, not fatal
