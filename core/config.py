"""Settings and their defaults (where each default comes from: docs/architecture.md, "Defaults").

Stored as TOML in `<workspace>/.reverie/config.toml`; any value can be
overridden per call with `settings.replace(section, **values)`.

A setting this version does not know (a typo, or one from a newer version) is not
fatal when the file is read: it is ignored with a ConfigWarning, so a stray key never
locks a person or an agent out of their memory. A known setting with a wrong value
(a word that is not one of its choices, text where a number goes) is a ConfigError.
"""
from __future__ import annotations

import dataclasses
import tomllib
import warnings
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from core.errors import ConfigError


class ConfigWarning(UserWarning):
    """A setting in config.toml was ignored (the CLI prints these as `reverie: warning: ...`)."""


@dataclass(frozen=True)
class CompactionSettings:
    trigger_messages: int = 50
    trigger_tokens: int = 80_000
    keep_messages: int = 20
    keep_tokens: int = 0            # > 0: keep a token budget scanned from the end instead
    flush_before: bool = True
    offload_before: bool = True
    summary_max_tokens: int = 700
    flush_max_tokens: int = 400
    input_tokens: int = 0          # > 0: cap on the span shown to the model per summary/flush call


@dataclass(frozen=True)
class TruncationSettings:
    enabled: bool = False
    trigger_messages: int = 25
    trigger_tokens: int = 40_000
    keep_messages: int = 20
    max_arg_chars: int = 2_000
    marker: str = "...(argument truncated)"


@dataclass(frozen=True)
class EvictionSettings:
    threshold_tokens: int = 8_000   # tier 1: "tool returns > 8K tokens? write to a file" (the model's own count)
    threshold_chars: int = 0        # > 0: also evict over this many characters, whatever the tokens
    preview_chars: int = 2_000
    exempt_tools: tuple[str, ...] = (
        "read_file", "write_file", "edit_file", "grep_files", "glob_files", "list_files",
        "memory_search", "memory_get", "session_search",
    )
    delayed_fraction: float = 0.8   # tier 2 at 80% of the usable window
    delayed_min_chars: int = 2_000  # what counts as "bulky" for tier 2


@dataclass(frozen=True)
class OverflowSettings:
    enabled: bool = True
    patterns: tuple[str, ...] = (
        "context_length_exceeded", "context length", "maximum context", "token limit", "too many tokens",
    )


@dataclass(frozen=True)
class MemorySettings:
    memory_md_tokens: int = 4_000
    memory_md_chars_hint: int = 16_000   # what the model is told
    session_cache_size: int = 10
    near_duplicate_cosine: float = 0.95
    anchor_every_steps: int = 5
    mask_secrets: bool = True            # agents read secret values as [redacted <kind>] (MCP reads and resources)


@dataclass(frozen=True)
class DreamSettings:
    gate_hours: float = 24.0
    gate_sessions: int = 5
    maintenance_hours: float = 6.0
    early_dream_min_minutes: float = 30.0
    idle_minutes: float = 10.0
    max_drop_fraction: float = 0.25
    auto_apply_safe: bool = False
    relevance_threshold: float = 0.6    # Prune strategy 3: bullets under this cosine with recent work are
    relevance_days: float = 7.0         # proposed (held) as drops; 0 turns it off; "recent" = these days
    relevance_min_age_days: float = 30.0    # a bullet younger than this is never suggested: not stale yet
    relevance_max_suggestions: int = 5      # per dream, the least related first: a review stays short
    max_input_bytes: int = 10_000_000       # a MEMORY.md or new daily log over this: the dream refuses, saying so
    max_memory_lines: int = 5_000           # a MEMORY.md longer than this: the dream refuses (it compares every pair)
    judgment: str = "both"                  # "rules" | "learned" | "both" (rules, and the learned kind head holds back what it is sure is not durable)
    arbiter: str = ""                       # with "both": "off" | "kinds" | "duplicates" | "all": where the learned arbiter decides ("" = the shipped default, pools.py)
    max_new_facts: int = 20                 # new bullets proposed per dream, the best supported; the rest stay in the logs


