"""Line numbers beside every editor, and a daily-log line shows the MEMORY.md bullets that cite it."""
from __future__ import annotations

from PySide6.QtGui import QTextCursor

from core.workspace import parse_document
from desktop.views.daily_log_editor import DailyLogEditor, citing_bullets
from desktop.views.memory_editor import MemoryEditor


def opened(qtbot, view):
    qtbot.addWidget(view)
    with qtbot.waitSignal(view.loaded, timeout=10_000):
        pass
    view.resize(900, 600)
    view.show()
    return view


def test_editors_number_their_lines(qtbot, demo_workspace, make_controller):
    editor = opened(qtbot, MemoryEditor(make_controller(demo_workspace), "MEMORY.md"))
    text = editor.editor
    assert text.gutter.isVisible() and text.gutter.width() >= text.gutter_width() > 0
    numbers = text.visible_numbers()
    assert numbers[:3] == [1, 2, 3] and len(numbers) > 5
    last = text.blockCount()
    assert last not in numbers                                   # the demo's MEMORY.md is longer than the view
    editor.goto_line(last)
    qtbot.waitUntil(lambda: last in text.visible_numbers(), timeout=5_000)


def test_a_log_line_shows_the_bullets_citing_it_and_opens_them(qtbot, demo_workspace, make_controller):
    ws = demo_workspace
    memory = ws.read_memory().text
    cited = next(s for b in parse_document(memory).bullets() for s in b.sources
                 if s.path.startswith("memory/") and s.lines)
    bullet_line = next(n for n, line in enumerate(memory.split("\n"), 1) if f"src:{cited.ref}" in line)
    assert citing_bullets(memory, cited.path)[cited.lines[0]][0][0] == bullet_line
    editor = DailyLogEditor(make_controller(ws), cited.path)
    qtbot.waitUntil(lambda: editor.base is not None and cited.lines[0] in editor.editor.marks, timeout=10_000)
    sign, tip = editor.editor.marks[cited.lines[0]]
    assert sign and f"line {bullet_line}" in tip
    opened_at = []
    editor.openRequested.connect(lambda path, line: opened_at.append((path, line)))
    items = editor.editor.menu_items(cited.lines[0])
    assert items and items[0][0].startswith(f"MEMORY.md line {bullet_line}")
    items[0][1]()
    assert opened_at == [("MEMORY.md", bullet_line)]
    assert editor.editor.menu_items(cited.lines[0] + 1000) == []
    qtbot.addWidget(editor)


def test_provenance_comments_fold_to_a_marker_without_changing_the_text(qtbot, demo_workspace, make_controller):
    editor = opened(qtbot, MemoryEditor(make_controller(demo_workspace), "MEMORY.md"))
    text_before = editor.text()
    line = next(n for n, t in enumerate(text_before.split("\n"), 1) if "<!--" in t)
    block = editor.editor.document().findBlockByNumber(line - 1)
    start = block.text().index("<!--")

    def comment_size() -> float:
        return next(r.format.fontPointSize() for r in block.layout().formats() if r.start <= start < r.start + r.length)

    def end_of_line() -> tuple[int, int]:
        """Where the line ends on screen (row first: a long line wraps)."""
        cursor = QTextCursor(block)
        cursor.movePosition(QTextCursor.MoveOperation.EndOfBlock)
        rect = editor.editor.cursorRect(cursor)
        return rect.y(), rect.x()
    unfolded = end_of_line()
    editor.fold_button.click()
    assert comment_size() == 1.0 and end_of_line() < unfolded
    assert editor.text() == text_before and not editor.dirty
    bullet = editor.bullet_on_line(line)
    assert bullet.id in editor.provenance_html(bullet)                   # the tooltip still tells it
    editor.fold_button.click()
    assert comment_size() != 1.0 and end_of_line() == unfolded


def test_a_gutter_deleted_first_is_never_touched_again(qtbot):
    """Closing a tab deletes the gutter before the editor's signals stop (app.log showed
    `Internal C++ object (_Gutter) already deleted`): scrolls, marks and resizes after it are ignored."""
    import shiboken6

    from desktop.views.line_numbers import NumberedText

    editor = NumberedText()
    qtbot.addWidget(editor)
    editor.show()
    editor.setPlainText("\n".join(f"line {i}" for i in range(200)))
    shiboken6.delete(editor.gutter)
    editor.set_marks({3: ("●", "cited")})
    editor.verticalScrollBar().setValue(50)
    editor.appendPlainText("one more")
    editor.resize(300, 200)
    editor.repaint()
    qtbot.wait(20)       # pytest-qt fails the test on an exception raised inside a Qt callback


def test_closing_daily_log_tabs_while_they_update(qtbot, demo_workspace):
    from PySide6.QtCore import QSettings

    from core.store.atomic import append_durable
    from desktop.main_window import MainWindow
    from tests.support.blocking_llm import no_model
    from tests.support.qt_views import discard_edits

    root = demo_workspace.root
    logs = sorted(p.relative_to(root).as_posix() for p in (root / "memory").glob("*.md"))[-4:]
    demo_workspace.close()
    win = MainWindow(QSettings(), controller_options={"schedule": False, "watch": False, "index": False,
                                                      "llm_factory": no_model})
    win.show()
    assert win.open_workspace(root)
    for round_ in range(3):
        views = [win.open_location(rel) for rel in logs]
        for rel, view in zip(logs, views):
            append_durable(root / rel, f"- [23:0{round_}] appended while the tab closes\n")
            view.check_disk()
            view.editor.verticalScrollBar().setValue(5)
        for view in views:
            win.close_tab(win.tabs.indexOf(view))
        qtbot.wait(50)
    discard_edits(win.views.values())
    win.close()
    win.deleteLater()
