"""Layout that fits: 1024×640 with the chat open, a chat that never widens the window, a review whose
Accept/Reject stay in view (and work from the keyboard), messages that do not move the rows, and
WCAG AA contrast for every colour the views draw, in both themes."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QToolButton

from desktop import theme
from desktop.views.change_list import STATE
from desktop.views.dream_view import DreamView
from tests.support.blocking_llm import no_model
from tests.support.dreamkit import review_workspace
from tests.support.qt_views import discard_edits


@pytest.fixture
def window(qtbot, demo_workspace):
    from desktop.main_window import MainWindow

    root = demo_workspace.root
    demo_workspace.close()
    win = MainWindow(QSettings(), controller_options={"schedule": False, "watch": False, "index": False,
                                                      "llm_factory": no_model})
    win.show()
    assert win.open_workspace(root)
    yield win
    discard_edits(win.views.values())
    win.close()
    win.deleteLater()


def test_the_window_fits_1024_by_640_with_every_view_and_the_chat_open(qtbot, window):
    for kind, rel in (("search", ""), ("dreams", ""), ("memory", "MEMORY.md")):
        window.open_view(kind, rel)
    window.toggle_chat()
    qtbot.waitUntil(lambda: window.chat is not None and window.chat.isVisible())
    assert window.minimumSizeHint().width() <= 1024 and window.minimumSizeHint().height() <= 640
    window.resize(1024, 640)
    qtbot.waitUntil(lambda: window.width() == 1024)
    assert window.sidebar.width() >= 160                       # not squashed
    assert window.chat.input.width() >= 120                    # room to type
    window.resize(2560, 1440)
    qtbot.waitUntil(lambda: window.width() == 2560)


def test_a_long_chat_status_never_widens_the_window(qtbot, window):
    window.resize(1280, 800)
    window.toggle_chat()
    qtbot.waitUntil(lambda: window.chat is not None and window.chat.isVisible())
    width = window.width()
    window.chat.status.setText("the model's tool call repeated its description; answered from the recalled "
                               "memory lines " * 4)
    window.chat._append("agent", "x" * 3000)
    qtbot.wait(50)
    assert window.width() == width and window.minimumSizeHint().width() <= 1024


def test_a_chat_dock_restored_open_shows_the_chat(qtbot, demo_workspace):
    from desktop.main_window import MainWindow

    root = demo_workspace.root
    demo_workspace.close()
    options = {"schedule": False, "watch": False, "index": False, "llm_factory": no_model}
    first = MainWindow(QSettings(), controller_options=options)
    first.show()
    assert first.open_workspace(root)
    first.toggle_chat()
    discard_edits(first.views.values())
    first.close()
    first.deleteLater()
    again = MainWindow(QSettings(), controller_options=options)
    again.show()
    assert again.chat_dock.isVisible() and again.chat_dock.widget() is not None   # a placeholder, not blank
    assert again.open_workspace(root)
    assert again.chat is not None and again.chat_dock.widget() is again.chat
    discard_edits(again.views.values())
    again.close()
    again.deleteLater()


@pytest.fixture
def review(qtbot, workspace, make_controller):
    review_workspace(workspace)
    controller = make_controller(workspace, llm_factory=no_model)
    view = DreamView(controller)
    qtbot.addWidget(view)
    view.resize(1024 - 160, 560)           # the dream tab of a 1024-wide window, the sidebar beside it
    view.show()
    with qtbot.waitSignal(view.proposalsLoaded, timeout=10_000):
        pass
    with qtbot.waitSignal(controller.dreamFinished, timeout=120_000):
        view.dream_button.click()
    qtbot.waitUntil(lambda: view.review.proposal is not None, timeout=10_000)
    return view.review


def test_accept_and_reject_are_in_view_and_messages_do_not_move_rows(qtbot, review):
    changes = review.changes
    viewport = changes.viewport().rect()
    buttons = [b for b in changes.viewport().findChildren(QToolButton) if b.isVisible()]
    assert {b.text() for b in buttons} >= {"Accept", "Reject"}
    for button in buttons:
        corner = button.mapTo(changes.viewport(), button.rect().bottomRight())
        assert viewport.contains(corner) or corner.y() > viewport.bottom(), button.text()  # never cut at the right
    first = changes.rows[next(iter(changes.rows))]
    before = changes.visualItemRect(first).topLeft()
    top = changes.mapTo(review, changes.rect().topLeft())
    review.bar.show_message("Accepted 1 change(s) into MEMORY.md. Undo takes them out again.", "info")
    qtbot.wait(20)
    assert changes.visualItemRect(first).topLeft() == before and changes.mapTo(review, changes.rect().topLeft()) == top
    left, right = review.diff.left.width(), review.diff.right.width()
    assert abs(left - right) <= 8 and left >= 300                  # the diff panes share the width


def test_the_review_works_from_the_keyboard(qtbot, review):
    changes = review.changes
    assert "A accept" in review.keys.text()
    changes.setFocus()
    first = changes.step(True)
    assert first and changes.current_change() == first
    with qtbot.waitSignal(review.decided, timeout=30_000):
        qtbot.keyClick(changes, Qt.Key.Key_R)
    assert changes.state_of(first) == "rejected"
    opened = changes.open_changes()
    if opened:
        qtbot.keyClick(changes, Qt.Key.Key_N)
        assert changes.current_change() in opened


def test_the_title_counts_match_the_lists_groups(qtbot, review):
    proposal = review.proposal
    skipped = [i for i in proposal.summary.get("skipped") or [] if isinstance(i, dict)]
    others = sum(i.get("kind") != "conflict" for i in skipped)
    assert f"{others} not promoted" in review.title.text()
    if review.changes.not_promoted is not None:
        assert f"Not promoted ({others})" in review.changes.not_promoted.text(0)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_colour_the_views_draw_reads_at_wcag_aa(qapp, scheme):
    palette = theme.dark_palette() if scheme == "dark" else theme.light_palette(qapp.style())
    colors = theme.DARK if scheme == "dark" else theme.LIGHT
    low = [(what, fg, bg, round(theme.contrast(fg, bg), 2)) for what, fg, bg in theme.text_pairs(colors, palette)
           if theme.contrast(fg, bg) < 4.5]
    assert not low, low
    assert round(theme.contrast("#000000", "#ffffff"), 1) == 21.0 and theme.contrast("#777777", "#777777") == 1.0


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_decided_rows_and_diff_lines_draw_their_text_in_the_tint_colour(qtbot, review, scheme, monkeypatch):
    monkeypatch.setattr(theme, "colors", lambda: theme.DARK if scheme == "dark" else theme.LIGHT)
    review.diff.set_texts("a\nb\n", "a\nc\n")
    selections = review.diff.right.extraSelections()
    assert selections and all(s.format.foreground().color().name() == theme.colors().on_tint for s in selections)
    row = next(iter(review.changes.rows.values()))
    review.changes._paint(row, "accepted")
    assert row.foreground(STATE).color().name() == theme.colors().on_tint
    assert theme.contrast(theme.colors().on_tint, row.background(STATE).color().name()) >= 4.5
