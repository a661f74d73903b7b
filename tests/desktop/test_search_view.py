"""Search view: as-you-type with debounce, modes, highlighted snippets, open at the line, stale results dropped."""
from __future__ import annotations

import time

import pytest
from PySide6.QtCore import Qt

from desktop.views.search_view import ROLE, SearchView


@pytest.fixture
def indexed(qtbot, demo_workspace, make_controller):
    controller = make_controller(demo_workspace)
    handle = controller.sync_index()
    qtbot.waitUntil(lambda: handle.done, timeout=120_000)
    return controller


def search_view(qtbot, controller) -> SearchView:
    view = SearchView(controller)
    qtbot.addWidget(view)
    return view


def test_typing_searches_after_the_debounce_and_opens_the_hit(qtbot, indexed):
    view = search_view(qtbot, indexed)
    view.mode.setCurrentIndex(view.mode.findData("keyword"))
    with qtbot.waitSignal(view.resultsShown, timeout=20_000) as shown:
        view.set_query("Keycloak")
    assert shown.args == ["Keycloak"]
    hits = view.hits()
    assert hits and any(path == "MEMORY.md" for path, _ in hits)
    first = view.list.item(0).text()
    assert "<span style='background:" in first                   # the matched word is highlighted
    assert "keycloak" in view.results.hits[0].text.lower()
    assert "hit(s)" in view.status.text() and "Keyword" in view.status.text()   # the menu's name, not "fts"
    assert "(words: keycloak)" in first                           # why it matched
    opened = []
    view.openRequested.connect(lambda path, line: opened.append((path, line)))
    view.list.itemActivated.emit(view.list.item(0))
    assert opened == [hits[0]]


def test_an_older_slower_query_never_overwrites_a_newer_one(qtbot, indexed, monkeypatch):
    ws = indexed.ws
    real = ws.search

    def search(query, **options):
        if query == "tea":
            time.sleep(1.0)             # the older query is slow (a cold cache, a busy disk)
        return real(query, **options)
    monkeypatch.setattr(ws, "search", search)
    view = search_view(qtbot, indexed)
    view.mode.setCurrentIndex(view.mode.findData("keyword"))
    view.query.setText("tea")
    view.run_query()
    view.query.setText("Keycloak")
    with qtbot.waitSignal(view.resultsShown, timeout=20_000):
        view.run_query()
    qtbot.waitUntil(lambda: view.stale_dropped == 1, timeout=20_000)
    assert view.shown_query == "Keycloak"
    assert view.results.query == "Keycloak"
    assert any("keycloak" in hit.text.lower() for hit in view.results.hits)


def test_fast_typing_runs_one_search_at_a_time_and_ends_on_the_newest(qtbot, indexed, monkeypatch):
    import threading

    ws = indexed.ws
    real = ws.search
    running, most, seen = [0], [0], []
    lock = threading.Lock()

    def search(query, **options):
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
            seen.append(query)
        try:
            time.sleep(0.2)
            return real(query, **options)
        finally:
            with lock:
                running[0] -= 1
    monkeypatch.setattr(ws, "search", search)
    view = search_view(qtbot, indexed)
    view.mode.setCurrentIndex(view.mode.findData("keyword"))
    for typed in ("K", "Ke", "Key", "Keyc", "Keycl", "Keycloak"):
        view.query.setText(typed)
        view.run_query()
    qtbot.waitUntil(lambda: view.shown_query == "Keycloak", timeout=20_000)
    assert most[0] == 1
    assert seen[0] == "K" and seen[-1] == "Keycloak" and len(seen) < 6   # the ones in between were skipped
    assert any("keycloak" in hit.text.lower() for hit in view.results.hits)


def test_modes_and_chinese_queries(qtbot, indexed):
    view = search_view(qtbot, indexed)
    for mode in ("keyword", "hybrid", "meaning"):
        view.mode.setCurrentIndex(view.mode.findData(mode))
        with qtbot.waitSignal(view.resultsShown, timeout=60_000):
            view.set_query("陈伟")
        if mode == "meaning" and view.results.pending_embeddings:
            # Answers from what is embedded so far, and says how much is still pending.
            assert "still being embedded" in view.status.text()
            assert indexed.ws.index.wait_embeddings(120)
            with qtbot.waitSignal(view.resultsShown, timeout=60_000):
                view.run_query()
        assert view.results.hits, mode
        if mode == "keyword":
            assert "陈伟" in view.results.hits[0].text
            assert "still being embedded" not in view.status.text()    # keyword search needs no vectors
    view.query.clear()
    view.run_query()
    assert view.list.count() == 0


def test_nearby_hits_are_marked_and_filters_narrow_the_search(qtbot, indexed):
    view = search_view(qtbot, indexed)
    view.mode.setCurrentIndex(view.mode.findData("keyword"))
    with qtbot.waitSignal(view.resultsShown, timeout=20_000):
        view.set_query("tea")
    results = view.results
    assert results.hits and results.nearby                       # the demo has both for "tea"
    assert all(hit.match == "words" and "tea" in hit.text.lower() for hit in results.hits)
    # The count is of the lines that hold the word; the nearby ones sit under their own heading, uncounted.
    assert view.status.text().startswith(f"{len(results.hits)} hit(s) for “tea”")
    assert f"{len(results.nearby)} nearby line(s) below, not counted" in view.status.text()
    heading = len(results.hits)
    assert "Nearby" in view.list.item(heading).text() and view.list.item(heading).data(ROLE) is None
    assert not view.list.item(heading).flags() & Qt.ItemFlag.ItemIsSelectable
    first_nearby = view.list.item(heading + 1).text()
    assert "matched nearby" in first_nearby and "color:gray" in first_nearby
    assert view.hits() == [(h.path, h.line) for h in results.hits + results.nearby]
    with qtbot.waitSignal(view.resultsShown, timeout=20_000):
        view.kind.setCurrentIndex(view.kind.findData("tasks"))
        view.query.setText("websockets")
        view.run_query()
    assert view.results.hits and {hit.kind for hit in view.results.hits} <= {"handoff", "checkpoint", "progress"}
    view.since.setText("not a date")
    view.run_query()
    assert "YYYY-MM-DD" in view.status.text()                    # said at once, nothing searched
    view.since.setText("1990-01-01")
    view.until.setText("1990-12-31")
    with qtbot.waitSignal(view.resultsShown, timeout=20_000):
        view.run_query()
    assert view.results.hits == [] and view.list.count() == 0
