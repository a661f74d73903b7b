"""Merge Reverie's MCP server into a client's configuration file: keep what is there, back it up, show the diff.

Only the one server entry (`mcpServers.NAME` in JSON, `[mcp_servers.NAME]` in TOML)
is added or replaced; every other key, server and (in TOML) comment stays as it was.
A file that does not parse is never overwritten: the error names it and the line.
Before a file is replaced, its old bytes go to a new `<file>.reverie-backup-<UTC time>` (never over an
earlier backup); a file Reverie will not write (through a link) gets no backup either.
"""
from __future__ import annotations

import datetime as dt
import difflib
import json
from dataclasses import dataclass
from pathlib import Path

from core.connect.clients import Target
from core.errors import ConfigError
from core.store.atomic import atomic_write, check_writable, write_new


@dataclass(frozen=True)
class Planned:
    target: Target
    old_text: str            # "" when the file does not exist yet
    new_text: str

    @property
    def changed(self) -> bool:
        return self.old_text != self.new_text

    def diff(self) -> str:
        name = str(self.target.path)
        return "".join(difflib.unified_diff(self.old_text.splitlines(keepends=True),
                                            self.new_text.splitlines(keepends=True),
                                            fromfile=name if self.old_text else "/dev/null", tofile=name))


def read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc


def _merge_json(path: Path, text: str, name: str, entry: dict) -> str:
    try:
        data = json.loads(text) if text.strip() else {}
    except ValueError as exc:
        raise ConfigError(f"{path} is not valid JSON ({exc}); fix it or move it aside, nothing was written") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path} is not a JSON object; fix it or move it aside, nothing was written")
    servers = data.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise ConfigError(f"{path}: mcpServers is not an object; fix it or move it aside, nothing was written")
    servers[name] = {**servers.get(name, {}), **entry} if isinstance(servers.get(name), dict) else entry
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _merge_toml(path: Path, text: str, name: str, entry: dict) -> str:
    import tomlkit
    from tomlkit.exceptions import ParseError

    try:
        doc = tomlkit.parse(text)
    except ParseError as exc:
        raise ConfigError(f"{path} is not valid TOML ({exc}); fix it or move it aside, nothing was written") from exc
    servers = doc.get("mcp_servers")
    if servers is None:
        servers = tomlkit.table(is_super_table=True)
        doc["mcp_servers"] = servers
    elif not isinstance(servers, dict):
        raise ConfigError(f"{path}: mcp_servers is not a table; fix it or move it aside, nothing was written")
    table = servers.get(name)
    if not isinstance(table, dict):
        appended = _append_table(text, name, entry)
        if appended:
            return appended
        table = tomlkit.inline_table() if isinstance(servers, tomlkit.items.InlineTable) else tomlkit.table()
        servers[name] = table
    for key, value in entry.items():
        table[key] = value      # an existing table keeps its other keys (env, startup_timeout_sec, ...)
    out = tomlkit.dumps(doc)
    return out if out.endswith("\n") else out + "\n"


def _append_table(text: str, name: str, entry: dict) -> str:
    """`text` with a new `[mcp_servers.NAME]` table at its end (where a person reads it last);
    "" when that would not parse (mcp_servers written as dotted keys or inline): tomlkit places it then."""
    import tomllib

    import tomlkit

    block = tomlkit.dumps({"mcp_servers": {name: entry}})
    out = (text.rstrip("\n") + "\n\n" if text.strip() else "") + block
    try:
        tomllib.loads(out)
    except tomllib.TOMLDecodeError:
        return ""
    return out


def plan(target: Target, name: str, entry: dict) -> Planned:
    """The file as it is and as it would be with the server entry merged in."""
    old = read_text(target.path)
    merge = _merge_toml if target.format == "toml" else _merge_json
    return Planned(target, old, merge(target.path, old, name, entry))


def apply(planned: Planned, *, now: dt.datetime | None = None) -> Path | None:
    """Write the merged file (atomically); returns the backup of the old one, None when there was none."""
    if not planned.changed:
        return None
    path = planned.target.path
    check_writable(path)           # a write that will be refused leaves no backup behind either
    backup = None
    if path.exists():
        stamp = (now or dt.datetime.now(dt.timezone.utc)).strftime("%Y%m%dT%H%M%S.%fZ")
        # A new name every time (`-2`, `-3`, ... within one microsecond): a backup never overwrites one.
        backup = write_new(path.with_name(f"{path.name}.reverie-backup-{stamp}"), path.read_bytes())
    atomic_write(path, planned.new_text)
    return backup
