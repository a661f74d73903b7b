"""Readers: session transcripts, hand-offs, the flush record, evicted results; the checkpoint editor."""
from __future__ import annotations

import json

from core.store.atomic import append_durable
from core.store.hashing import file_hash
from desktop.views.checkpoint_editor import CheckpointEditor
from desktop.views.daily_log_editor import DailyLogEditor
from desktop.views.flush_reader import FlushReader
from desktop.views.handoff_reader import HandoffReader
from desktop.views.session_reader import SessionReader
from desktop.views.text_reader import TextReader

from tests.support.qt_views import demo_log_with


def shown(qtbot, view):
    qtbot.addWidget(view)
    with qtbot.waitSignal(view.loaded, timeout=10_000):
        pass
    return view


def test_session_reader_colours_roles_folds_tool_calls_and_links_evicted_results(qtbot, demo_workspace,
                                                                                 make_controller):
    controller = make_controller(demo_workspace)
    reader = shown(qtbot, SessionReader(controller, "sessions/s-0018-disk.log.jsonl"))
    tree = reader.tree
    roles = {tree.topLevelItem(i).text(2) for i in range(tree.topLevelItemCount())}
    assert roles == {"system", "user", "assistant", "tool"}
    colours = {tree.topLevelItem(i).text(2): tree.topLevelItem(i).foreground(2).color().name()
               for i in range(tree.topLevelItemCount())}
    assert len(set(colours.values())) == 4                       # one colour per role
    calls = [tree.topLevelItem(i) for i in range(tree.topLevelItemCount())
             if any(tree.topLevelItem(i).child(j).text(2) == "call" for j in range(tree.topLevelItem(i).childCount()))]
    assert calls and not calls[0].isExpanded()                    # tool calls folded
    assert "run_shell" in calls[0].child(0).text(3)
    assert reader.evicted_links() == ["large_tool_results/s-0018-disk/call_s-0018-disk_log.txt"]
    opened = []
    reader.openRequested.connect(lambda path, line: opened.append(path))
    item = next(tree.topLevelItem(i).child(j) for i in range(tree.topLevelItemCount())
                for j in range(tree.topLevelItem(i).childCount()) if tree.topLevelItem(i).child(j).text(2) == "evicted")
    tree.itemActivated.emit(item, 0)
    assert opened == ["large_tool_results/s-0018-disk/call_s-0018-disk_log.txt"]


def test_session_reader_reports_damaged_lines_and_follows_appends(qtbot, demo_workspace, make_controller):
    ws = demo_workspace
    path = ws.paths.session_log("s-0003-hypertable")
    append_durable(path, "{not json\n")
    controller = make_controller(ws)
    reader = shown(qtbot, SessionReader(controller, "sessions/s-0003-hypertable.log.jsonl"))
    count = reader.tree.topLevelItemCount()
    assert reader.bar.kind == "warning" and "line" in reader.bar.text
    append_durable(path, json.dumps({"role": "user", "content": "one more"}) + "\n")
    with qtbot.waitSignal(reader.loaded, timeout=10_000):
        reader.check_disk()
    assert reader.tree.topLevelItemCount() == count + 1
    reader.goto_line(2)
    assert reader.tree.currentItem().text(0) == "2"


def test_handoff_reader_shows_the_packet_and_its_chain(qtbot, demo_workspace, make_controller):
    controller = make_controller(demo_workspace)
    reader = shown(qtbot, HandoffReader(controller, "handoffs/ho-orchard-oncall.json"))
    text = reader.view.toPlainText()
    assert "orchard-agent → jonas-agent" in text
    assert "Websockets for live charts overloaded staging" in text and "Done when" in text


def test_flush_reader_lists_outcomes_and_opens_the_lines(qtbot, demo_workspace, make_controller):
    ws = demo_workspace
    records = [{"ts": "2026-12-01T18:00:00+00:00", "session_id": "s-1", "outcome": "written", "messages": 12,
                "bullets": 2, "path": "memory/2026-11-06.md", "lines": [8, 9], "error": "", "model": "smollm2"},
               {"ts": "2026-12-01T19:00:00+00:00", "session_id": "s-2", "outcome": "no_reply", "messages": 4,
                "bullets": 0, "path": "", "lines": [0, 0], "error": "", "model": "smollm2"}]
    append_durable(ws.paths.flush_record, "".join(json.dumps(r) + "\n" for r in records))
    controller = make_controller(ws)
    reader = shown(qtbot, FlushReader(controller))
    outcomes = [reader.table.item(row, 1).text() for row in range(reader.table.rowCount())]
    assert outcomes[:2] == ["no_reply", "written"] and set(outcomes[2:]) <= {"in a log"}
    opened = []
    reader.openRequested.connect(lambda path, line: opened.append((path, line)))
    reader.table.cellDoubleClicked.emit(1, 0)
    assert opened == [("memory/2026-11-06.md", 8)]


