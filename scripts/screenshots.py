"""Screenshots of the app's main views, taken under Xvfb: `python scripts/screenshots.py WORKSPACE`.

Works on a copy of WORKSPACE (the dream it runs for the dream view writes a proposal),
starts Xvfb itself when there is no display, and writes PNGs to docs/screenshots/
(or --out). `--theme dark` takes them with the dark palette.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def start_xvfb() -> subprocess.Popen | None:
    if os.environ.get("DISPLAY") or not shutil.which("Xvfb"):
        return None
    display = ":97"
    server = subprocess.Popen(["Xvfb", display, "-screen", "0", "1600x1000x24", "-nolisten", "tcp"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1.0)
    os.environ["DISPLAY"] = display
    return server


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("workspace")
    parser.add_argument("--out", default=str(ROOT / "docs" / "screenshots"))
    parser.add_argument("--theme", choices=("light", "dark"), default="light")
    args = parser.parse_args()
    server = start_xvfb()
    if not os.environ.get("DISPLAY"):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        print("no display and no Xvfb: taking the screenshots offscreen")
    else:
        os.environ["QT_QPA_PLATFORM"] = "xcb"
    os.environ["REVERIE_THEME"] = args.theme
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    scratch = tempfile.TemporaryDirectory(prefix="reverie-shots-")
    work = Path(scratch.name) / Path(args.workspace).name
    shutil.copytree(args.workspace, work, ignore=shutil.ignore_patterns("index.db*", "*.hnsw*"))
    try:
        return take(work, Path(args.out), args.theme)
    finally:
        scratch.cleanup()
        if server is not None:
            server.terminate()
            server.wait(5)


def take(work: Path, out: Path, theme: str) -> int:
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from desktop.app import make_app
    from desktop.main_window import MainWindow

    app = make_app([sys.argv[0]])
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(work / ".reverie" / "shots"))
    qsettings = QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, "ReverieShots", "shots")
    window = MainWindow(qsettings=qsettings, controller_options={"schedule": False, "watch": False,
                                                                "llm_factory": lambda _ws: None})
    window.resize(1280, 800)
    window.show()
    out.mkdir(parents=True, exist_ok=True)
    suffix = "" if theme == "light" else "-dark"

    def settle(condition=lambda: True, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            app.processEvents()
            if condition() and not window.controller.runner.pending():
                break
            time.sleep(0.02)
        for _ in range(10):
            app.processEvents()
            time.sleep(0.02)

    def shot(name: str, widget=None) -> None:
        path = out / f"{name}{suffix}.png"
        (widget or window).grab().save(str(path))
        print(f"wrote {path}")

    assert window.open_workspace(work)
    controller = window.controller
    memory = window.views["MEMORY.md"]
    settle(lambda: memory.base is not None and window.sidebar.topLevelItemCount() > 0)
    window.sidebar.fill_all()
    window.sidebar.expandAll()
    memory.preview_button.setChecked(True)
    line = next(n for n, text in enumerate(memory.text().split("\n"), 1) if "Drinks tea" in text)
    memory.goto_line(line)
    settle(lambda: bool(memory.sources))
    shot("memory-editor")
    memory.preview_button.setChecked(False)

    # The demo is dated relative to today: find its daily log with a flush block by content.
    from core.store.daily import FLUSH_HEADING

    flushed = sorted(p for p in work.glob("memory/*.md") if FLUSH_HEADING in p.read_text(encoding="utf-8"))[0]
    log = window.open_location(f"memory/{flushed.name}", 8)
    settle(lambda: log.base is not None)
    shot("daily-log")

    session = window.open_location("sessions/s-0018-disk.log.jsonl")
    settle(lambda: session.tree.topLevelItemCount() > 0)
    for i in range(session.tree.topLevelItemCount()):
        item = session.tree.topLevelItem(i)
        if item.text(2) in ("assistant", "tool"):
            item.setExpanded(True)
    shot("session-transcript")

    checkpoints = window.open_location("checkpoints/s-0028-csv-tenant")
    settle(lambda: checkpoints.json_editor is not None and checkpoints.json_editor.base is not None)
    checkpoints.update_summary()
    settle(lambda: bool(checkpoints.states))
    shot("checkpoint-editor")

    window.open_location("handoffs/ho-orchard-oncall.json")
    settle()
    shot("handoff")

    index = controller.index_task
    settle(lambda: index is None or index.done, timeout=180)
    search = window.show_search()
    search.mode.setCurrentIndex(search.mode.findData("keyword"))
    search.query.setText("tea")
    search.run_query()
    settle(lambda: search.results is not None)
    shot("search")

    dreams = window.open_view("dreams", "")
    controller.start_dream(reason="asked for")
    settle(lambda: not controller.dreaming and dreams.review.proposal is not None, timeout=300)
    changes = dreams.review.changes
    update = next((cid for cid in changes.rows if dreams.review.proposal.change(cid).op == "replace"), None)
    first = update or next(iter(changes.rows), None)
    if first is not None:
        changes.setCurrentItem(changes.rows[first])
    if changes.not_promoted is not None:
        changes.not_promoted.setExpanded(True)
    settle()
    shot("dream-review")

    # The chat dock beside MEMORY.md: the window keeps its width (the dock never widens it).
    window.open_location("MEMORY.md")
    window.toggle_chat()
    settle(lambda: window.chat is not None)
    window.chat.input.setText("What does Maya drink?")      # typed, not sent: these shots load no model
    settle()
    shot("chat")
    window.toggle_chat()

    from desktop.settings_dialog import SettingsDialog

    dialog = SettingsDialog(controller, window)
    dialog.show()
    settle()
    shot("settings", dialog)
    dialog.close()
    window.close()
    QApplication.processEvents()
    from desktop.controller import stop_embedders

    stop_embedders()
    return 0


if __name__ == "__main__":
    sys.exit(main())
