"""Claude Code hooks that keep a workspace fed: at SessionEnd and PreCompact, `reverie hook claude-code WS`
imports the session's transcript and flushes the new messages.

They go into Claude Code's settings (`DIR/.claude/settings.json` for a project, `~/.claude/settings.json`
for the user), merged with the hooks already there; a hook that runs the same command is not added twice.
"""
from __future__ import annotations

import json
import shlex
from pathlib import Path

from core.childproc import reverie_command
from core.connect.clients import Target
from core.connect.writer import Planned, read_text
from core.errors import ConfigError

EVENTS = ("SessionEnd", "PreCompact")
TIMEOUT_S = 120          # the flush runs the local model; Claude Code's default of 60 s can be short


def settings_target(scope: str, *, project: Path | None = None, home: Path | None = None) -> Target:
    base = Path(project or Path.cwd()).expanduser().resolve() if scope == "project" else Path(home or Path.home())
    return Target("claude-code", scope, base / ".claude" / "settings.json", "json")


def hook_command(workspace: Path) -> str:
    return shlex.join(reverie_command("hook", "claude-code", str(Path(workspace).resolve())))


def plan_hooks(target: Target, workspace: Path) -> Planned:
    old = read_text(target.path)
    try:
        data = json.loads(old) if old.strip() else {}
    except ValueError as exc:
        raise ConfigError(f"{target.path} is not valid JSON ({exc}); fix it or move it aside, nothing was written") from exc
    hooks = data.setdefault("hooks", {}) if isinstance(data, dict) else None
    if not isinstance(hooks, dict):
        raise ConfigError(f"{target.path}: not a settings object with a hooks object; nothing was written")
    command = hook_command(workspace)
    for event in EVENTS:
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise ConfigError(f"{target.path}: hooks.{event} is not a list; nothing was written")
        present = any(isinstance(h, dict) and h.get("command") == command
                      for g in groups if isinstance(g, dict) for h in g.get("hooks", []) if isinstance(g.get("hooks"), list))
        if not present:
            entry = {"type": "command", "command": command, "timeout": TIMEOUT_S}
            groups.append({"matcher": "", "hooks": [entry]} if event == "PreCompact" else {"hooks": [entry]})
    return Planned(target, old, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
