"""Dream view: dream now -> proposal -> accept -> MEMORY.md changed -> undo; partial accept; reject;
cancel; quitting during a dream."""
from __future__ import annotations

import re
import time

from PySide6.QtCore import QSettings

from core.dream.review.proposals import list_proposals
from desktop.main_window import MainWindow
from desktop.views.dream_view import DreamView

from tests.support.qt_views import discard_edits
from tests.support.blocking_llm import BlockingLLM, no_model


def dream_view(qtbot, controller) -> DreamView:
    view = DreamView(controller)
    qtbot.addWidget(view)
    with qtbot.waitSignal(view.proposalsLoaded, timeout=10_000):
        pass
    return view


def dream(qtbot, view) -> None:
    with qtbot.waitSignal(view.controller.dreamFinished, timeout=60_000):
        view.dream_button.click()
    qtbot.waitUntil(lambda: view.review.proposal is not None, timeout=10_000)


def test_dream_now_propose_accept_then_undo(qtbot, demo_workspace, make_controller):
    ws = demo_workspace
    controller = make_controller(ws, llm_factory=no_model)
    view = dream_view(qtbot, controller)
    before = ws.read_memory().text
    events = []
    controller.dreamEvent.connect(events.append)
    dream(qtbot, view)
    assert {e.stage for e in events} >= {"orient", "gather", "consolidate", "prune"}
    assert all(view.bars[s].value() == view.bars[s].maximum() for s in ("orient", "gather", "consolidate", "prune"))
    # Without a model no themes are named: the stage says what it read, never an empty "themes:".
    assert re.fullmatch(r"\d+ of \d+ daily logs changed, .* new facts.*", view.messages["orient"].text())
    proposal = view.review.proposal
    assert proposal.is_open and proposal.changes
    # The dream's proposal, and the relevance prune's suggestions when it made any (always held).
    suggestions = [p for p in list_proposals(ws.paths) if p.summary.get("kind") == "relevance"]
    assert all(p.status == "held" for p in suggestions)
    assert view.list.count() == 1 + len(suggestions) and "proposed" in view.state.text()
    assert view.review.changes.topLevelItemCount() >= 1                      # sections
    assert view.review.diff.alignment is not None and not view.review.diff.alignment.identical
    added = next(c for c in proposal.changes if c.kind == "add")
    view.review.changes.setCurrentItem(view.review.changes.rows[added.id])
    assert added.sources and added.sources[0] in view.review.details.toHtml()

    with qtbot.waitSignal(view.review.decided, timeout=20_000):
        view.review.accept_all.click()
    after = ws.read_memory().text
    assert after != before and added.after in after
    assert "Accepted" in view.review.bar.text
    assert next(p for p in list_proposals(ws.paths) if p.id == proposal.id).status == "applied"

    with qtbot.waitSignal(view.review.undone, timeout=20_000):
        view.review.undo.click()
    assert ws.read_memory().text == before
    assert next(p for p in list_proposals(ws.paths) if p.id == proposal.id).status == "pending"   # open again


def test_accept_only_the_checked_changes(qtbot, demo_workspace, make_controller):
    ws = demo_workspace
    controller = make_controller(ws, llm_factory=no_model)
    view = dream_view(qtbot, controller)
    dream(qtbot, view)
    proposal = view.review.proposal
    adds = [c for c in proposal.changes if c.kind == "add" and not c.group]
    assert len(adds) >= 3
    chosen = [adds[0].id, adds[1].id]
    view.review.set_checked(chosen)
    assert view.review.checked_changes() == chosen and view.review.accept_checked.isEnabled()
    with qtbot.waitSignal(view.review.decided, timeout=20_000):
        view.review.accept_checked.click()
    text = ws.read_memory().text
    assert adds[0].after in text and adds[1].after in text
    assert all(c.after not in text for c in adds[2:])
    assert view.review.proposal.is_open                  # the rest still waits for review


def test_reject_all_leaves_memory_alone(qtbot, demo_workspace, make_controller):
    ws = demo_workspace
    controller = make_controller(ws, llm_factory=no_model)
    view = dream_view(qtbot, controller)
    before = ws.read_memory().text
    dream(qtbot, view)
    reviewed = view.review.proposal.id
    with qtbot.waitSignal(view.review.decided, timeout=20_000):
        view.review.reject_all.click()
    assert ws.read_memory().text == before
    assert next(p for p in list_proposals(ws.paths) if p.id == reviewed).status == "rejected"
    assert view.list.count() == 0 or "rejected" in view.review.title.text()


def test_cancel_stops_the_dream_and_writes_nothing(qtbot, demo_workspace, make_controller):
    ws = demo_workspace
    llm = BlockingLLM()
    controller = make_controller(ws, llm_factory=lambda _ws: llm)
    view = dream_view(qtbot, controller)
    before = ws.read_memory().text
    view.dream_button.click()
    assert llm.entered.wait(30)
    assert view.cancel_button.isEnabled() and not view.dream_button.isEnabled()
    with qtbot.waitSignal(controller.dreamFinished, timeout=20_000):
        view.cancel_button.click()
    assert "stopped" in view.state.text() or "cancelled" in view.state.text()
    assert list_proposals(ws.paths) == [] and ws.read_memory().text == before
    assert view.dream_button.isEnabled()


def test_quit_during_a_dream_shuts_down_cleanly(qtbot, demo_workspace):
    ws_root = demo_workspace.root
    demo_workspace.close()
    llm = BlockingLLM()
    win = MainWindow(QSettings(), controller_options={"schedule": False, "watch": True, "index": False,
                                                      "llm_factory": lambda _ws: llm})
    win.show()
    assert win.open_workspace(ws_root)
    win.dream_now()
    assert llm.entered.wait(30)
    controller = win.controller
    assert controller.dreaming
    started = time.monotonic()
    discard_edits(win.views.values())
    assert win.close()
    assert time.monotonic() - started < 15
    assert win.controller is None and controller.closed and not controller.runner.active()
    assert not (ws_root / ".reverie" / "proposals").exists() or not list((ws_root / ".reverie" / "proposals").glob("*"))
    win.deleteLater()


def test_a_held_proposal_says_why(qtbot, demo_workspace, make_controller):
    ws = demo_workspace
    # A budget the dream's additions cross: its proposal breaks a guard and is held.
    from core.store.memory_md import strip_comments
    from core.tokens import count_tokens

    ws.settings = ws.settings.replace("memory", memory_md_tokens=count_tokens(strip_comments(ws.read_memory().text)) + 1)
    controller = make_controller(ws, llm_factory=no_model)
    view = dream_view(qtbot, controller)
    dream(qtbot, view)
    proposal = view.review.proposal
    assert proposal.status == "held" and proposal.hold_reasons
    assert view.review.bar.kind == "warning" and proposal.hold_reasons[0][:30] in view.review.bar.text
    assert "held" in view.list.item(0).text()