@dataclass(frozen=True)
class RestartSettings:
    """Tier 4 fresh-restart triggers besides "compaction cannot fit the window" (core/harness/triggers.py)."""
    drift_steps: int = 5            # drift: none of the last N steps shares meaning with the anchor's goal
    drift_threshold: float = 0.2    # ... cosine (all-MiniLM-L6-v2) under which a step does not
    error_repeats: int = 3          # pollution: the same error this many times
    max_hours: float = 2.0          # elapsed: the task has run longer than this since its start or last restart


@dataclass(frozen=True)
class RetentionSettings:
    archive_after_days: int = 90
    prune_sessions_after_days: int = 180


@dataclass(frozen=True)
class ModelSettings:
    model: str = "smollm2-135m-instruct-q4_1"   # catalog id or a GGUF path
    backend: str = "local"                      # "local" (llama.cpp worker) | "openai" (a server the person runs)
    base_url: str = "http://127.0.0.1:8080/v1"
    server_model: str = ""
    api_key: str = ""
    context_length: int = 8192
    n_gpu_layers: int | None = None             # None: -1 on macOS arm64, 0 elsewhere
    idle_unload_s: float = 300.0
    request_timeout_s: float = 120.0
    n_threads: int = 0                          # 0: the physical cores (performance cores on Apple Silicon)
    cancel_deadline_s: float = 2.0              # a cancelled worker that has not stopped by then is killed
    json_mode: str = ""                         # "" = the catalog's measured choice; "grammar" | "retry"
    nice: int = 0                               # the model process's niceness, 0-19 (the desktop app uses >= 5)


@dataclass(frozen=True)
class SearchSettings:
    default_mode: str = "hybrid"
    embedding_model: str = ""                   # "" = bundled all-MiniLM-L6-v2; else a sentence-transformers path
    recency_half_life_days: float = 0.0         # 0 = no recency weighting
    large_file_bytes: int = 10_000_000          # a file over this is indexed in blocks, keyword search only


# Settings whose value is one of a few words ("" = the default choice where allowed).
CHOICES = {
    ("search", "default_mode"): ("hybrid", "keyword", "meaning", "fts", "vector", "semantic"),  # the last three: older names
    ("model", "backend"): ("local", "openai"),
    ("model", "json_mode"): ("", "grammar", "retry"),
    ("dream", "judgment"): ("rules", "learned", "both"),
    ("dream", "arbiter"): ("", "off", "kinds", "duplicates", "all"),
}

SECTIONS = {
    "compaction": CompactionSettings,
    "truncation": TruncationSettings,
    "eviction": EvictionSettings,
    "overflow": OverflowSettings,
    "memory": MemorySettings,
    "dream": DreamSettings,
    "retention": RetentionSettings,
    "restart": RestartSettings,
    "model": ModelSettings,
    "search": SearchSettings,
}


