"""Workspace files that hold a pasted secret, and rewriting them with the secrets redacted.

The files scanned are those an agent, a dream or a prompt reads: MEMORY.md, progress.md, the
daily logs (archived ones too), session logs, checkpoints and hand-offs. A rewrite is an edit like
any other: compare-and-swap on the hash read, a history snapshot first (so it can be undone), and
an agent's append that lands meanwhile is kept. JSON files are checked to still parse after the
redaction; one that would not is left as it is and reported. The file's history snapshots are
redacted too, so the value is gone from `.reverie/history/` as well (an undo then brings back the
text around it, never the secret).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from core.errors import ConflictError, CoreError
from core.secrets import find_secrets, redact_count
from core.store.documents import DocumentStore
from core.store.fileio import confined_glob
from core.store.paths import WorkspacePaths

REDACT_REASON = "redact secrets"


@dataclass(frozen=True)
class SecretFinding:
    path: str   # workspace-relative
    line: int   # 1-based
    kind: str   # what the value is ("password", "github token", ...); never the value


@dataclass
class RedactResult:
    paths: list[str] = field(default_factory=list)          # files rewritten
    redacted: int = 0                                        # secret values replaced
    snapshots: int = 0                                       # history snapshots redacted too
    skipped: dict[str, str] = field(default_factory=dict)   # path -> why it was left as it is


def secret_files(paths: WorkspacePaths) -> list[Path]:
    """Every file the scan covers, in a stable order."""
    out = [p for p in (paths.memory_md, paths.progress_md) if p.is_file()]
    for folder, pattern in ((paths.memory_dir, "*.md"), (paths.archive_dir, "*.md"), (paths.sessions_dir, "*.jsonl"),
                            (paths.checkpoints_dir, "**/*.json"), (paths.handoffs_dir, "*.json")):
        out.extend(sorted(p for p in confined_glob(paths.root, folder, pattern) if not p.name.startswith(".")))
    return out


def scan_job(args: dict, job) -> dict[str, tuple[tuple[int, int], list[SecretFinding]]]:
    """The child's side of `Workspace.find_secrets(in_child=True)`: {rel: ((size, mtime_ns), findings)}
    for each file, the key taken before reading so that a file changed meanwhile is scanned again."""
    from core.store.fileio import read_bytes
    from core.store.textio import decode_lossy

    root = Path(args["root"])
    out = {}
    for rel in args["rels"]:
        job.token.raise_if_cancelled()
        path = root / rel
        try:
            stat = path.stat()
            text = decode_lossy(read_bytes(root, path)).text
        except (OSError, CoreError):
            continue                              # gone, or a link out: the parent's own pass says so
        out[rel] = ((stat.st_size, stat.st_mtime_ns), findings_in(rel, text))
    return out


def findings_in(rel: str, text: str) -> list[SecretFinding]:
    """One finding per secret value, with the 1-based line it starts on."""
    starts = [0]
    for number, char in enumerate(text):
        if char == "\n":
            starts.append(number + 1)
    out, line = [], 0
    for hit in find_secrets(text):
        while line + 1 < len(starts) and starts[line + 1] <= hit.start:
            line += 1
        out.append(SecretFinding(rel, line + 1, hit.kind))
    return out


def _still_parses(rel: str, before: str, after: str) -> bool:
    """A JSON file stays JSON, and each line of a JSONL file that parsed still does."""
    if rel.endswith(".jsonl"):
        for old, new in zip(before.split("\n"), after.split("\n")):
            if old != new and _parses(old) and not _parses(new):
                return False
        return True
    if rel.endswith(".json"):
        return not _parses(before) or _parses(after)
    return True


def _parses(text: str) -> bool:
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True


def redact_files(paths: WorkspacePaths, documents: DocumentStore, rels: list[str]) -> RedactResult:
    result = RedactResult()
    for rel in rels:
        for _attempt in range(3):
            snapshot = documents.read(rel)
            if snapshot.replaced_bytes:
                result.skipped[rel] = "it holds bytes that are not UTF-8; a rewrite would change them too"
                break
            text, count = redact_count(snapshot.text)
            if not count:
                break
            if not _still_parses(rel, snapshot.text, text):
                result.skipped[rel] = "the redacted file would no longer be valid JSON; edit it by hand"
                break
            try:
                documents.write(rel, text, snapshot.hash, reason=REDACT_REASON)
            except ConflictError:
                continue   # changed between our read and our write (an agent appended): read again
            result.paths.append(rel)
            result.redacted += count
            # The versions before this one (the one just snapshotted included) still hold the value.
            result.snapshots += documents.history.rewrite_snapshots(rel, lambda old: redact_count(old)[0])
            break
        else:
            result.skipped[rel] = "it kept changing on disk; try again"
    return result
