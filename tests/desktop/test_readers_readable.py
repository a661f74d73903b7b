"""Readers a person can read: flush blocks found in the logs, the session cache laid out, transcript
times, and find-in-file in every reader."""
from __future__ import annotations

import datetime as dt
import json

from desktop.views.flush_reader import FlushReader
from desktop.views.handoff_reader import HandoffReader
from desktop.views.session_reader import SessionReader
from desktop.views.text_reader import TextReader

# The demo is written relative to today (core/demo.py: its first log is 28 days back); its third
# day holds the first flush block and the first session, its seventeenth another flush block.
_FIRST = dt.date.today() - dt.timedelta(days=28)
DEMO_DAY_3 = (_FIRST + dt.timedelta(days=2)).isoformat()
DEMO_DAY_17 = (_FIRST + dt.timedelta(days=16)).isoformat()


def shown(qtbot, view):
    qtbot.addWidget(view)
    with qtbot.waitSignal(view.loaded, timeout=10_000):
        pass
    return view


def test_the_flush_record_lists_the_flush_blocks_in_the_logs(qtbot, demo_workspace, make_controller):
    ws = demo_workspace
    assert not ws.paths.flush_record.exists()                  # the demo's logs have blocks but no record
    reader = shown(qtbot, FlushReader(make_controller(ws)))
    rows = [(reader.table.item(r, 1).text(), reader.table.item(r, 5).text()) for r in range(reader.table.rowCount())]
    assert len(rows) == 4 and {outcome for outcome, _where in rows} == {"in a log"}
    row = next(r for r, (_o, where) in enumerate(rows) if where.startswith(f"memory/{DEMO_DAY_3}.md#L8-L"))
    assert "No flush has run" not in reader.bar.text and "4 flush block(s)" in reader.title.text()
    opened = []
    reader.openRequested.connect(lambda path, line: opened.append((path, line)))
    reader.table.cellDoubleClicked.emit(row, 0)
    assert opened == [(f"memory/{DEMO_DAY_3}.md", 8)]


def test_the_session_cache_reads_as_summaries_with_their_time(qtbot, demo_workspace, make_controller):
    reader = shown(qtbot, TextReader(make_controller(demo_workspace), "sessions/cache.jsonl"))
    first = json.loads(demo_workspace.read("sessions/cache.jsonl").text.split("\n")[0])
    text = reader.text()
    assert f"{first['ended'][:10]} {first['ended'][11:16]} · {first['session_id']}\n    {first['summary']}" in text
    assert '{"session_id"' not in text
    assert reader.view.lineWrapMode() == reader.view.LineWrapMode.WidgetWidth


def test_transcripts_show_when_each_message_was_written(qtbot, demo_workspace, make_controller):
    reader = shown(qtbot, SessionReader(make_controller(demo_workspace), "sessions/s-0003-hypertable.log.jsonl"))
    first = reader.tree.topLevelItem(0)
    assert reader.tree.headerItem().text(1) == "time" and first.text(1) == f"{DEMO_DAY_3[5:]} 09:00"


def test_find_in_file_in_every_reader(qtbot, demo_workspace, make_controller):
    controller = make_controller(demo_workspace)
    text = shown(qtbot, TextReader(controller, "large_tool_results/s-0018-disk/call_s-0018-disk_log.txt"))
    word = next(w for w in text.text().split() if len(w) > 6)
    assert text.find_bar.find(word) and text.view.textCursor().selectedText() == word
    assert not text.find_bar.find("no such words anywhere") and text.find_bar.result.text() == "not found"
    session = shown(qtbot, SessionReader(controller, "sessions/s-0018-disk.log.jsonl"))
    assert session.find_bar.find("run_shell")
    assert "run_shell" in " ".join(session.tree.currentItem().text(c) for c in range(4))
    flushes = shown(qtbot, FlushReader(controller))
    assert flushes.find_bar.find(DEMO_DAY_17) and DEMO_DAY_17 in flushes.table.currentItem().text()
    handoffs = demo_workspace.handoffs()
    assert handoffs                                            # the demo has a hand-off
    reader = shown(qtbot, HandoffReader(controller, f"handoffs/{handoffs[0]['id']}.json"))
    assert reader.find_bar.find(str(handoffs[0]["to_agent"]))
