"""`reverie service install|uninstall WS`: run `reverie serve WS` at login, without the app.

macOS: a launchd agent, ~/Library/LaunchAgents/<label>.plist (RunAtLoad, restarted when it
fails). Linux: a systemd user unit, ~/.config/systemd/user/<name>.service (Restart=on-failure,
stopped with SIGTERM, which `serve` answers by finishing the step it is in and exiting).
One per workspace: the name carries the folder's name and a hash of its full path.

These functions only write and remove the files and return the command that loads or
unloads them (`launchctl bootstrap ...`, `systemctl --user enable --now ...`); the CLI
runs that command unless told not to, so tests can check the files in a temporary HOME
without touching the machine's service manager.
"""
from __future__ import annotations

import hashlib
import os
import plistlib
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from core.childproc import reverie_command
from core.errors import ConfigError
from core.store.atomic import atomic_write

LABEL_PREFIX = "io.reverie.serve"


@dataclass(frozen=True)
class ServiceFile:
    platform: str            # "launchd" | "systemd"
    path: Path               # the plist or unit file
    name: str                # the launchd label or the systemd unit name
    load: list[str]          # the command that starts it now (and at every login)
    unload: list[str]        # the command that stops it


def platform_kind(platform: str | None = None) -> str:
    platform = platform or sys.platform
    if platform == "darwin":
        return "launchd"
    if platform.startswith("linux"):
        return "systemd"
    raise ConfigError(f"`reverie service` knows launchd (macOS) and systemd (Linux), not {platform!r}; "
                      "run `reverie serve WS` from your own service manager instead")


def service_name(workspace: Path) -> str:
    root = str(Path(workspace).resolve())
    slug = re.sub(r"[^A-Za-z0-9]+", "-", Path(root).name).strip("-").lower() or "workspace"
    return f"{slug[:40]}-{hashlib.sha256(root.encode()).hexdigest()[:8]}"


def service_file(workspace: Path, *, home: Path | None = None, platform: str | None = None) -> ServiceFile:
    home = Path(home or Path.home())
    kind = platform_kind(platform)
    name = service_name(workspace)
    if kind == "launchd":
        label = f"{LABEL_PREFIX}.{name}"
        path = home / "Library" / "LaunchAgents" / f"{label}.plist"
        domain = f"gui/{os.getuid()}"
        return ServiceFile(kind, path, label, ["launchctl", "bootstrap", domain, str(path)],
                           ["launchctl", "bootout", f"{domain}/{label}"])
    unit = f"reverie-serve-{name}.service"
    path = home / ".config" / "systemd" / "user" / unit
    return ServiceFile(kind, path, unit, ["systemctl", "--user", "enable", "--now", unit],
                       ["systemctl", "--user", "disable", "--now", unit])


def _launchd_plist(label: str, command: list[str], workspace: Path) -> bytes:
    log = str(workspace / ".reverie" / "serve.log")
    return plistlib.dumps({
        "Label": label, "ProgramArguments": command, "RunAtLoad": True,
        "KeepAlive": {"SuccessfulExit": False},       # restarted after a crash, not after a clean stop
        "ProcessType": "Background", "LowPriorityIO": True, "Nice": 10,
        "StandardOutPath": log, "StandardErrorPath": log, "WorkingDirectory": str(workspace),
    })


def _quote(arg: str) -> str:
    return '"' + arg.replace("\\", "\\\\").replace('"', '\\"') + '"' if re.search(r'[\s"\\]', arg) else arg


def _systemd_unit(command: list[str], workspace: Path) -> str:
    return "\n".join([
        "[Unit]", f"Description=Reverie scheduler for {workspace}", "",
        "[Service]", "Type=simple", "ExecStart=" + " ".join(_quote(a).replace("%", "%%") for a in command),
        f"WorkingDirectory={_quote(str(workspace))}",
        "Restart=on-failure", "RestartSec=30", "KillSignal=SIGTERM", "TimeoutStopSec=60", "Nice=10", "",
        "[Install]", "WantedBy=default.target", ""])


def install(workspace: Path, *, home: Path | None = None, platform: str | None = None,
            extra_args: list[str] | None = None) -> ServiceFile:
    """Write the service file for `reverie serve WORKSPACE` (replacing an older one of ours)."""
    workspace = Path(workspace).resolve()
    target = service_file(workspace, home=home, platform=platform)
    command = reverie_command("serve", str(workspace), *(extra_args or []))
    target.path.parent.mkdir(parents=True, exist_ok=True)
    data = _launchd_plist(target.name, command, workspace) if target.platform == "launchd" \
        else _systemd_unit(command, workspace)
    atomic_write(target.path, data)
    return target


def uninstall(workspace: Path, *, home: Path | None = None, platform: str | None = None) -> ServiceFile | None:
    """Remove the service file; None when none was installed for this workspace."""
    target = service_file(Path(workspace).resolve(), home=home, platform=platform)
    try:
        target.path.unlink()
    except FileNotFoundError:
        return None
    return target
