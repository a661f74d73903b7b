"""Every bad input gets one clear line and exit status 2: never a traceback, never a blocked workspace."""
from __future__ import annotations

import contextlib
import os
import shutil
import stat
import subprocess
import sys

import pytest

from core.config import ConfigWarning, load_settings
from core.errors import ConfigError
from tests.support.processes import ROOT, python_env


def _reverie(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "core", *args], capture_output=True, text=True, cwd=ROOT,
                          env=python_env(), timeout=180)


def _one_line_error(done: subprocess.CompletedProcess, *words: str) -> None:
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("reverie: error: "), done.stderr
    for word in words:
        assert word in lines[0], (word, lines[0])


@contextlib.contextmanager
def read_only(path):
    """`path` read-only for this process: permission bits for a normal user; root ignores those, so a
    read-only bind mount there (skipped where mounting is not allowed)."""
    if os.geteuid() != 0:
        modes = {p: p.stat().st_mode for p in [path, *path.rglob("*")] if not p.is_symlink()}
        for p in modes:
            p.chmod(modes[p] & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
        try:
            yield
        finally:
            for p, mode in modes.items():
                p.chmod(mode)
        return
    mount = shutil.which("mount")
    bound = mount and subprocess.run([mount, "--bind", str(path), str(path)], capture_output=True).returncode == 0
    if not bound:
        pytest.skip("running as root without permission to mount: cannot make a folder read-only")
    try:
        if subprocess.run([mount, "-o", "remount,bind,ro", str(path)], capture_output=True).returncode != 0:
            pytest.skip("cannot remount read-only here")
        yield
    finally:
        subprocess.run([shutil.which("umount"), str(path)], capture_output=True)


def test_a_read_only_workspace_says_so_in_one_line(workspace):
    workspace.append_daily("a fact from before")
    root = str(workspace.root)
    with read_only(workspace.root):
        _one_line_error(_reverie("log", root, "a new fact"), "read-only")
        _one_line_error(_reverie("undo", root), "nothing to undo")
        done = _reverie("read", root, "MEMORY.md", "--lines", "1-1")     # reading still works
        assert done.returncode == 0 and "# MEMORY" in done.stdout
        search = _reverie("search", root, "fact", "--mode", "keyword")
        assert "Traceback" not in search.stderr and search.returncode in (0, 2)


def test_a_too_long_path_is_one_line(workspace):
    _one_line_error(_reverie("read", str(workspace.root), "x" * 5000), "too long")
    _one_line_error(_reverie("history", str(workspace.root), "--file", "memory/" + "y" * 400 + ".md"), "too long")


def test_an_unknown_setting_is_a_warning_not_a_locked_workspace(workspace, tmp_path):
    config = workspace.paths.config_toml
    config.write_text('[search]\ndefault_mode = "keyword"\ncolour = "blue"\n\n[telemetry]\non = true\n',
                      encoding="utf-8")
    with pytest.warns(ConfigWarning) as caught:
        settings = load_settings(config)
    assert sorted(str(w.message).split(":")[0] for w in caught) == ["unknown setting(s) in [search]",
                                                                    "unknown settings section(s)"]
    assert settings.search.default_mode == "keyword"          # the known settings still apply
    done = _reverie("log", str(workspace.root), "still works")
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if line.startswith("reverie: warning: ")]
    assert len(warnings) == 2 and "colour" in warnings[1] + warnings[0] and "telemetry" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("section, line, word", [
    ("search", 'default_mode = "nonsense"', "default_mode"), ("model", 'backend = "cloud"', "backend"),
    ("model", 'json_mode = "maybe"', "json_mode"), ("dream", 'gate_hours = "soon"', "gate_hours")])
def test_an_invalid_value_is_one_line_and_exit_2(workspace, section, line, word):
    workspace.paths.config_toml.write_text(f"[{section}]\n{line}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=word):
        load_settings(workspace.paths.config_toml)
    _one_line_error(_reverie("log", str(workspace.root), "x"), word)


def test_a_keyword_search_never_loads_the_embedding_model(workspace):
    """`reverie search --mode keyword` must not wait for background embedding: it never starts it."""
    workspace.append_daily("the staging database runs on port 5433")
    probe = ("import sys; from core.cli import main; code = main(['search', sys.argv[1], 'staging', '--mode', "
             "'keyword']); print('loaded:', sorted(m for m in ('torch', 'sentence_transformers') if m in sys.modules)); "
             "sys.exit(code)")
    done = subprocess.run([sys.executable, "-c", probe, str(workspace.root)], capture_output=True, text=True,
                          cwd=ROOT, env=python_env(), timeout=180)
    assert done.returncode == 0, done.stderr
    assert "memory/" in done.stdout and "loaded: []" in done.stdout


def test_write_tools_on_a_read_only_workspace_say_why(workspace):
    import anyio

    from tests.support.mcp_client import mcp_client, text_of

    async def session():
        async with mcp_client(workspace.root, workspace.root.parent / "stderr.log") as client:
            appended = await client.call_tool("memory_append", {"text": "a fact"})
            progress = await client.call_tool("progress_update", {"goal": "ship it"})
            read = await client.call_tool("memory_get", {"path": "MEMORY.md", "end": 1})
            return appended, progress, read

    with read_only(workspace.root):
        appended, progress, read = anyio.run(session)
    for result in (appended, progress):
        assert result.is_error and "read-only" in text_of(result), text_of(result)
    assert not read.is_error and "# MEMORY" in text_of(read)
