"""Every caller-given path is confined to the workspace: .., absolute paths, symlinks out."""
from __future__ import annotations

import os

import pytest

from core.errors import PathEscapeError
from core.store.paths import safe_id


@pytest.mark.parametrize("bad", ["../outside.txt", "memory/../../outside.txt", "/etc/passwd", "..", "a\x00b", "",
                                 "memory/../../../../../../etc/shadow"])
def test_escapes_are_refused(workspace, bad):
    with pytest.raises(PathEscapeError):
        workspace.read(bad)


def test_absolute_path_inside_is_allowed(workspace):
    assert workspace.read(str(workspace.root / "MEMORY.md")).path == "MEMORY.md"


def test_symlink_pointing_out_is_refused(workspace, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret")
    os.symlink(secret, workspace.root / "memory" / "link.md")
    os.symlink(tmp_path, workspace.root / "dirlink")
    for rel in ("memory/link.md", "dirlink/secret.txt"):
        with pytest.raises(PathEscapeError):
            workspace.read(rel)


def test_symlink_inside_is_allowed(workspace):
    os.symlink(workspace.root / "MEMORY.md", workspace.root / "memory" / "alias.md")
    assert "MEMORY" in workspace.read("memory/alias.md").text


@pytest.mark.parametrize("bad", ["../x", "a/b", "", ".hidden", "x" * 200, "a..b"])
def test_ids_used_as_file_names_are_safe(bad):
    with pytest.raises(PathEscapeError):
        safe_id(bad)


def test_non_utf8_file_reads_with_replacement(workspace):
    (workspace.root / "memory" / "2026-01-01.md").write_bytes(b"- caf\xe9 au lait\n")
    snap = workspace.read("memory/2026-01-01.md")
    assert snap.text == "- caf\ufffd au lait\n" and snap.replaced_bytes == 1
