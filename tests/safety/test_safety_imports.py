"""Imports keyed by what a message is: slices of a growing transcript add up to one import of the whole.

Claude Code appends to a transcript while the session runs, one line per block of a reply; an import
may run at any moment, and again later. Whatever the moments, the session log must end up holding
every block exactly once: none lost (a tool call whose reply was already stored), none twice.
"""
from __future__ import annotations

import json
from pathlib import Path

from core.harness.messages import orphan_results, validate_message
from core.importers import import_chat_log, import_claude_code
from core.workspace import Workspace
from tests.support.transcripts import BASE, SESSION, chat_log_lines, claude_code_records, write_jsonl


def _records() -> list:
    """The standard transcript plus a reply of five blocks (text, three parallel tool calls, text)."""
    reply = {"id": "msg_01D", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5"}
    extra = []
    blocks = [{"type": "text", "text": "Let me check three things at once."}] + [
        {"type": "tool_use", "id": f"toolu_P{i}", "name": "Bash", "input": {"command": f"check {i}"}} for i in range(3)]
    for i, block in enumerate(blocks):
        extra.append({**BASE, "type": "assistant", "uuid": f"p-{i}", "timestamp": f"2026-05-26T07:40:0{i}Z",
                      "message": {**reply, "content": [block]}})
    for i in range(3):
        extra.append({**BASE, "type": "user", "uuid": f"r-{i}", "timestamp": f"2026-05-26T07:41:0{i}Z",
                      "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_P{i}",
                                                               "content": f"result {i}"}]}})
    extra.append({**BASE, "type": "assistant", "uuid": "p-9", "timestamp": "2026-05-26T07:42:00Z",
                  "message": {**reply, "id": "msg_01E", "content": [{"type": "text", "text": "All three pass."}]}})
    return claude_code_records() + extra


def _blocks(messages: list[dict]) -> list[tuple]:
    """What a session log says, block by block: each text, tool call and result in order, ids left out."""
    out = []
    for m in messages:
        if m.get("content"):
            out.extend((m["role"], part) for part in m["content"].split("\n\n"))
        out.extend(("call", c["id"], c["function"]["name"], c["function"]["arguments"]) for c in m.get("tool_calls") or [])
        if m["role"] == "tool":
            out.append(("result", m["tool_call_id"]))
    return out


def _write_prefix(path: Path, lines: list[str], n: int) -> None:
    path.write_text("".join(line + "\n" for line in lines[:n]), encoding="utf-8")


def test_ten_growing_slices_give_exactly_one_import_of_the_whole(tmp_path):
    records = _records()
    lines = [r if isinstance(r, str) else json.dumps(r) for r in records]
    whole_ws = Workspace.create(tmp_path / "whole")
    source = tmp_path / "src" / f"{SESSION}.jsonl"
    source.parent.mkdir()
    _write_prefix(source, lines, len(lines))
    import_claude_code(whole_ws, source)
    whole = whole_ws.read_session(f"cc-{SESSION}").objects

    # Every way of cutting the file into ten growing slices would be too many; these cut inside the
    # split replies (after their first, second, third block) as well as between records.
    for cuts in ([2, 5, 6, 7, 9, 14, 20, 22, 23, 25], [1, 4, 5, 8, 12, 19, 21, 24, 26, 27],
                 [3, 6, 7, 10, 11, 13, 18, 20, 22, 26]):
        sliced_ws = Workspace.create(tmp_path / f"sliced-{cuts[0]}-{cuts[-1]}")
        for n in cuts + [len(lines)]:
            _write_prefix(source, lines, n)
            import_claude_code(sliced_ws, source)
            import_claude_code(sliced_ws, source)          # an import with nothing new adds nothing
        sliced = sliced_ws.read_session(f"cc-{SESSION}").objects
        assert _blocks(sliced) == _blocks(whole), cuts
        assert len({m["id"] for m in sliced}) == len(sliced)
        assert all(validate_message(m) == [] for m in sliced) and orphan_results(sliced) == []
    calls = [c["id"] for m in whole for c in m.get("tool_calls") or []]
    assert calls == ["toolu_01", "toolu_02", "toolu_03", "toolu_P0", "toolu_P1", "toolu_P2"]
    assert orphan_results(whole) == []


def test_a_reply_that_grows_after_an_import_gets_exactly_its_new_blocks(workspace, tmp_path):
    """The lost Bash call: the first import saw only the reply's text; the tool call and its result come later."""
    records = _records()
    lines = [json.dumps(r) if not isinstance(r, str) else r for r in records]
    source = tmp_path / f"{SESSION}.jsonl"
    first_block = next(i for i, r in enumerate(records) if isinstance(r, dict) and r.get("uuid") == "p-0")
    _write_prefix(source, lines, first_block + 1)
    import_claude_code(workspace, source)
    _write_prefix(source, lines, len(lines))
    [grown] = import_claude_code(workspace, source)
    stored = workspace.read_session(f"cc-{SESSION}").objects
    tail = stored[-(grown.written):]
    assert [m["role"] for m in tail] == ["assistant", "tool", "tool", "tool", "assistant"]
    assert [c["id"] for c in tail[0]["tool_calls"]] == ["toolu_P0", "toolu_P1", "toolu_P2"]
    assert orphan_results(stored) == []


def test_sidechains_are_kept_apart_and_a_bom_is_accepted(workspace, tmp_path):
    side = {**BASE, "isSidechain": True, "type": "user", "uuid": "side-1", "timestamp": "2026-05-26T07:50:00Z",
            "message": {"role": "user", "content": "Subagent prompt: grep the repo for DATABASE_URL"}}
    lines = [json.dumps(r) if not isinstance(r, str) else r for r in claude_code_records() + [side]]
    source = tmp_path / f"{SESSION}.jsonl"
    source.write_bytes(b"\xef\xbb\xbf" + "\n".join(lines).encode() + b"\n")     # a BOM before line 1
    [result] = import_claude_code(workspace, source)
    assert result.skipped["sidechain record"] == 1
    stored = workspace.read_session(result.session_id).objects
    assert not any("Subagent prompt" in (m.get("content") or "") for m in stored)
    assert result.problems and all(p.line != 1 for p in result.problems)      # line 1 (the summary) read fine
    assert workspace.session_cache.read().objects[-1]["summary"].startswith("Add a dev config")


def test_the_jsonl_importer_survives_edits_at_the_top_of_its_source(workspace, tmp_path):
    lines = chat_log_lines()
    source = write_jsonl(tmp_path / "run.jsonl", lines)
    first = import_chat_log(workspace, source)
    write_jsonl(source, lines[1:])                               # the first line removed
    again = import_chat_log(workspace, source)
    assert [r.written for r in again] == [0, 0]
    write_jsonl(source, [{"role": "user", "content": "a new first line"}] + lines)   # one put on top
    third = import_chat_log(workspace, source)
    assert [r.written for r in third] == [1, 0]
    assert sorted(s.id for s in workspace.sessions()) == sorted(r.session_id for r in first)
    assert len(workspace.read_session("run").objects) == first[0].written + 1