@dataclass(frozen=True)
class Settings:
    compaction: CompactionSettings = field(default_factory=CompactionSettings)
    truncation: TruncationSettings = field(default_factory=TruncationSettings)
    eviction: EvictionSettings = field(default_factory=EvictionSettings)
    overflow: OverflowSettings = field(default_factory=OverflowSettings)
    memory: MemorySettings = field(default_factory=MemorySettings)
    dream: DreamSettings = field(default_factory=DreamSettings)
    retention: RetentionSettings = field(default_factory=RetentionSettings)
    restart: RestartSettings = field(default_factory=RestartSettings)
    model: ModelSettings = field(default_factory=ModelSettings)
    search: SearchSettings = field(default_factory=SearchSettings)

    def replace(self, section: str, **values: Any) -> "Settings":
        """A copy with some values of one section changed (type-checked)."""
        current = getattr(self, section)
        return dataclasses.replace(self, **{section: _build(section, {**dataclasses.asdict(current), **values})})

    def to_dict(self) -> dict[str, dict[str, Any]]:
        return {name: _plain(dataclasses.asdict(getattr(self, name))) for name in SECTIONS}

    @classmethod
    def from_dict(cls, data: dict[str, Any], *, lenient: bool = False) -> "Settings":
        """Settings from parsed TOML. Unknown sections and keys raise ConfigError, or with `lenient`
        (reading a file) are left out with a ConfigWarning each."""
        unknown = set(data) - set(SECTIONS)
        if unknown:
            _unknown(f"unknown settings section(s): {', '.join(sorted(unknown))}", lenient)
        sections = {}
        for name in SECTIONS:
            values = data.get(name, {})
            if not isinstance(values, dict):
                raise ConfigError(f"[{name}] must be a table of settings, not {values!r}")
            extra = set(values) - {f.name for f in fields(SECTIONS[name])}
            if extra:
                _unknown(f"unknown setting(s) in [{name}]: {', '.join(sorted(extra))}", lenient)
                values = {k: v for k, v in values.items() if k not in extra}
            sections[name] = _build(name, values)
        return cls(**sections)


def _unknown(message: str, lenient: bool) -> None:
    if not lenient:
        raise ConfigError(message)
    warnings.warn(f"{message}; ignored (check the spelling in .reverie/config.toml)", ConfigWarning, stacklevel=3)


def _plain(values: dict[str, Any]) -> dict[str, Any]:
    # TOML has no tuples and no None: store lists, drop unset optionals.
    return {k: list(v) if isinstance(v, tuple) else v for k, v in values.items() if v is not None}


def _build(section: str, values: dict[str, Any]):
    klass = SECTIONS[section]
    known = {f.name: f for f in fields(klass)}
    unknown = set(values) - set(known)
    if unknown:
        raise ConfigError(f"unknown setting(s) in [{section}]: {', '.join(sorted(unknown))}")
    defaults = klass()
    cleaned = {}
    for name, value in values.items():
        default = getattr(defaults, name)
        if isinstance(default, tuple):
            value = tuple(value)
        elif isinstance(default, bool):
            if not isinstance(value, bool):
                raise ConfigError(f"[{section}] {name} must be true or false, not {value!r}")
        elif isinstance(default, (int, float)) and not isinstance(default, bool):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ConfigError(f"[{section}] {name} must be a number, not {value!r}")
            if value < 0:
                raise ConfigError(f"[{section}] {name} must not be negative ({value})")
            value = type(default)(value) if isinstance(default, float) else value
        elif isinstance(default, str) and not isinstance(value, str):
            raise ConfigError(f"[{section}] {name} must be text, not {value!r}")
        choices = CHOICES.get((section, name))
        if choices is not None and value not in choices:
            raise ConfigError(f"[{section}] {name} must be one of {', '.join(repr(c) for c in choices if c)}, "
                              f"not {value!r}")
        cleaned[name] = value
    return klass(**cleaned)


def load_settings(path: Path) -> Settings:
    """Settings from a config.toml outside a workspace; defaults when the file does not exist. A
    workspace's own settings are read through core.store.private.read_settings (confined)."""
    if not path.exists():
        return Settings()
    try:
        return settings_from_toml(path.read_bytes(), path)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read ({exc.strerror or exc})") from exc


def settings_from_toml(data: bytes, where: Path | str) -> Settings:
    """Settings from the bytes of a config.toml (`where` names it in the error)."""
    try:
        parsed = tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{where}: not valid TOML ({exc}); fix or delete the file") from exc
    return Settings.from_dict(parsed, lenient=True)


def dump_settings(settings: Settings) -> str:
    import tomli_w

    return tomli_w.dumps(settings.to_dict())
