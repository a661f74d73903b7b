"""Run by test_preload.py in a fresh interpreter: which modules does using the app import after the preload?"""
from __future__ import annotations

import json
import sys
import time

from PySide6.QtCore import QSettings


def main(root: str, settings_path: str) -> None:
    from desktop.app import make_app
    from desktop.main_window import MainWindow
    from desktop.preload import preload

    app = make_app([sys.argv[0]])
    window = MainWindow(qsettings=QSettings(settings_path, QSettings.Format.IniFormat),
                        controller_options={"schedule": True, "watch": True, "index": False,
                                            "llm_factory": lambda _ws: None})
    window.show()
    failed = preload()
    before = set(sys.modules)

    def spin(seconds: float, until=lambda: False) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end and not until():
            app.processEvents()
    window.open_workspace(root)
    spin(2.5)                                  # MEMORY.md loaded, the sidebar listed, the machinery started
    spin(120, until=lambda: window.sidebar.listing is not None)    # ... which a loaded machine takes longer to do
    logs = list(window.sidebar.listing.daily.values())
    window.open_location(logs[0][0], 3)
    window.open_view("dreams", "")
    window.show_search().set_query("tea")
    spin(1.5)
    new = sorted(name for name in set(sys.modules) - before)
    window.close()
    print(json.dumps({"failed": failed, "new": new}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
