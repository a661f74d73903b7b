"""The harness CLI commands that need no model: compact --model none, flushes."""
from __future__ import annotations


from core.bench.retention import build_conversation
from core.cli import main
from core.harness.messages import from_jsonl, orphan_results, to_jsonl
from core.harness.flush import MemoryFlushManager
from core.harness import messages as m
from tests.support.fakes import ScriptedLLM


def test_compact_a_message_file_without_a_model(workspace, tmp_path, capsys):
    messages, _ = build_conversation(80, 5, big_results=0)
    source = tmp_path / "ctx.jsonl"
    source.write_text(to_jsonl(messages))
    out = tmp_path / "out.jsonl"
    assert main(["compact", str(workspace.root), str(source), "--model", "none", "--out", str(out)]) == 0
    compacted = from_jsonl(out.read_text())
    assert compacted[0]["kind"] == "summary" and len(compacted) == 21
    assert not orphan_results(compacted)
    assert "compacted 60 message(s)" in capsys.readouterr().err
    logged = workspace.read_session("ctx").objects
    assert [x["id"] for x in logged] == [x["id"] for x in messages[:60]]
    # running it again on the same file offloads nothing twice
    assert main(["compact", str(workspace.root), str(source), "--model", "none", "--out", str(out)]) == 0
    assert len(workspace.read_session("ctx").objects) == 60


def test_compact_refuses_a_bad_file_with_one_line(workspace, tmp_path, capsys):
    source = tmp_path / "bad.jsonl"
    source.write_text('{"role": "user", "content": "hi"}\n{"role": "wizard"}\n')
    assert main(["compact", str(workspace.root), str(source), "--model", "none"]) == 2
    err = capsys.readouterr().err
    assert "line 2" in err and "unknown role" in err


def test_flushes_lists_every_outcome(workspace, capsys):
    flusher = MemoryFlushManager(workspace, ScriptedLLM(["NO_REPLY"]))
    flusher.flush([m.user("nothing much"), m.assistant("ok")], session_id="s9")
    assert main(["flushes", str(workspace.root)]) == 0
    out = capsys.readouterr().out
    assert "no_reply" in out and "session=s9" in out
