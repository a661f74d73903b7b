"""The benchmarks take the search modes by the names the view, the CLI and the JSON use (older ones too)."""
from __future__ import annotations

import argparse

import pytest

from core.bench import _evalkit as kit


@pytest.mark.parametrize("given, meant", [("keyword", "keyword"), ("meaning", "meaning"), ("hybrid", "hybrid"),
                                          ("fts", "keyword"), ("vector", "meaning"), ("Meaning", "meaning")])
def test_mode_names(given, meant):
    parser = argparse.ArgumentParser()
    kit.add_common_args(parser)
    assert parser.parse_args(["--mode", given]).mode == meant


def test_unknown_mode_is_a_usage_error(capsys):
    parser = argparse.ArgumentParser()
    kit.add_mode_arg(parser, default="keyword")
    assert parser.parse_args([]).mode == "keyword"
    with pytest.raises(SystemExit):
        parser.parse_args(["--mode", "psychic"])
    assert "psychic" in capsys.readouterr().err
