"""Operations publish their own changes: a view says what to do with a result, the op tells everyone else.

Each test listens to the controller's `changed` signal and to the view's own signal, and
checks that the Changes of the core call arrived, on the main thread, before the view
heard of its result; and that a failed operation published nothing.
"""
from __future__ import annotations

from PySide6.QtCore import QThread
from PySide6.QtGui import QTextCursor

from core.dream import run_dream
from core.errors import ConflictError
from desktop.views.chat_panel import ChatPanel
from desktop.views.proposal_review import ProposalReview

from tests.support.blocking_llm import no_model
from tests.support.fakes import session_llm
from tests.support.qt_views import open_memory_editor


def listen(qapp, controller, *signals) -> list[tuple]:
    """Everything heard, in order: ("changed", Changes, on the main thread?) and (signal name, first argument)."""
    heard: list[tuple] = []
    controller.changed.connect(lambda c: heard.append(("changed", c, QThread.currentThread() is qapp.thread())))
    for name, signal in signals:
        signal.connect(lambda *args, name=name: heard.append((name, args[0] if args else None)))
    return heard


def published(heard) -> list:
    return [entry[1] for entry in heard if entry[0] == "changed"]


def dreamed_proposal(qtbot, qapp, controller):
    """A real dream (no model: every operation decided by rules) run by the controller; its open proposal."""
    heard = listen(qapp, controller, ("finished", controller.dreamFinished))
    with qtbot.waitSignal(controller.dreamFinished, timeout=60_000) as done:
        controller.start_dream()
    result = done.args[0]
    assert not isinstance(result, Exception), result
    assert heard[0][0] == "changed" and "proposal" in heard[0][1].kinds and heard[0][2]
    assert heard[-1][0] == "finished"
    assert result.proposal is not None and result.proposal.is_open
    return result.proposal


def review_of(qtbot, controller, proposal) -> ProposalReview:
    review = ProposalReview(controller)
    qtbot.addWidget(review)
    review.show_proposal(proposal)
    return review


def test_accepting_a_proposal_publishes_memory_and_the_decision(qtbot, qapp, demo_workspace, make_controller):
    ws = demo_workspace
    controller = make_controller(ws, llm_factory=no_model, dreamer=run_dream)
    proposal = dreamed_proposal(qtbot, qapp, controller)
    review = review_of(qtbot, controller, proposal)
    heard = listen(qapp, controller, ("decided", review.decided))
    with qtbot.waitSignal(review.decided, timeout=20_000):
        review.accept_all.click()
    assert [entry[0] for entry in heard] == ["changed", "decided"]
    changes = heard[0][1]
    assert heard[0][2]                                               # fanned out on the main thread
    assert {"MEMORY.md", f".reverie/proposals/{proposal.id}.json"} <= set(changes.paths)
    assert {"memory", "proposal"} <= set(changes.kinds)
    assert changes.info.get("hash") == ws.read_memory().hash

    heard.clear()
    with qtbot.waitSignal(review.undone, timeout=20_000):
        review.undo.click()
    # MEMORY.md without the accepted changes, and the proposal, where they are open again
    assert [c.paths for c in published(heard)] == [("MEMORY.md", f".reverie/proposals/{proposal.id}.json")]


def test_rejecting_publishes_the_decision_and_a_refused_reject_publishes_nothing(qtbot, qapp, demo_workspace,
                                                                                 make_controller):
    ws = demo_workspace
    controller = make_controller(ws, llm_factory=no_model, dreamer=run_dream)
    proposal = dreamed_proposal(qtbot, qapp, controller)
    review = review_of(qtbot, controller, proposal)
    heard = listen(qapp, controller, ("decided", review.decided))
    with qtbot.waitSignal(review.decided, timeout=20_000):
        review.reject_all.click()
    assert [entry[0] for entry in heard] == ["changed", "decided"]
    assert heard[0][1].paths == (f".reverie/proposals/{proposal.id}.json",) and heard[0][1].kinds == ("proposal",)

    heard.clear()
    shown = []
    review.bar.show_message = lambda text, *args, **kwargs: shown.append(text)
    handle = review.reject(all_changes=True)            # already rejected: core refuses it
    qtbot.waitUntil(lambda: handle.done, timeout=10_000)
    assert any("already rejected" in text for text in shown)
    assert heard == []                                  # neither published nor decided


def add_line(editor, text: str) -> None:
    cursor = editor.editor.textCursor()
    cursor.movePosition(QTextCursor.MoveOperation.End)
    editor.editor.setTextCursor(cursor)
    editor.editor.insertPlainText(text)


def test_saving_and_undoing_a_document_publish_their_changes(qtbot, qapp, demo_workspace, make_controller):
    ws = demo_workspace
    controller = make_controller(ws, index=False)
    editor = open_memory_editor(qtbot, controller)
    heard = listen(qapp, controller, ("saved", editor.saved))
    add_line(editor, "\n- Prefers window seats\n")
    with qtbot.waitSignal(editor.saved, timeout=10_000):
        editor.save()
    assert [entry[0] for entry in heard] == ["changed", "saved"]
    assert heard[0][1].paths == ("MEMORY.md",) and heard[0][1].kinds == ("memory",) and heard[0][2]
    assert heard[1][1] is heard[0][1]                     # the view's signal carries the very Changes published
    assert "window seats" in ws.read_memory().text

    heard.clear()
    with qtbot.waitSignal(editor.saved, timeout=10_000):
        editor.undo_last_change()
    assert [entry[0] for entry in heard] == ["changed", "saved"] and heard[0][1].paths == ("MEMORY.md",)
    assert "window seats" not in ws.read_memory().text


