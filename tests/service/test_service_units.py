"""`reverie service install|uninstall`: launchd and systemd files written into a temporary HOME
(the service managers themselves are never called here: --no-load)."""
from __future__ import annotations

import plistlib
import shlex
import subprocess
import sys

import pytest

from core.errors import ConfigError
from core.service import units
from core.workspace import Workspace
from tests.support.processes import ROOT, python_env


def test_launchd_agent_runs_serve_for_the_workspace_and_uninstall_removes_it(tmp_path):
    ws = Workspace.create(tmp_path / "My Notes").root
    home = tmp_path / "home"
    target = units.install(ws, home=home, platform="darwin")
    assert target.path.parent == home / "Library" / "LaunchAgents"
    plist = plistlib.loads(target.path.read_bytes())
    assert plist["Label"] == target.name and target.name.startswith("io.reverie.serve.my-notes-")
    assert plist["ProgramArguments"][-2:] == ["serve", str(ws)]
    assert plist["RunAtLoad"] is True and plist["KeepAlive"] == {"SuccessfulExit": False}
    assert plist["StandardOutPath"] == str(ws / ".reverie" / "serve.log")
    assert target.load[:2] == ["launchctl", "bootstrap"] and target.load[-1] == str(target.path)
    assert units.install(ws, home=home, platform="darwin").path == target.path      # reinstall replaces
    assert units.uninstall(ws, home=home, platform="darwin") == target
    assert not target.path.exists()
    assert units.uninstall(ws, home=home, platform="darwin") is None


def test_systemd_user_unit_names_one_service_per_workspace(tmp_path):
    home = tmp_path / "home"
    a = Workspace.create(tmp_path / "a" / "notes").root
    b = Workspace.create(tmp_path / "b" / "notes").root
    unit_a = units.install(a, home=home, platform="linux")
    unit_b = units.install(b, home=home, platform="linux")
    assert unit_a.path != unit_b.path and unit_a.path.parent == home / ".config" / "systemd" / "user"
    text = unit_a.path.read_text(encoding="utf-8")
    exec_line = next(line for line in text.splitlines() if line.startswith("ExecStart="))
    assert shlex.split(exec_line[len("ExecStart="):])[-2:] == ["serve", str(a)]
    assert "KillSignal=SIGTERM" in text and "WantedBy=default.target" in text
    assert unit_a.load == ["systemctl", "--user", "enable", "--now", unit_a.name]
    with pytest.raises(ConfigError):
        units.install(a, home=home, platform="win32")


def test_the_cli_writes_into_home_without_loading_with_no_load(tmp_path):
    ws = Workspace.create(tmp_path / "ws").root
    home = tmp_path / "home"
    env = python_env(HOME=str(home))

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "core", *args], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=120)
    done = cli("service", "install", str(ws), "--no-load")
    assert done.returncode == 0, done.stderr
    written = units.service_file(ws, home=home).path
    assert written.exists() and f"wrote {units.platform_kind()} service {written}" in done.stdout
    assert "not loaded; run: " in done.stdout
    done = cli("service", "uninstall", str(ws), "--no-load")
    assert done.returncode == 0 and not written.exists()
    done = cli("service", "install", str(tmp_path / "nowhere"), "--no-load")
    assert done.returncode == 2 and done.stderr.startswith("reverie: error: no workspace at")


def test_one_scheduler_per_workspace(workspace):
    from core.service import scheduler_lock, scheduler_running

    assert not scheduler_running(workspace.paths)
    with scheduler_lock(workspace.paths) as mine:
        assert mine and scheduler_running(workspace.paths)
        with scheduler_lock(workspace.paths) as second:
            assert not second                        # the app finds `serve` running (and the other way round)
    assert not scheduler_running(workspace.paths)
