"""`reverie models list|path`."""
from __future__ import annotations

import shutil

from conftest import GEMMA, SMOL
from core.cli import main


def test_list_shows_every_model_with_presence_and_fit(capsys):
    assert main(["models", "list", "--context", "4096"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("usable memory here:") and "4096-token context" in out[0]
    rows = {line.split()[0]: line.split() for line in out[2:]}
    assert {SMOL, GEMMA, "qwen3-4b-instruct-2507-q4_k_m", "qwen3-30b-a3b-instruct-2507-q4_k_m",
            "gemma3-4b-it-q4_k_m", "gemma3-12b-it-q4_k_m"} <= set(rows)
    assert rows[SMOL][4:6] == ["yes", "yes"], "bundled: here, and it fits"   # sizes are "94 MiB": two words
    assert rows["gemma3-12b-it-q4_k_m"][4] == "no"


def test_path_prints_a_local_file_and_errors_name_the_problem(capsys, tmp_path, smol_path):
    assert main(["models", "path", SMOL]) == 0
    assert capsys.readouterr().out.strip() == str(smol_path)
    assert main(["models", "path", "no-such-model"]) == 2
    assert "not a catalog id" in capsys.readouterr().err
    broken = tmp_path / "broken.gguf"
    shutil.copyfile(smol_path, broken)
    with broken.open("r+b") as handle:
        handle.truncate(1 << 20)
    assert main(["models", "path", str(broken)]) == 2
    err = capsys.readouterr().err
    assert str(broken) in err and "truncated" in err