def test_a_save_that_conflicts_publishes_nothing(qtbot, qapp, demo_workspace, make_controller):
    ws = demo_workspace
    controller = make_controller(ws, index=False)
    editor = open_memory_editor(qtbot, controller)
    add_line(editor, "\n- Mine\n")
    snap = ws.read_memory()
    ws.write_memory(snap.text.replace("Drinks tea, not coffee", "Drinks coffee now"), snap.hash, reason="outside")
    heard = listen(qapp, controller, ("saved", editor.saved))
    with qtbot.waitSignal(editor.conflictShown, timeout=10_000):
        editor.save()
    assert heard == [] and "Drinks coffee now" in ws.read_memory().text


def test_saving_while_closing_publishes_on_the_main_thread(qtbot, qapp, demo_workspace, make_controller):
    ws = demo_workspace
    controller = make_controller(ws, index=False)
    editor = open_memory_editor(qtbot, controller)
    heard = listen(qapp, controller)
    add_line(editor, "\n- Saved on the way out\n")
    assert editor.save_blocking()
    assert len(heard) == 1 and heard[0][1].paths == ("MEMORY.md",) and heard[0][2]
    assert "Saved on the way out" in ws.read_memory().text and not editor.dirty


def test_ending_a_chat_session_publishes_its_log_and_the_daily_log(qtbot, qapp, demo_workspace, make_controller):
    controller = make_controller(demo_workspace, llm_factory=lambda _ws: session_llm(), index=False)
    panel = ChatPanel(controller)
    qtbot.addWidget(panel)
    with qtbot.waitSignal(panel.turnFinished, timeout=60_000) as turn:
        panel.send("What does Maya drink?")
    assert turn.args[0].answer == "Maya drinks tea."
    heard = listen(qapp, controller, ("ended", panel.sessionEnded))
    with qtbot.waitSignal(panel.sessionEnded, timeout=60_000):
        panel.end_session()
    assert [entry[0] for entry in heard] == ["changed", "ended"]
    changes = heard[0][1]
    assert set(changes.paths) == {"sessions/", "memory/"} and set(changes.kinds) == {"session", "daily"}
    logs = demo_workspace.paths.memory_dir.glob("*.md")
    assert any("green tea in the afternoon" in log.read_text("utf-8") for log in logs)   # the flush wrote it


def test_saving_settings_publishes_them_and_the_app_follows_before_the_caller(qtbot, qapp, demo_workspace,
                                                                             make_controller):
    ws = demo_workspace
    controller = make_controller(ws, llm_factory=no_model, index=False)
    settings = ws.settings.replace("dream", idle_minutes=7.0)
    heard = listen(qapp, controller)
    seen = []
    controller.apply_settings(settings, on_success=lambda s: seen.append(controller.monitor.idle_seconds_needed))
    qtbot.waitUntil(lambda: bool(seen), timeout=10_000)
    assert seen == [7.0 * 60] and [c.kinds for c in published(heard)] == [("settings",)]


def test_a_failed_operation_publishes_nothing_and_goes_to_the_error_report(qtbot, qapp, demo_workspace,
                                                                           make_controller):
    ws = demo_workspace
    controller = make_controller(ws, index=False)
    heard = listen(qapp, controller, ("error", controller.errorOccurred))
    succeeded = []
    stale = "0" * len(ws.read_memory().hash)           # not the hash on disk: the store refuses the write
    controller.run_op(lambda ctx: ws.write_memory("- overwritten\n", stale), name="write MEMORY.md",
                      on_success=succeeded.append)
    qtbot.waitUntil(lambda: bool(heard), timeout=10_000)
    assert heard[0][0] == "error" and heard[0][1].startswith("write MEMORY.md: ")
    assert published(heard) == [] and succeeded == [] and "overwritten" not in ws.read_memory().text

    failures = []
    controller.run_op(lambda ctx: ws.write_memory("- overwritten\n", stale), name="write", on_failed=failures.append)
    qtbot.waitUntil(lambda: bool(failures), timeout=10_000)
    assert isinstance(failures[0], ConflictError) and len(heard) == 1     # the caller's report, not the status bar


def test_an_operation_that_returns_no_changes_is_a_failure(qtbot, qapp, demo_workspace, make_controller):
    controller = make_controller(demo_workspace, index=False)
    heard = listen(qapp, controller)
    failures, succeeded = [], []
    controller.run_op(lambda ctx: ("a", "tuple"), name="odd", on_success=succeeded.append, on_failed=failures.append)
    qtbot.waitUntil(lambda: bool(failures), timeout=10_000)
    assert isinstance(failures[0], TypeError) and "Changes" in str(failures[0])
    assert heard == [] and succeeded == []
