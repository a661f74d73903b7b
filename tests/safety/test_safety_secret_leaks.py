"""No secret leaves a log: not into MEMORY.md by a dream, not to an agent through MCP reads.

The red team's cases, on real workspaces: prose and assignment shapes the scanner missed ("the AWS
secret access key for deploy is wJalr...", `DATABASE_PASSWORD=...`), one body line of a private key
promoted alone, raw values in `memory_get` / `memory_search` / `memory_recent` / resources, a value
with "/" taken for a path, and Reverie's own import ids flagged (so `--redact` made the next import
duplicate the message). The values below are synthetic.
"""
from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys

import anyio
import pytest

from core.config import Settings
from core.mcp.recent import memory_recent
from core.mcp.tools import MemoryTools
from core.secrets import find_secrets, hidden_secret_lines, mask_secrets, redact, secret_lines
from core.workspace import Workspace
from tests.support.mcp_client import data_of, mcp_client, text_of
from tests.support.processes import ROOT, python_env

AWS = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
PASSPHRASE = "correcthorsebatterystaple"
KEY_BODY = ["MIIEowIBAAKCAQEA7VJTUt9Us8cKjMzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6d",
            "VP+aqfJtl3YjnlJhVCD6Ypc1+kfaP6MLn7y0aj3S0Hq9vKCxQxa1cbKn5AqRcpEd",
            "Xq1ZqWmGk9YvVq8rC3kU7dWm4RzH6pN2sLbT8yFhJcQeRnA5vKsD0tMuGiYwPoE3"]
VALUES = [AWS, PASSPHRASE, "Zhang2024san", "Tr0ub4dor", "admin123", "s3cretPass", "P@ss[w0rd]!", "abc/def123",
          *KEY_BODY]
LOG_LINES = [
    f"- [09:00] The AWS secret access key for deploy is {AWS}",
    f"- [09:05] DATABASE_PASSWORD={PASSPHRASE}",
    "- [09:10] 数据库密码：Zhang2024san，记得改",
    "- [09:15] 用户: root / Tr0ub4dor",
    "- [09:20] Use the router login (admin/admin123) to reset it",
    "- [09:25] connect with postgres:s3cretPass@db.internal:5432",
    "- [09:30] the admin password is P@ss[w0rd]! for now",
    "- [09:35] the vault password is abc/def123",
    "- [09:40] The deploy key:",
    "-----BEGIN RSA PRIVATE KEY-----", *KEY_BODY, "-----END RSA PRIVATE KEY-----",
    "- [09:45] The team standup moved to 10:30 on Mondays",
]


@pytest.mark.parametrize("line, value", [
    ("The AWS secret access key for deploy is " + AWS, AWS),
    ("DATABASE_PASSWORD=" + PASSPHRASE, PASSPHRASE),
    ("the password is " + PASSPHRASE, PASSPHRASE),
    ("密码：Zhang2024san", "Zhang2024san"),
    ("用户: root / Tr0ub4dor", "Tr0ub4dor"),
    ("Use the router login (admin/admin123) to reset it", "admin123"),
    ("connect with postgres:s3cretPass@db.internal:5432", "s3cretPass"),
    ("the admin password is P@ss[w0rd]! for now", "P@ss[w0rd]!"),
    ("the vault password is abc/def123", "abc/def123"),
    ("Mail app password for the laptop: qhtm-zrwd-pfka-vyen", "qhtm-zrwd-pfka-vyen"),
])
def test_generic_shapes_are_found_whole(line, value):
    assert value not in redact(line), redact(line)
    assert any(line[h.start:h.end] == value or value.startswith(line[h.start:h.end]) for h in find_secrets(line))


@pytest.mark.parametrize("line", [
    '{"role":"user","content":"my api key rotated","id":"j-3b72a9c1d4e5f607"}',
    "the memory id:m-aee548 is the key fact", "secret key path is keys/deploy/id_ed25519.pub",
    "we changed the password policy to 90 days", "the password is required for every login",
    "password: see docs/setup", "The user is Bob and the account is active",
    "the password hint is: blue-with-gold", "the wiki page is team-docs-main-page",
])
def test_ids_paths_and_prose_are_not_secrets(line):
    assert find_secrets(line) == [], line


def test_every_line_of_a_key_block_is_flagged_and_masked_in_place():
    text = "\n".join(LOG_LINES)
    body = {LOG_LINES.index(line) + 1 for line in KEY_BODY}
    assert body <= hidden_secret_lines(text) and body <= secret_lines(text)
    masked = mask_secrets(text)
    assert masked.count("\n") == text.count("\n")            # line numbers stay true
    assert not any(value in masked for value in VALUES)
    assert "10:30 on Mondays" in masked


