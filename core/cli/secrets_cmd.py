"""`reverie secrets WS [--redact]`: where pasted passwords, tokens and keys sit in a workspace.

Lists `path:line kind` for each one and never prints a value, so the output itself is safe to
paste into an issue. Exit 1 while any secret is left (a check for scripts), 0 otherwise.
"""
from __future__ import annotations

import sys


def register(sub) -> None:
    p = sub.add_parser("secrets", help="list the workspace files that hold a pasted secret (exit 1 if any)",
                       description="Lists path:line kind for every secret value in MEMORY.md, progress.md, the "
                                   "daily logs, sessions, checkpoints and hand-offs; values are never printed. "
                                   "Exit 1 while any is left, 0 otherwise.")
    p.add_argument("path")
    p.add_argument("--redact", action="store_true",
                   help="rewrite those files with each value as [redacted <kind>] (undoable, like any edit)")
    p.set_defaults(func=cmd_secrets)


def cmd_secrets(args) -> int:
    from core.workspace import Workspace

    ws = Workspace.open(args.path)
    findings = ws.find_secrets()
    for finding in findings:
        print(f"{finding.path}:{finding.line} {finding.kind}")
    if not findings:
        print("no secrets found")
        return 0
    files = len({f.path for f in findings})
    if not args.redact:
        print(f"{len(findings)} secret(s) in {files} file(s); `reverie secrets {args.path} --redact` replaces them",
              file=sys.stderr)
        return 1
    changes = ws.redact_secrets([f.path for f in findings])
    print(f"redacted {changes.info['redacted']} secret(s) in {len(changes.paths)} file(s) and in "
          f"{changes.info.get('snapshots', 0)} history snapshot(s)")
    for rel, why in changes.info["skipped"].items():
        print(f"{rel}: not redacted: {why}", file=sys.stderr)
    return 1 if ws.find_secrets() else 0
