"""Structured output: JSON that conforms to a small schema, or a clear error.

Two ways to get it, chosen per model by measurement (models/catalog.toml,
`json_mode`; figures from `reverie bench llm`):
- "grammar": llama.cpp grammar-constrained decoding (with the engine's fast
  accept-check path), then validate: the grammar guarantees the syntax and
  the shape but not every keyword (numeric ranges, patterns), so a reply is
  still validated and retried;
- "retry": free decoding with the schema in the prompt, parse, validate,
  retry; the last attempt is grammar-constrained.
Either way `Completion.parsed` is a value that validates, or the call raises
StructuredOutputError (a ModelError, which pipelines treat as "no reply").
"""
from __future__ import annotations

import json
import re
from typing import Any

from core.errors import ModelError

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


class StructuredOutputError(ModelError):
    """The model gave no JSON reply that matches the schema within the allowed attempts."""


def validator(schema: dict):
    import jsonschema

    try:
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise ModelError(f"the JSON schema itself is invalid: {exc.message}") from exc
    return cls(schema)


def problems(schema_validator, value: Any) -> list[str]:
    return [f"{'/'.join(str(p) for p in error.absolute_path) or '(root)'}: {error.message}"
            for error in schema_validator.iter_errors(value)][:5]


def extract_json(text: str) -> Any:
    """The JSON value in a reply: the whole text, a fenced block, or the outermost {...} / [...]."""
    text = text.strip()
    candidates = [text]
    candidates += [m.group(1).strip() for m in _FENCE.finditer(text)]
    for opener, closer in (("{", "}"), ("[", "]")):
        start, end = text.find(opener), text.rfind(closer)
        if 0 <= start < end:
            candidates.append(text[start:end + 1])
    decoder = json.JSONDecoder()
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except ValueError:
            pass
        try:   # valid JSON followed by chatter
            value, _ = decoder.raw_decode(candidate)
            return value
        except ValueError:
            continue
    raise ValueError("no JSON value in the reply")


def schema_instruction(schema: dict) -> str:
    return ("Reply with only a JSON value (no prose, no code fence) that matches this JSON schema:\n"
            + json.dumps(schema, ensure_ascii=False, separators=(",", ":")))


def with_instruction(messages: list[dict], schema: dict, feedback: str = "") -> list[dict]:
    """The messages with the schema (and what was wrong last time) added to the last user turn."""
    extra = schema_instruction(schema) + (f"\nYour previous reply was rejected: {feedback}" if feedback else "")
    out = [dict(m) for m in messages]
    for message in reversed(out):
        if message.get("role") == "user":
            message["content"] = f"{message.get('content') or ''}\n\n{extra}".strip()
            return out
    return out + [{"role": "user", "content": extra}]


def check(text: str, schema_validator) -> tuple[Any, str]:
    """(value, "") when `text` holds JSON that validates, else (None, what is wrong)."""
    try:
        value = extract_json(text)
    except ValueError as exc:
        return None, str(exc)
    found = problems(schema_validator, value)
    return (value, "") if not found else (None, "; ".join(found))
