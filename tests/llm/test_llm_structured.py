"""Parsing and validating a model's JSON reply (the real models are in test_llm_local.py)."""
from __future__ import annotations

import pytest

from core.errors import ModelError
from core.llm.structured import check, extract_json, validator, with_instruction

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer", "maximum": 3}}, "required": ["n"]}


@pytest.mark.parametrize("text", ['{"n": 2}', '```json\n{"n": 2}\n```', 'Sure! Here it is: {"n": 2} Hope that helps.',
                                  '{"n": 2}\n\nExplanation: {braces} in prose'])
def test_json_is_found_in_what_small_models_write(text):
    assert extract_json(text) == {"n": 2}


def test_validation_names_the_problem():
    v = validator(SCHEMA)
    assert check('{"n": 1}', v) == ({"n": 1}, "")
    value, problem = check('{"n": 9}', v)
    assert value is None and problem.startswith("n: ") and "maximum" in problem
    assert check("no json here", v)[1] == "no JSON value in the reply"
    with pytest.raises(ModelError, match="schema itself"):
        validator({"type": 12})


def test_the_instruction_goes_into_the_last_user_turn_without_touching_the_callers_list():
    messages = [{"role": "system", "content": "S"}, {"role": "user", "content": "Q"}]
    out = with_instruction(messages, SCHEMA, feedback="n: 9 is greater than the maximum of 3")
    assert messages[1]["content"] == "Q"
    assert out[1]["content"].startswith("Q\n\nReply with only a JSON value") and "previous reply was rejected" in out[1]["content"]
    assert with_instruction([{"role": "system", "content": "S"}], SCHEMA)[-1]["role"] == "user"
