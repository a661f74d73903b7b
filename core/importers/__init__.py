"""Importers: other agents' transcripts into `sessions/<id>.log.jsonl`, where flush and dream can use them.

    import_claude_code(workspace, path)   Claude Code transcripts (a .jsonl file or a folder of them)
    import_chat_log(workspace, path)      generic OpenAI-style chat logs (JSONL)

Both return one ImportResult per session: how many messages were new, what was
left out on purpose, and every malformed line (reported and skipped, never fatal).
"""
from __future__ import annotations

from pathlib import Path

from core.errors import CoreError
from core.importers.common import ImportResult, Problem, store_session, transcript_files

__all__ = ["ImportResult", "Problem", "import_claude_code", "import_chat_log"]


def _single(files: list[Path], session_id: str | None, source: Path) -> None:
    if session_id and len(files) > 1:
        raise CoreError(f"--session-id names one session, but {source} holds {len(files)} transcripts")


def import_claude_code(workspace, source: str | Path, session_id: str | None = None) -> list[ImportResult]:
    from core.importers.claude_code import parse_transcript

    files = transcript_files(Path(source))
    _single(files, session_id, Path(source))
    return [store_session(workspace, parse_transcript(path, session_id)) for path in files]


def import_chat_log(workspace, source: str | Path, session_id: str | None = None) -> list[ImportResult]:
    from core.importers.openai_jsonl import parse_chat_log

    files = transcript_files(Path(source))
    _single(files, session_id, Path(source))
    results = []
    for path in files:
        results.extend(store_session(workspace, parsed) for parsed in parse_chat_log(path, session_id))
    return results
