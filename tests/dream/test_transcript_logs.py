"""A hook-named log that is a pasted conversation is read as a session: only what the person said
(synthetic transcripts, English and Chinese)."""
from __future__ import annotations

import datetime as dt
import os

from core.dream.pipeline.consolidator import run_dream
from core.dream.pipeline.material import drop_status_lines, facts_from_lines
from core.dream.pipeline.transcript import transcript_statements, turns
from core.store.atomic import atomic_write

SESSION_LOG = """# Session: 2026-05-02 10:14:03 UTC

- **Session Key**: agent:main:chat:direct:5550001
- **Session ID**: 0f3c9a1e-7b2d-4c55-9e0a-1d2b3c4d5e6f
- **Source**: chat

## Conversation Summary

assistant: Perfect! The migration ran clean. Commit them:
```bash
git add -A && git commit -m "migrate"
```
user: Sender (untrusted metadata):
```json
{"label": "Marta", "id": "5550001"}
```

[Sat 2026-05-02 10:16 UTC] My staging database is called heron-staging and it runs on port 6432.
assistant: Got it. Let me check the pool settings first.
- **Pool** ✅ — size raised to 40
**Next step** — run the vacuum tonight?
user: <toolkit>
IMPORTANT: The harness registered four tools for you.
Only call the tools that are listed above.
</toolkit>
Please run the vacuum now.
assistant: All done:
- vacuum finished in 42s
"""

CHINESE_SESSION = """# 会话：2026-05-03

用户：我的博客部署在香港的服务器上，用的是 Caddy。
助手：好的！我来检查一下配置。
- **状态**：✅ 已完成
助手：配置看起来没问题。需要我重启吗？
用户：不用现在重启，周末我要自己重启服务器。
"""

NAMED_SPEAKERS = """Kip: The newsletter is sent every Thursday at nine.
Jarvis: Understood. I will schedule the send for Thursday 09:00 and also prepare a draft on Wednesday so you
can review it, and I will attach the analytics from the previous issue to the draft as well.
Kip: Good.
Jarvis: I have scheduled it. The draft will be ready on Wednesday afternoon with the analytics attached, and
I will remind you an hour before the send in case anything needs to change at the last minute.
Kip: The sponsor slot is sold to Ferncliff until June.
Jarvis: Noted. I added Ferncliff to the sponsor slot of every issue until the end of June, and I will flag it
when the slot opens again so you can offer it to the next sponsor on your list.
"""

PLAIN_LOG = """# 2026-05-04

Problem: the backup job timed out at 03:00.
Fix: the backup job now starts at 02:00 with a longer timeout.
- The NAS is named vault and lives in the office closet
"""


def _texts(found) -> list[str]:
    return [s.text for s in found]


def test_a_session_transcript_gives_only_what_the_person_said():
    lines = SESSION_LOG.split("\n")
    found = transcript_statements(lines)
    assert found is not None
    texts = _texts(found)
    assert texts == ["My staging database is called heron-staging and it runs on port 6432."]
    line = lines[found[0].first - 1]
    assert "heron-staging" in line and line.startswith("[Sat")
    # none of the assistant's chatter, its bullets, the header's record fields or the injected tool block
    assert not any("Perfect" in t or "Pool" in t or "Session" in t or "harness" in t or "tools" in t for t in texts)


def test_a_chinese_transcript_is_read_by_its_structure():
    found = transcript_statements(CHINESE_SESSION.split("\n"))
    assert found is not None
    assert _texts(found) == ["我的博客部署在香港的服务器上，用的是 Caddy。", "不用现在重启，周末我要自己重启服务器。"]


def test_named_speakers_take_turns_and_the_person_is_the_one_who_says_less():
    found = turns(NAMED_SPEAKERS.rstrip("\n").split("\n"))
    assert found is not None
    assert {t.role for t in found if t.person} == {"kip"}
    texts = _texts(transcript_statements(NAMED_SPEAKERS.split("\n")))
    assert "The newsletter is sent every Thursday at nine." in texts
    assert "The sponsor slot is sold to Ferncliff until June." in texts
    assert not any("schedule" in t or "Noted" in t for t in texts)


def test_a_log_with_a_few_labels_is_not_a_transcript():
    lines = PLAIN_LOG.split("\n")
    assert transcript_statements(lines) is None
    texts = [f.text for f in facts_from_lines("memory/2026-05-04.md", lines, 0, "2026-05-04")]
    assert "Fix: the backup job now starts at 02:00 with a longer timeout." in texts
    assert "The NAS is named vault and lives in the office closet" in texts


def test_a_transcript_appended_to_is_read_from_where_the_last_dream_stopped():
    lines = CHINESE_SESSION.split("\n")
    later = len(lines) - 2            # the last user turn only
    found = transcript_statements(lines, later)
    assert _texts(found) == ["不用现在重启，周末我要自己重启服务器。"]
    assert all(s.first > later for s in found)


def test_the_same_words_in_the_person_turns_of_three_sessions_are_a_harness_template():
    facts = []
    for day, owner in (("2026-05-01", "Marta"), ("2026-05-02", "Jonas"), ("2026-05-03", "Ilse")):
        log = (f"user: The vault NAS is looked after by {owner} this week.\n"
               "assistant: Noted, I will keep that in mind for the backups.\n"
               "user: A new session was started and the tools are ready to use.\n")
        facts += facts_from_lines(f"memory/{day}-chat.md", log.split("\n"), 0, day)
    kept, dropped = drop_status_lines(facts)
    assert dropped == 3
    assert all("session was started" not in f.text for f in kept)
    assert all(f.origin == "transcript" for f in kept) and len(kept) == 3


def test_a_dream_over_a_hook_named_transcript_proposes_the_persons_fact(workspace):
    path = workspace.paths.memory_dir / "2026-05-02-db-migration.md"
    atomic_write(path, SESSION_LOG)
    stamp = dt.datetime(2026, 5, 2, 12, tzinfo=dt.timezone.utc).timestamp()
    os.utime(path, (stamp, stamp))
    result = run_dream(workspace, None, now=dt.datetime(2026, 5, 3, 3, tzinfo=dt.timezone.utc), dry_run=True)
    added = [c.after for c in result.proposal.changes if c.kind == "add"]
    assert any("heron-staging" in line and "2026-05-02-db-migration.md#L" in line for line in added), added
    assert not any("Perfect" in line or "Commit them" in line or "Pool" in line for line in added), added
