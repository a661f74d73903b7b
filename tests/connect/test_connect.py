"""`reverie connect`: each client's configuration, merged into fixture files of its own format in a
temporary HOME and project, with a backup and a dry run; and the official MCP client starts the server
from what was written."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import anyio
import pytest

from core.connect import apply, plan_connection
from core.connect.clients import claude_desktop_config, target_for
from core.errors import ConfigError
from core.workspace import Workspace
from tests.support.processes import ROOT, python_env

FIXTURES = Path(__file__).resolve().parents[1] / "data" / "connect"


@pytest.fixture
def setup(tmp_path):
    ws = Workspace.create(tmp_path / "ws").root
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    return ws, home, project


def _place(fixture: str, path: Path) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(FIXTURES / fixture, path)
    return path.read_text(encoding="utf-8")


def _connect(client, ws, home, project, *extra):
    return subprocess.run([sys.executable, "-m", "core", "connect", client, str(ws), "--project", str(project),
                           *extra], cwd=ROOT, env=python_env(HOME=str(home)), capture_output=True, text=True,
                          timeout=120)


def _backups(path: Path) -> list[Path]:
    return sorted(path.parent.glob(path.name + ".reverie-backup-*"))


@pytest.mark.parametrize("client,scope,fixture,where", [
    ("claude-code", "user", "claude.json", ".claude.json"),
    ("claude-code", "project", "mcp.json", "P/.mcp.json"),
    ("cursor", "project", "cursor-mcp.json", "P/.cursor/mcp.json"),
    ("cursor", "user", "cursor-mcp.json", ".cursor/mcp.json"),
    ("claude-desktop", "user", "claude_desktop_config.json", "DESKTOP"),
])
def test_json_clients_merge_keep_everything_else_and_back_up(setup, client, scope, fixture, where):
    ws, home, project = setup
    path = claude_desktop_config(home) if where == "DESKTOP" else \
        project / where[2:] if where.startswith("P/") else home / where
    before = json.loads(_place(fixture, path))
    done = _connect(client, ws, home, project, "--scope", scope)
    assert done.returncode == 0, done.stderr
    assert f"wrote {path}" in done.stdout
    after = json.loads(path.read_text(encoding="utf-8"))
    entry = after["mcpServers"]["reverie"]
    assert entry["args"] == ["mcp", str(ws)] and Path(entry["command"]).name in ("reverie", "python")
    assert (entry.get("type") == "stdio") is (client == "claude-code")
    for key, value in before.items():                         # every other setting and server is kept
        if key != "mcpServers":
            assert after[key] == value
    for name, server in before["mcpServers"].items():
        if name != "reverie":
            assert after["mcpServers"][name] == server
    if "reverie" in before["mcpServers"]:                     # an older entry is updated, its env kept
        assert entry["env"] == before["mcpServers"]["reverie"]["env"]
    [backup] = _backups(path)
    assert json.loads(backup.read_text(encoding="utf-8")) == before
    again = _connect(client, ws, home, project, "--scope", scope)
    assert "nothing to change" in again.stdout and len(_backups(path)) == 1


def test_codex_toml_keeps_comments_and_other_tables(setup):
    ws, home, project = setup
    path = home / ".codex" / "config.toml"
    before = _place("codex-config.toml", path)
    dry = _connect("codex", ws, home, project, "--dry-run")
    assert dry.returncode == 0 and path.read_text(encoding="utf-8") == before and not _backups(path)
    assert "+[mcp_servers.reverie]" in dry.stdout and "+args = [\"mcp\", " in dry.stdout
    assert "(dry run:" in dry.stdout
    done = _connect("codex", ws, home, project)
    assert done.returncode == 0, done.stderr
    text = path.read_text(encoding="utf-8")
    assert text.startswith(before)                             # comments, order and tables untouched
    data = tomllib.loads(text)
    assert data["mcp_servers"]["reverie"]["args"] == ["mcp", str(ws)]
    assert data["mcp_servers"]["docs"]["env"] == {"DOCS_ROOT": "/home/me/docs"}
    assert data["profiles"]["fast"]["model"] == "gpt-5-mini"
    assert _backups(path)[0].read_text(encoding="utf-8") == before


def test_new_files_broken_files_and_bad_input(setup, tmp_path):
    ws, home, project = setup
    created = plan_connection("codex", ws, scope="project", project=project, home=home)
    assert created.old_text == "" and created.diff().startswith("--- /dev/null")
    assert apply(created) is None and (project / ".codex" / "config.toml").exists()
    broken = project / ".mcp.json"
    broken.write_text('{"mcpServers": {', encoding="utf-8")
    done = _connect("claude-code", ws, home, project)
    assert done.returncode == 2 and "is not valid JSON" in done.stderr and "Traceback" not in done.stderr
    assert broken.read_text(encoding="utf-8") == '{"mcpServers": {'           # never overwritten
    with pytest.raises(ConfigError):
        target_for("claude-desktop", "project", home=home)
    assert _connect("cursor", tmp_path / "missing", home, project).stderr.startswith("reverie: error: no workspace")
    assert _connect("cursor", ws, home, project, "--name", "a b").returncode == 2


def test_the_official_mcp_client_starts_the_server_from_each_written_config(setup):
    ws, home, project = setup
    for client in ("claude-code", "codex"):
        assert _connect(client, ws, home, project, "--scope", "project").returncode == 0
    entries = [json.loads((project / ".mcp.json").read_text(encoding="utf-8"))["mcpServers"]["reverie"],
               tomllib.loads((project / ".codex" / "config.toml").read_text(encoding="utf-8"))["mcp_servers"]["reverie"]]

    async def tools_of(entry) -> set[str]:
        from mcp import Client
        from mcp.client.stdio import StdioServerParameters, stdio_client

        # PYTHONPATH only makes the installed command run this checkout's code
        params = StdioServerParameters(command=entry["command"], args=entry["args"],
                                       env={"PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"})
        with open(project / "server.err", "w", encoding="utf-8") as err:
            async with Client(stdio_client(params, errlog=err), read_timeout_seconds=120) as client:
                return {t.name for t in (await client.list_tools()).tools}

    for entry in entries:
        assert {"memory_search", "memory_recent"} <= anyio.run(tools_of, entry)


@pytest.mark.parametrize("text", [
    'mcp_servers = { other = { command = "x" } }\n',              # an inline table
    'mcp_servers.other.command = "x"\n',                          # dotted keys
    '[mcp_servers.reverie]\ncommand = "old"\nenv = { A = "1" }\n\n[x]\ny = 1\n',   # our own, older
])
def test_every_toml_shape_of_mcp_servers_merges(tmp_path, text):
    from core.connect.clients import Target
    from core.connect.writer import plan

    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    data = tomllib.loads(plan(Target("codex", "user", path, "toml"), "reverie", {"command": "r", "args": ["mcp", "w"]}).new_text)
    assert data["mcp_servers"]["reverie"]["args"] == ["mcp", "w"] and data["mcp_servers"]["reverie"]["command"] == "r"
    old = tomllib.loads(text)["mcp_servers"]
    assert all(data["mcp_servers"][k] == v for k, v in old.items() if k != "reverie")
    if "reverie" in old:
        assert data["mcp_servers"]["reverie"]["env"] == {"A": "1"} and data["x"] == {"y": 1}
