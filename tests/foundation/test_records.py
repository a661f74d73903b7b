"""Session logs (tolerant JSONL), the session cache, checkpoints and hand-offs."""
from __future__ import annotations

import json

import pytest

from core.errors import FormatError, HandoffLoopError, NotFoundError
from core.store.checkpoints import new_checkpoint_id, next_task, validate_checkpoint
from core.store.sessions import append_jsonl


def test_malformed_jsonl_lines_are_skipped_and_reported(workspace):
    path = workspace.paths.session_log("s1")
    path.write_bytes(b'{"role":"user","content":"hi"}\nnot json\n[1,2]\n\n{"role":"assistant","content":"caf\xe9"}\n{"broken": \n')
    read = workspace.read_session("s1")
    assert [obj["role"] for obj in read.objects] == ["user", "assistant"]
    assert [p.line for p in read.problems if p.line] == [2, 3, 6]
    assert any("not UTF-8" in p.message for p in read.problems)
    assert read.records[1][0] == 5


def test_append_jsonl_returns_line_numbers(workspace):
    path = workspace.paths.session_log("s2")
    assert append_jsonl(path, [{"a": 1}, {"a": 2}]) == 1
    assert append_jsonl(path, [{"a": 3}]) == 3
    assert [o["a"] for o in workspace.read_session("s2").objects] == [1, 2, 3]


def test_session_cache_keeps_the_last_ten(workspace):
    for n in range(13):
        workspace.session_cache.add(f"s{n}", f"summary {n}")
    workspace.session_cache.add("s12", "summary 12 revised")
    objects = workspace.session_cache.read().objects
    assert [o["session_id"] for o in objects] == [f"s{n}" for n in range(3, 13)]
    assert objects[-1]["summary"] == "summary 12 revised"


def checkpoint(session="s1", **over):
    data = {"timestamp": "2026-12-01T10:00:00+00:00", "session_id": session, "checkpoint_id": new_checkpoint_id(),
            "target": "ship it", "completed_steps": ["a"], "pending_steps": ["b"],
            "artifacts": {"x.py": "0" * 64}, "context_summary": "ctx", "last_action": "ran tests",
            "error_state": None}
    data.update(over)
    return data


def test_checkpoint_round_trip_and_latest(workspace):
    workspace.save_checkpoint(checkpoint(checkpoint_id="cp-1", target="first"))
    workspace.save_checkpoint(checkpoint(checkpoint_id="cp-2", target="second"))
    assert workspace.latest_checkpoint("s1")["target"] == "second"
    assert len(workspace.checkpoint_files()) == 2


def test_invalid_checkpoint_is_refused_with_reasons(workspace):
    with pytest.raises(FormatError, match="missing field 'target'.*sha256"):
        bad = checkpoint(artifacts={"x": "nothex"})
        del bad["target"]
        workspace.save_checkpoint(bad)
    assert validate_checkpoint([]) == ["a checkpoint must be a JSON object"]


def test_damaged_checkpoint_is_passed_over(workspace):
    workspace.save_checkpoint(checkpoint(checkpoint_id="cp-1"))
    (workspace.paths.checkpoint_dir("s1") / "cp-9.json").write_text("{ torn")
    assert workspace.latest_checkpoint("s1")["checkpoint_id"] == "cp-1"


def test_task_graph_resumes_at_first_ready_pending_task():
    cp = checkpoint(tasks=[{"id": "t1", "status": "done"}, {"id": "t3", "status": "pending", "depends_on": ["t2"]},
                           {"id": "t2", "status": "pending", "depends_on": ["t1"]}])
    assert validate_checkpoint(cp) == []
    assert next_task(cp)["id"] == "t2"
    assert "unknown task" in " ".join(validate_checkpoint(checkpoint(tasks=[{"id": "a", "depends_on": ["zz"]}])))


def packet(frm, to, target="fix ingest"):
    return {"from_agent": frm, "to_agent": to, "original_target": target, "why_this_agent": "expert",
            "completed_work": ["x"], "known_constraints": [], "failed_attempts": [], "current_state": "half",
            "success_criteria": "tests pass", "termination_condition": "merged"}


def test_handoff_round_trip_and_loop_refusal(workspace):
    first, changes = workspace.create_handoff(packet("a", "b"))
    assert changes.kinds == ("handoff",)
    assert workspace.read_handoff(first["id"])["to_agent"] == "b"
    workspace.create_handoff(packet("b", "c"))
    with pytest.raises(HandoffLoopError, match="a -> b -> c"):
        workspace.create_handoff(packet("c", "a"))
    workspace.create_handoff(packet("c", "a", target="another task"))   # a different task is fine
    with pytest.raises(FormatError, match="itself"):
        workspace.create_handoff(packet("a", "a"))
    with pytest.raises(NotFoundError):
        workspace.read_handoff("ho-missing")
    assert json.loads(workspace.paths.handoff(first["id"]).read_text())["hop"] == 1
