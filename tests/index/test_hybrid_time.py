"""Times named in a query ("two weeks ago", "last weekend", "in March") favour lines of those days (Tuning.time_boost)."""
from __future__ import annotations

import datetime as dt

import pytest
from tests.support.files import write

from core.config import SearchSettings
from core.index import SearchIndex
from core.index.hybrid import Tuning, find_time

TODAY = dt.date(2026, 11, 30)   # a Monday


@pytest.mark.parametrize("query, window", [
    ("what did I cook a couple of days ago", (dt.date(2026, 11, 27), dt.date(2026, 11, 29))),
    ("the milestone I mentioned four weeks ago", (dt.date(2026, 10, 25), dt.date(2026, 11, 10))),
    ("3 days ago", (dt.date(2026, 11, 26), dt.date(2026, 11, 28))),
    ("yesterday's meeting", (dt.date(2026, 11, 29), dt.date(2026, 11, 29))),
    ("where did I go last weekend", (dt.date(2026, 11, 28), dt.date(2026, 11, 29))),
    ("last month", (dt.date(2026, 10, 1), dt.date(2026, 10, 31))),
    ("appointments in March", (dt.date(2026, 3, 1), dt.date(2026, 3, 31))),
    ("the BBQ in December", (dt.date(2025, 12, 1), dt.date(2025, 12, 31))),   # the latest December so far
])
def test_time_window(query, window):
    assert find_time(query, TODAY)[0] == window


@pytest.mark.parametrize("query", ["may I ask about tea", "how many days did I spend", "a weekend trip", ""])
def test_no_time_named(query):
    assert find_time(query, TODAY) is None


def _workspace(ws):
    write(ws, "memory/2026-11-02.md", "# 2026-11-02\n\n- Went climbing at the boulder gym with Sam.\n- Rainy day.\n")
    write(ws, "memory/2026-11-16.md", "# 2026-11-16\n\n- Went climbing at the boulder gym with Sam.\n- Sunny.\n")
    write(ws, "memory/2026-11-29.md", "# 2026-11-29\n\n- Went climbing at the boulder gym with Sam.\n- Cold.\n")


def _first(index, query, mode="fts"):
    return index.search(query, k=3, mode=mode, today=TODAY).hits[0].path


def test_time_boost_picks_the_day_the_query_names(ws):
    _workspace(ws)
    with SearchIndex(ws, ws / ".reverie" / "index.db", SearchSettings(), embedder=False,
                     tuning=Tuning(time_boost=0.5)) as index:
        index.sync()
        assert _first(index, "who did I go climbing with two weeks ago") == "memory/2026-11-16.md"
        assert _first(index, "who did I go climbing with four weeks ago") == "memory/2026-11-02.md"
        assert _first(index, "who did I go climbing with yesterday") == "memory/2026-11-29.md"
        # no time named: the boost leaves the scores as they were
        boosted = [(h.path, h.score) for h in index.search("climbing with Sam", k=3, mode="fts", today=TODAY).hits]
    with SearchIndex(ws, ws / ".reverie" / "index.db", SearchSettings(), embedder=False) as index:
        assert [(h.path, h.score) for h in index.search("climbing with Sam", k=3, mode="fts").hits] == boosted


def test_without_time_boost_the_query_time_changes_nothing(ws):
    _workspace(ws)
    with SearchIndex(ws, ws / ".reverie" / "index.db", SearchSettings(), embedder=False) as index:
        index.sync()
        plain = [h.path for h in index.search("climbing with Sam", k=3, mode="fts").hits]
        named = [h.path for h in index.search("climbing with Sam four weeks ago", k=3, mode="fts", today=TODAY).hits]
        assert named == plain


@pytest.mark.slow
def test_time_boost_in_hybrid_search(ws, minilm):
    _workspace(ws)
    with SearchIndex(ws, ws / ".reverie" / "index.db", SearchSettings(), embedder=minilm, background=False,
                     tuning=Tuning(time_boost=0.5)) as index:
        index.sync()
        assert index.search("x", mode="hybrid").mode == "hybrid"
        assert _first(index, "who did I go climbing with two weeks ago", "hybrid") == "memory/2026-11-16.md"


def test_the_time_phrase_is_not_searched_as_words(ws):
    from core.index.hybrid import find_time

    assert find_time("the milestone I mentioned four weeks ago?", TODAY)[1] == "the milestone I mentioned ?"
    assert find_time("appointments in March", TODAY)[1] == "appointments in March"   # dates are words of lines
    assert find_time("yesterday", TODAY)[1] == "yesterday"
    write(ws, "memory/2026-11-02.md", "# 2026-11-02\n\n- Signed the contract with our first client.\n")
    write(ws, "memory/2026-11-20.md", "# 2026-11-20\n\n- Replaced the bath mat about four weeks ago.\n")
    with SearchIndex(ws, ws / ".reverie" / "index.db", SearchSettings(), embedder=False,
                     tuning=Tuning(time_boost=0.5)) as index:
        index.sync()
        hits = index.search("what contract milestone did I mention four weeks ago", mode="fts", today=TODAY).hits
        assert [h.path for h in hits] == ["memory/2026-11-02.md"]
