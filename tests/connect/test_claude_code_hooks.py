"""Claude Code's SessionEnd / PreCompact hooks: the transcript, seen in slices, lands in sessions/ exactly once
(complete replies included), and `reverie connect claude-code --hooks` writes hooks that really run."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys

from core.connect.hooks import EVENTS, hook_command
from core.importers import import_claude_code
from core.importers.hook import HookInput, import_for_hook
from core.store.activity import last_by_agent
from core.workspace import Workspace
from tests.support.processes import ROOT, python_env
from tests.support.transcripts import SESSION, claude_code_records, write_jsonl


def _messages(ws, session_id):
    return [{k: v for k, v in m.items()} for m in ws.read_session(session_id).objects]


def _hook(command: str, payload, env) -> subprocess.CompletedProcess:
    text = payload if isinstance(payload, str) else json.dumps(payload)
    return subprocess.run(["bash", "-c", command], input=text, cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)


def test_a_transcript_written_in_slices_is_imported_exactly_once(tmp_path):
    records = claude_code_records()
    whole = Workspace.create(tmp_path / "whole")
    [expected] = import_claude_code(whole, write_jsonl(tmp_path / "all" / f"{SESSION}.jsonl", records))
    ws = Workspace.create(tmp_path / "ws")
    transcript = tmp_path / "projects" / f"{SESSION}.jsonl"
    # cut after the reply's first text block (u-3), after a tool call (u-5), mid-file and at the end
    for end in (1, 4, 6, 9, 12, len(records)):
        write_jsonl(transcript, records[:end])
        import_for_hook(ws, HookInput("PreCompact", transcript, SESSION))
    env = python_env()
    payload = {"session_id": SESSION, "transcript_path": str(transcript), "hook_event_name": "SessionEnd",
               "cwd": str(tmp_path), "reason": "exit"}
    command = hook_command(ws.root) + " --no-flush"
    for _ in range(2):                                  # the session ends, and a hook that runs twice adds nothing
        done = _hook(command, payload, env)
        assert done.returncode == 0, done.stderr
    assert "0 message(s) imported" in done.stdout
    got, want = _messages(ws, expected.session_id), _messages(whole, expected.session_id)
    assert got == want and len({m["id"] for m in got}) == len(got)
    reply = next(m for m in got if m.get("tool_calls") and m["content"].startswith("I'll look"))
    assert [c["id"] for c in reply["tool_calls"]] == ["toolu_01", "toolu_02"]     # the reply sliced mid-way is whole
    assert last_by_agent(ws.paths)["claude-code"].kind == "session_end"
    assert last_by_agent(ws.paths)["import"].detail == f"sessions/{expected.session_id}.log.jsonl"   # the importer's own
    bad = _hook(command, "{not json", env)
    assert bad.returncode == 1 and bad.stderr.startswith("reverie hook: the hook input is not JSON")
    gone = _hook(command, {**payload, "transcript_path": str(tmp_path / "nope.jsonl")}, env)
    assert gone.returncode == 1 and "no transcript at" in gone.stderr and "Traceback" not in gone.stderr


def test_connect_writes_hooks_once_and_they_run(tmp_path):
    ws = Workspace.create(tmp_path / "ws").root
    project, home = tmp_path / "project", tmp_path / "home"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"allow": ["Bash(ls:*)"]}, "hooks": {
        "SessionEnd": [{"hooks": [{"type": "command", "command": "echo bye"}]}]}}), encoding="utf-8")
    env = python_env(HOME=str(home))

    def connect():
        return subprocess.run([sys.executable, "-m", "core", "connect", "claude-code", str(ws), "--project",
                               str(project), "--hooks"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert connect().returncode == 0
    settings = json.loads((project / ".claude" / "settings.json").read_text(encoding="utf-8"))
    assert settings["permissions"] == {"allow": ["Bash(ls:*)"]}
    assert settings["hooks"]["SessionEnd"][0]["hooks"][0]["command"] == "echo bye"
    ours = {event: [h for g in settings["hooks"][event] for h in g["hooks"] if "reverie" in h["command"] or
                    " -m core " in h["command"]] for event in EVENTS}
    assert all(len(hooks) == 1 for hooks in ours.values())
    assert "up to date" in connect().stdout                      # run again: nothing added twice
    assert json.loads((project / ".claude" / "settings.json").read_text(encoding="utf-8")) == settings
    transcript = write_jsonl(tmp_path / "t" / f"{SESSION}.jsonl", claude_code_records())
    command = ours["PreCompact"][0]["command"] + " --no-flush"
    done = _hook(command, {"session_id": SESSION, "transcript_path": str(transcript),
                           "hook_event_name": "PreCompact", "trigger": "auto"}, env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("PreCompact: cc-") and shutil.which("bash")