def _seed(ws: Workspace) -> None:
    ws.paths.daily_log(dt.date.today()).write_text(f"# {dt.date.today()}\n\n" + "\n".join(LOG_LINES) + "\n",
                                                   encoding="utf-8")


@pytest.mark.slow
def test_a_dream_promotes_no_secret_and_no_line_of_a_key_block(tmp_path):
    """`reverie dream --apply` (loads the embedding model: about 30 s)."""
    with Workspace.create(tmp_path / "ws") as ws:
        _seed(ws)
    done = subprocess.run([sys.executable, "-m", "core", "dream", str(tmp_path / "ws"), "--no-model", "--apply"],
                          capture_output=True, text=True, cwd=ROOT, env=python_env(), timeout=600)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    memory = (tmp_path / "ws" / "MEMORY.md").read_text(encoding="utf-8")
    assert "standup moved to 10:30" in memory                # the dream ran and promoted the plain fact
    leaked = [value for value in VALUES if value in memory]
    assert leaked == []


def test_agent_reads_are_masked_unless_the_person_turns_it_off(workspace):
    _seed(workspace)
    rel = workspace.relative(workspace.paths.daily_log(dt.date.today()))
    tools = MemoryTools(workspace)
    answers = [tools.memory_get(rel), tools.memory_get(rel, start=13, end=15), tools.today_log(),
               json.dumps(memory_recent(workspace, 1), ensure_ascii=False)]
    for query in ("secret access key deploy", "DATABASE_PASSWORD", "router login", "RSA PRIVATE KEY", "MIIEowIBAAKC"):
        answers.append(json.dumps(tools.memory_search(query, mode="keyword"), ensure_ascii=False))
    joined = "\n".join(answers)
    assert [value for value in VALUES if value in joined] == []
    assert "[redacted" in joined and "10:30 on Mondays" in joined
    assert "14: [redacted private key]" in answers[1]         # a body line read on its own is masked too
    workspace.settings = Settings.from_dict({"memory": {"mask_secrets": False}})
    assert AWS in MemoryTools(workspace).memory_get(rel)        # the person's own choice


def test_mcp_resources_and_tools_over_stdio_mask_secret_values(workspace):
    _seed(workspace)
    (workspace.root / "MEMORY.md").write_text(f"# Memory\n\n- DATABASE_PASSWORD={PASSPHRASE}\n", encoding="utf-8")
    rel = workspace.relative(workspace.paths.daily_log(dt.date.today()))

    async def session():
        async with mcp_client(workspace.root, workspace.root.parent / "stderr.log") as client:
            out = [text_of(await client.call_tool("memory_get", {"path": rel})),
                   json.dumps(data_of(await client.call_tool("memory_recent", {"days": 1}))),
                   json.dumps(data_of(await client.call_tool("memory_search", {"query": "password",
                                                                                "mode": "keyword"})))]
            for uri in ("memory://MEMORY.md", "memory://daily/today"):
                out.append(json.dumps([c.text for c in (await client.read_resource(uri)).contents]))
            return out

    joined = "\n".join(anyio.run(session))
    assert [value for value in VALUES if value in joined] == [] and "[redacted" in joined


def test_redacting_a_log_then_importing_again_adds_nothing_twice(workspace, tmp_path):
    """Reverie's import ids were flagged near "key" and redacted, so the next import duplicated them."""
    from core.importers import import_chat_log

    transcript = tmp_path / "chat.jsonl"
    transcript.write_text("\n".join(json.dumps(m) for m in [
        {"role": "user", "content": "which api key do we use for the deploy key rotation?"},
        {"role": "assistant", "content": f"The AWS secret access key for deploy is {AWS}"}]) + "\n", encoding="utf-8")
    [first] = import_chat_log(workspace, transcript)
    assert first.written == 2
    done = subprocess.run([sys.executable, "-m", "core", "secrets", str(workspace.root), "--redact"],
                          capture_output=True, text=True, cwd=ROOT, env=python_env(), timeout=300)
    assert done.returncode == 0, done.stderr
    stored = workspace.paths.session_log(first.session_id).read_text(encoding="utf-8")
    assert AWS not in stored and all(json.loads(line)["id"].startswith("j-") for line in stored.splitlines())
    [again] = import_chat_log(workspace, transcript)
    assert again.written == 0


def test_the_dream_takes_no_fact_from_a_line_of_a_key_block():
    """One body line of a private key was promoted alone: the block was found, its lines judged one by one."""
    from core.dream.pipeline.material import facts_from_lines

    lines = [f"# {dt.date.today()}", "", *LOG_LINES]
    facts = facts_from_lines("memory/today.md", lines, 0, dt.date.today().isoformat())
    assert any("standup moved to 10:30" in fact.text for fact in facts)
    assert not any(body[:20] in fact.text for fact in facts for body in KEY_BODY)
