"""`reverie models list|path`."""
from __future__ import annotations

import shutil

from tests.support.gguf import GEMMA, SMOL
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


def test_chat_streams_a_reply_and_can_use_a_schema(capsys, tmp_path):
    assert main(["models", "chat", "Name a fruit.", "--max-tokens", "6", "--temperature", "0"]) == 0
    captured = capsys.readouterr()
    assert captured.out.strip() and f"[{SMOL}:" in captured.err
    schema = tmp_path / "fruit.json"
    schema.write_text('{"type": "object", "properties": {"fruit": {"type": "string", "maxLength": 20}}, '
                      '"required": ["fruit"], "additionalProperties": false}')
    assert main(["models", "chat", "Name a fruit.", "--json-schema", str(schema), "--max-tokens", "30"]) == 0
    import json

    assert set(json.loads(capsys.readouterr().out)) == {"fruit"}


def test_the_backend_is_chosen_on_the_command_line(capsys):
    import argparse

    from core.config import ModelSettings
    from core.llm.cli_args import add_model_arguments, model_settings

    parser = argparse.ArgumentParser()
    add_model_arguments(parser)
    args = parser.parse_args(["--backend", "openai", "--base-url", "http://127.0.0.1:1234/v1", "--context", "4096"])
    chosen = model_settings(args, ModelSettings(server_model="qwen3"))
    assert (chosen.backend, chosen.base_url, chosen.context_length, chosen.server_model) == \
        ("openai", "http://127.0.0.1:1234/v1", 4096, "qwen3")
    assert main(["models", "chat", "hi", "--backend", "openai", "--base-url", "http://127.0.0.1:9/v1",
                 "--server-model", "x"]) == 2
    assert "no model server answers" in capsys.readouterr().err