def test_text_reader_shows_an_evicted_result(qtbot, demo_workspace, make_controller):
    controller = make_controller(demo_workspace)
    rel = "large_tool_results/s-0018-disk/call_s-0018-disk_log.txt"
    reader = shown(qtbot, TextReader(controller, rel))
    assert reader.text() == demo_workspace.read(rel).text and "read-only" in reader.title.text()


def test_daily_log_editor_marks_flush_blocks_and_merges_agent_appends(qtbot, demo_workspace, make_controller):
    ws = demo_workspace
    controller = make_controller(ws)
    rel = demo_log_with(ws, "compress after 7 days")
    editor = shown(qtbot, DailyLogEditor(controller, rel))
    assert editor.flush_blocks() == [8] and editor.flush_count.text() == "1 flush block"
    band = editor.highlighter.band
    block = editor.editor.document().findBlockByNumber(8)          # the bullet under the flush heading
    assert any(r.format.background().color().name() == band for r in block.layout().formats())
    found = editor.editor.document().find("compress after 7 days")
    found.insertText("compress after 14 days")
    ws.append_daily("Agent: a fact appended meanwhile", day=__import__("datetime").date.fromisoformat(rel[7:17]))
    with qtbot.waitSignal(editor.saved, timeout=10_000):
        editor.save()
    disk = ws.read(rel).text
    assert "compress after 14 days" in disk and "Agent: a fact appended meanwhile" in disk
    assert ws.history_entries(rel)


def test_checkpoint_editor_timeline_steps_artifacts_and_validation(qtbot, demo_workspace, make_controller):
    ws = demo_workspace
    (ws.root / "orchard").mkdir()
    (ws.root / "orchard" / "export.py").write_text("print('tenant aware')\n")
    controller = make_controller(ws)
    editor = shown(qtbot, CheckpointEditor(controller, "checkpoints/s-0028-csv-tenant"))
    assert editor.timeline.count() == 1
    qtbot.waitUntil(lambda: editor.json_editor is not None and editor.json_editor.base is not None, timeout=10_000)
    with qtbot.waitSignal(editor.summaryShown, timeout=10_000):
        editor.update_summary()
    summary = editor.summary.toPlainText()
    assert "Tenant-aware CSV export" in summary and "Fix test_tenant_isolation" in summary
    assert editor.states == {"orchard/export.py": "differs"}     # the demo's hash is of another version

    json_editor = editor.json_editor
    data = json.loads(json_editor.text())
    data["artifacts"]["orchard/export.py"] = file_hash(ws.root / "orchard" / "export.py")
    data["pending_steps"] = ["Update docs/runbook.md"]
    json_editor.editor.setPlainText(json.dumps(data, indent=2) + "\n")
    json_editor.editor.document().setModified(True)
    with qtbot.waitSignal(json_editor.saved, timeout=10_000):
        json_editor.save()
    with qtbot.waitSignal(editor.summaryShown, timeout=10_000):
        editor.update_summary()
    assert editor.states == {"orchard/export.py": "matches"}
    saved = json.loads(ws.read(json_editor.rel).text)
    assert saved["pending_steps"] == ["Update docs/runbook.md"]

    # Invalid JSON or schema: refused before anything is written.
    before = ws.read(json_editor.rel).text
    data["completed_steps"] = "not a list"
    json_editor.editor.setPlainText(json.dumps(data))
    json_editor.editor.document().setModified(True)
    assert json_editor.save() is None and "completed_steps" in json_editor.bar.text
    json_editor.editor.setPlainText("{broken")
    json_editor.editor.document().setModified(True)
    assert json_editor.save() is None and "not valid JSON" in json_editor.bar.text
    data["completed_steps"], data["session_id"] = [], "another-session"
    json_editor.editor.setPlainText(json.dumps(data))
    json_editor.editor.document().setModified(True)
    assert json_editor.save() is None and "session_id must stay" in json_editor.bar.text
    assert ws.read(json_editor.rel).text == before
    json_editor.editor.document().setModified(False)
