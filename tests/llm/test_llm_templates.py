"""Chat templates rendered exactly as each model family expects (no model needed)."""
from __future__ import annotations

import pytest

from core.errors import ModelError
from core.llm.templates import CHATML, GEMMA, ChatTemplate, normalize_messages, template_for

CHAT = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello."}, {"role": "user", "content": "Tea?"}]


def test_chatml():
    text = ChatTemplate(CHATML, name="chatml").render(CHAT)
    assert text == ("<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
                    "<|im_start|>assistant\nHello.<|im_end|>\n<|im_start|>user\nTea?<|im_end|>\n"
                    "<|im_start|>assistant\n")


def test_gemma_puts_the_system_text_in_the_first_user_turn():
    text = ChatTemplate(GEMMA, bos_token="<bos>", name="gemma").render(CHAT)
    assert text == ("<bos><start_of_turn>user\nBe brief.\n\nHi<end_of_turn>\n<start_of_turn>model\nHello.<end_of_turn>\n"
                    "<start_of_turn>user\nTea?<end_of_turn>\n<start_of_turn>model\n")


def test_gemma_without_a_system_message_and_starting_with_the_assistant():
    t = ChatTemplate(GEMMA, bos_token="<bos>", name="gemma")
    assert t.render([{"role": "user", "content": "Hi"}]) == "<bos><start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\n"
    text = t.render([{"role": "system", "content": "S"}, {"role": "assistant", "content": "A"}])
    assert text.startswith("<bos><start_of_turn>user\nS\n\n<end_of_turn>\n<start_of_turn>model\nA<end_of_turn>")


def test_tool_messages_and_empty_contents_become_plain_text():
    plain = normalize_messages([
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "function": {"name": "grep"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "3 hits"},
        {"role": "user", "content": [{"type": "text", "text": "and "}, {"type": "text", "text": "now?"}]},
    ])
    assert plain[0]["role"] == "assistant" and '"grep"' in plain[0]["content"]
    assert plain[1] == {"role": "user", "content": "[tool result c1]\n3 hits"}
    assert plain[2]["content"] == "and now?"


def test_template_choice_and_bad_input():
    assert template_for("gguf", "{{ x }}") == ("{{ x }}", "gguf")
    assert template_for("gguf", "")[1] == "chatml"
    assert template_for("gemma", "ignored")[1] == "gemma"
    with pytest.raises(ModelError):
        template_for("alpaca", "")
    with pytest.raises(ModelError, match="chat template cannot be read"):
        ChatTemplate("{% for %}")
    with pytest.raises(ModelError, match="role"):
        normalize_messages([{"content": "no role"}])
    refusing = ChatTemplate("{{ raise_exception('roles must alternate') }}")
    with pytest.raises(ModelError, match="roles must alternate"):
        refusing.render(CHAT)
