"""Paths that come from messages or the model never read outside the workspace.

An offloaded message names its evicted payload (`evicted`, `_moved_to`); the agent's read_file and
memory_get take a path from the model. A crafted `../`, an absolute path or a symlink inside the
workspace that points out must be refused, and the message kept as it was (nothing lost, nothing
leaked into the session log).
"""
from __future__ import annotations

import json
import os

import pytest

from core.errors import PathEscapeError
from core.harness import messages as m
from core.harness.anchor import AnchorStore
from core.harness.checkpointing import Checkpointer
from core.harness.eviction import ToolResultEvictor, read_payload, restore_payloads
from core.harness.offload import SessionOffloader
from core.harness.tools import ToolBox

SECRET = "top secret outside the workspace"


@pytest.fixture
def outside(tmp_path):
    target = tmp_path / "outside" / "secret.txt"
    target.parent.mkdir()
    target.write_text(SECRET, encoding="utf-8")
    return target


def escapes(workspace, outside):
    """(label, path) of every way out: ../, an absolute path, a symlink pointing out (placed in the store)."""
    link_dir = workspace.paths.large_results_dir / "s1"
    link_dir.mkdir(parents=True, exist_ok=True)
    os.symlink(outside, link_dir / "link.txt")
    rel_up = os.path.relpath(outside, workspace.root)
    assert rel_up.startswith("..")
    return [("dot-dot", rel_up), ("dot-dot in the store", f"large_tool_results/s1/../../{rel_up}"),
            ("absolute", str(outside)), ("symlink out", "large_tool_results/s1/link.txt")]


def crafted_tool_message(path):
    return {"role": "tool", "tool_call_id": "call_x", "name": "shell", "id": "m-crafted",
            "content": "[tool result evicted: placeholder]", "evicted": path}


def test_restore_payloads_refuses_every_path_out_and_keeps_the_message(workspace, outside):
    for label, path in escapes(workspace, outside):
        with pytest.raises(PathEscapeError):
            read_payload(workspace.paths, path)
        msg = crafted_tool_message(path)
        assert restore_payloads(workspace.paths, msg) == msg, label
        call = m.tool_call("shell", json.dumps({"_moved_to": path, "_chars": 10}), call_id="call_y")
        moved = {"role": "assistant", "content": "", "tool_calls": [call], "id": "m-args"}
        assert SECRET not in json.dumps(restore_payloads(workspace.paths, moved)), label


def test_a_payload_inside_the_workspace_but_outside_the_store_is_refused(workspace):
    (workspace.root / "notes.txt").write_text("private notes", encoding="utf-8")
    with pytest.raises(PathEscapeError):
        read_payload(workspace.paths, "notes.txt")
    msg = crafted_tool_message("notes.txt")
    assert restore_payloads(workspace.paths, msg) == msg


def test_a_real_evicted_payload_still_comes_back_whole(workspace):
    big = "x" * 90_000 + "THE END"
    evicted = ToolResultEvictor(workspace.paths, "s1").evict(m.tool_result("call_1", big, name="shell"), "shell")
    assert evicted.get("evicted")
    assert read_payload(workspace.paths, evicted["evicted"]) == big
    assert restore_payloads(workspace.paths, evicted)["content"] == big


def test_the_offloaded_log_never_holds_an_outside_file(workspace, outside):
    offloader = SessionOffloader(workspace.paths, "s1")
    crafted = [crafted_tool_message(path) | {"id": f"m-{i}"} for i, (_l, path) in
               enumerate(escapes(workspace, outside))]
    assert offloader.offload(crafted) == len(crafted)
    log = (workspace.root / offloader.rel_path).read_text(encoding="utf-8")
    assert SECRET not in log and log.count("[tool result evicted: placeholder]") == len(crafted)


def test_read_file_and_memory_get_refuse_every_path_out(workspace, outside):
    tools = ToolBox(workspace, Checkpointer(workspace, "s1"), AnchorStore(workspace))
    link = workspace.paths.memory_dir / "link.md"
    os.symlink(outside, link)
    for label, path in escapes(workspace, outside) + [("symlink in memory/", "memory/link.md")]:
        for tool in ("read_file", "memory_get"):
            text, error = tools.call(tool, {"path": path})
            assert error and SECRET not in text, (tool, label)
