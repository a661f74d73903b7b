"""`reverie ARGS...` under a Python audit hook that records every path it opens, lists, renames or makes.

    python -m tests.support.audited_cli AUDIT_LOG ARGS...

One line per event: `event<TAB>absolute path` (a rename records both names). A test resolves the
paths afterwards (links still in place) and so proves that nothing was read or written outside
a folder, even through a symbolic link planted inside the workspace.
"""
import os
import sys

_log_fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
_EVENTS = {"open", "reverie.open", "os.listdir", "os.scandir", "glob.glob", "os.rename", "os.mkdir", "os.remove",
           "os.rmdir", "os.chmod", "os.truncate", "os.utime"}


def _hook(event, args):
    if event not in _EVENTS or not args:
        return
    targets = args[:2] if event == "os.rename" else args[:1]
    for target in targets:
        if isinstance(target, (str, bytes, os.PathLike)):
            name = os.fsdecode(target)
            if not os.path.isabs(name):
                continue        # opened relative to a folder descriptor: its "reverie.open" event names it whole
            os.write(_log_fd, (event + "\t" + os.path.abspath(name) + "\n").encode("utf-8", "replace"))


sys.addaudithook(_hook)

from core.cli import main  # noqa: E402

sys.exit(main(sys.argv[2:]))
