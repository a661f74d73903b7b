"""`reverie mcp WORKSPACE` under a Python audit hook that records every file and folder it opens.

    python -m tests.support.audited_mcp AUDIT_LOG WORKSPACE

Each `open`, `os.listdir`, `os.scandir`, `glob.glob` and Reverie's own `reverie.open` event
appends its path to AUDIT_LOG (one per line), so a test can prove the server never read outside the workspace.
"""
import os
import sys

_log_fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
_EVENTS = {"open", "reverie.open", "os.listdir", "os.scandir", "glob.glob"}


def _hook(event, args):
    if event in _EVENTS and args:
        target = args[0]
        if isinstance(target, (str, bytes, os.PathLike)):
            name = os.fsdecode(target)
            if not os.path.isabs(name):
                return          # opened relative to a folder descriptor: its "reverie.open" event names it whole
            os.write(_log_fd, (event + "\t" + os.path.abspath(name) + "\n").encode("utf-8", "replace"))


sys.addaudithook(_hook)

from core.cli import main  # noqa: E402

sys.exit(main(["mcp", sys.argv[2]]))
