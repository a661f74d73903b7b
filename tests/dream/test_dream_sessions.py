"""A dream's Gather reads the session logs too: per role, behind the watermark, sourced to the message."""
from __future__ import annotations

import datetime as dt
import json

from tests.support.dreamkit import write_log

from core.cli import main
from core.dream.pipeline.consolidator import run_dream
from core.dream.review.provenance import why
from core.dream.pipeline.session_facts import is_statement, message_statements
from core.dream.state import load_state
from core.store.memory_md import parse_document

NOW = dt.datetime(2026, 12, 5, 22, tzinfo=dt.timezone.utc)

SESSION = [
    {"role": "system", "content": "You are a helpful assistant. The deploy key is never shared."},
    {"role": "user", "content": "Please check the build for me. I always want answers in British English."},
    {"role": "assistant", "content": "Looking at the build log now.",
     "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "shell", "arguments": "{}"}}]},
    {"role": "tool", "tool_call_id": "c1", "name": "shell",
     "content": "00000000 log entry request served cache miss\nThe staging database listens on port 6543.\n"
                "The admin password is Tr0ub4dor-3xyz-Q9.\nbuild { ok }"},
    {"role": "assistant", "content": "The release branch uses semantic version tags. Do you want me to tag it?"},
    {"role": "user", "content": "The deploy is blocked on the security review, still waiting for it."},
]


def write_session(ws, session_id: str, messages: list[dict]) -> None:
    path = ws.paths.session_log(session_id)
    with path.open("a", encoding="utf-8") as handle:
        for message in messages:
            handle.write(json.dumps(message) + "\n")


def bullets(ws) -> dict[str, tuple[str, tuple[str, ...]]]:
    """bullet text -> (section, source refs) of MEMORY.md."""
    out = {}
    for section in parse_document(ws.read_memory().text).sections:
        for bullet in section.bullets():
            out[bullet.text] = (section.title, tuple(s.ref for s in bullet.sources))
    return out


def test_statements_are_facts_and_requests_questions_code_and_log_lines_are_not():
    assert is_statement("The staging database listens on port 6543.")
    assert is_statement("I always want answers in British English.")
    assert is_statement("Always use tabs in the Makefile.")          # an imperative that states a standing rule
    for text in ("Please check the build for me.", "Do you want me to tag it?", "Looking at the build log now.",
                 "00000000 log entry request served cache miss", "build { ok }", "Use the shell tool.",
                 "It is", "def main(): return x == 1"):
        assert not is_statement(text), text


def test_each_role_gives_its_kind_of_fact_sourced_to_the_message():
    said = [s for n, m in enumerate(SESSION, start=1) for s in message_statements("s-1", n, m)]
    by_text = {s.text: s for s in said}
    assert by_text["I always want answers in British English."].section == "Preferences"
    assert by_text["I always want answers in British English."].ref == "session:s-1#2"
    assert by_text["The staging database listens on port 6543."].section == "Learnings"
    assert by_text["The staging database listens on port 6543."].ref == "session:s-1#4"
    assert by_text["The release branch uses semantic version tags."].section == "Decisions"
    assert not any("deploy key" in s.text for s in said)                # system prompts are not the session's facts
    assert not any("Looking at" in s.text or "Please" in s.text for s in said)


def test_a_dream_promotes_session_facts_through_the_kind_rules_and_why_reaches_the_message(workspace, capsys):
    write_session(workspace, "s-1", SESSION)
    result = run_dream(workspace, None, now=NOW, apply=True)
    assert result.status == "applied", result.reason
    memory = bullets(workspace)
    assert memory["I always want answers in British English."] == ("Preferences", ("session:s-1#2",))
    assert memory["The staging database listens on port 6543."] == ("Learnings", ("session:s-1#4",))
    assert memory["The release branch uses semantic version tags."][1] == ("session:s-1#5",)
    # The same rules as for daily-log facts: a to-do and a pasted secret are not promoted.
    text = workspace.read_memory().text
    assert "security review" not in text and "Tr0ub4dor" not in text
    skipped = result.proposal.summary["skipped"]
    assert any(s["kind"] == "transient" and "security review" in s["fact"] and s["sources"] == ["session:s-1#6"]
               for s in skipped)
    assert any(s["kind"] == "secret" and "Tr0ub4dor" not in s["fact"] for s in skipped)
    assert result.proposal.summary["session_logs_read"] == ["sessions/s-1.log.jsonl"]

    bullet_id = next(b.id for s in parse_document(text).sections for b in s.bullets() if "port 6543" in b.text)
    provenance = why(workspace, bullet_id)
    assert provenance.sources[0].messages[0][:2] == (4, "tool")
    assert "The staging database listens on port 6543." in provenance.sources[0].messages[0][2]
    assert main(["why", str(workspace.root), bullet_id]) == 0
    assert "#4 tool:" in capsys.readouterr().out


def test_session_logs_are_read_behind_the_watermark_per_file_and_line(workspace):
    write_session(workspace, "s-1", SESSION[:2])
    write_session(workspace, "s-2", [{"role": "user", "content": "My laptop runs Debian testing."}])
    first = run_dream(workspace, None, now=NOW, apply=True)
    assert sorted(first.proposal.summary["session_logs_read"]) == ["sessions/s-1.log.jsonl", "sessions/s-2.log.jsonl"]
    state = load_state(workspace.paths)
    assert state.session_consumed["sessions/s-1.log.jsonl"][0] == 2

    # Nothing changed: nothing is read again.
    again = run_dream(workspace, None, now=NOW + dt.timedelta(hours=1), apply=True)
    assert again.status == "nothing"

    # s-1 grows: only its new line is read, s-2 is not read at all.
    write_session(workspace, "s-1", [{"role": "user", "content": "The team standup is held at 09:30 Lisbon time."}])
    grown = run_dream(workspace, None, now=NOW + dt.timedelta(hours=2), apply=True)
    assert grown.proposal.summary["session_logs_read"] == ["sessions/s-1.log.jsonl"]
    assert [c.sources for c in grown.proposal.changes] == [("session:s-1#3",)]
    assert load_state(workspace.paths).session_consumed["sessions/s-1.log.jsonl"][0] == 3


def test_a_fact_in_a_daily_log_and_in_a_session_is_one_fact(workspace):
    refs = write_log(workspace, "2026-12-05", ["The staging database listens on port 6543."])
    write_session(workspace, "s-1", SESSION[3:4])
    result = run_dream(workspace, None, now=NOW, apply=True)
    assert result.status == "applied"
    memory = bullets(workspace)
    matching = [text for text in memory if "port 6543" in text]
    assert len(matching) == 1
    assert set(memory[matching[0]][1]) == {refs[0], "session:s-1#1"}


def test_an_imported_transcript_is_read_like_an_offloaded_log(workspace, tmp_path):
    transcript = tmp_path / "chat.jsonl"
    transcript.write_text("\n".join(json.dumps(m) for m in [
        {"role": "user", "content": "Our invoices are always issued in euros."},
        {"role": "assistant", "content": "Noted. The finance export runs every Monday at 06:00."},
    ]) + "\n")
    assert main(["import", "jsonl", str(transcript), str(workspace.root), "--session-id", "imp-1"]) == 0
    result = run_dream(workspace, None, now=NOW, apply=True)
    memory = bullets(workspace)
    assert memory["Our invoices are always issued in euros."][1] == ("session:imp-1#1",)
    assert memory["The finance export runs every Monday at 06:00."][1] == ("session:imp-1#2",)
    assert result.proposal.summary["session_logs_read"] == ["sessions/imp-1.log.jsonl"]
